"""What a manager does to records chosen in the record list, besides starting a judge run
(`judge_run_create(chosen=...)`) and asking for more labels (annotation's
`records_labels_request`): sending them to the adjudication queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from curation.errors import DomainError
from curation.models import Project, Record
from curation.services.audit import audit_log
from judging.models import Disagreement

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

REQUESTED = Disagreement.Kind.REQUESTED


def records_send_to_adjudication(
    *, actor: AbstractBaseUser, project: Project, record_ids: list[int]
) -> int:
    """Open a "sent for adjudication" disagreement on each of these records of the project, so
    that the adjudication queue shows them until a reviewer settles them; return how many.

    A record sent before and settled since is opened again; one still open stays as it is.
    """
    records = list(
        Record.objects.filter(project=project, pk__in=record_ids).order_by("id").only("external_id")
    )
    if not records:
        raise DomainError("Choose the records to send to adjudication.")
    now = timezone.now()
    asked = [{"source": "manager", "name": actor.get_username(), "label": "asks for a decision"}]
    with transaction.atomic():
        already_open = set(
            Disagreement.objects.filter(
                record__in=records, kind=REQUESTED, state=Disagreement.State.OPEN
            ).values_list("record_id", flat=True)
        )
        sent = [record for record in records if record.pk not in already_open]
        Disagreement.objects.bulk_create(
            [
                Disagreement(
                    project=project,
                    record=record,
                    kind=REQUESTED,
                    labels=asked,
                    weight=1,
                    state=Disagreement.State.OPEN,
                    resolved_at=None,
                    created_at=now,
                    updated_at=now,
                )
                for record in sent
            ],
            update_conflicts=True,
            unique_fields=["record", "kind"],
            update_fields=["labels", "weight", "state", "resolved_at", "updated_at"],
        )
        for record in sent:
            audit_log(
                actor=actor,
                action="judging.record.sent_to_adjudication",
                project=project,
                obj=record,
            )
    return len(sent)
