"""What a manager does to records chosen in the record list: start a judge run on them
(`judge_run_create(chosen=...)`), send them to the adjudication queue, ask for more labels
(annotation's `records_labels_request`). The page and the API both act through
`records_bulk_apply`, on the records ticked or on every record that matches the list's filters.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from django.db import models, transaction
from django.utils import timezone

from annotation.services.queue import records_labels_request
from curation.errors import DomainError
from curation.models import Project, Record
from curation.services.audit import audit_log
from hub.record_list import FILTERS, matching_record_ids
from judging.models import Judge, JudgeRun
from judging.services.runs import judge_run_create
from review.models import Disagreement

if TYPE_CHECKING:
    from django.contrib.auth.models import User

REQUESTED = Disagreement.Kind.REQUESTED


class BulkAction(models.TextChoices):
    JUDGE = "judge", "Start a judge run on them"
    ADJUDICATE = "adjudicate", "Send them to adjudication"
    MORE_LABELS = "more_labels", "Ask for more labels"


@dataclass(frozen=True)
class BulkOutcome:
    """What a bulk action did: to how many records, and the run it started, if any."""

    action: str
    # The records it applied to: those sent to adjudication skip the ones already waiting
    # there, and a SafePro judge's run those without a task.
    records: int
    more: int | None = None
    run: JudgeRun | None = None
    # Acting on all that match: how many records the filters matched.
    matched: int | None = None


def records_bulk_apply(
    *,
    actor: User,
    project: Project,
    action: str,
    record_ids: list[int] | None = None,
    matching: dict[str, Any] | None = None,
    judge: Judge | None = None,
    more: int | None = None,
) -> BulkOutcome:
    """Act on the project's records given by id, or on every record that matches the record
    list's filters `matching` (as RecordListForm cleans them), taken as they match when this
    runs: start a run of `judge`, send them to adjudication, or ask for `more` labels of each.

    Each action is audited as it always is (the run, or each record); acting on all that match
    also writes the filters and how many records they matched, which no record's event says.
    """
    if (record_ids is None) == (matching is None):
        raise ValueError("Give either the records' ids or the filters they match.")
    with transaction.atomic():
        if matching is None:
            # The check above leaves the records' ids given when the filters are not.
            ids = cast("list[int]", record_ids)
        else:
            ids = matching_record_ids(project, matching)
            if not ids:
                raise DomainError("No records match these filters.")
        outcome = _apply(
            actor=actor, project=project, action=action, ids=ids, judge=judge, more=more
        )
        if matching is not None:
            audit_log(
                actor=actor,
                action="judging.records.matching_acted_on",
                project=project,
                obj=outcome.run,
                after={
                    "action": action,
                    "filters": {name: matching[name] for name in FILTERS if matching.get(name)},
                    "matched": len(ids),
                    "records": outcome.records,
                },
            )
            outcome = replace(outcome, matched=len(ids))
    return outcome


def _apply(
    *,
    actor: User,
    project: Project,
    action: str,
    ids: list[int],
    judge: Judge | None,
    more: int | None,
) -> BulkOutcome:
    if action == BulkAction.JUDGE:
        if judge is None:
            raise DomainError("Choose the judge to run.")
        run = judge_run_create(actor=actor, project=project, judge=judge, chosen=ids)
        return BulkOutcome(action, run.total, run=run)
    if action == BulkAction.ADJUDICATE:
        sent = records_send_to_adjudication(actor=actor, project=project, record_ids=ids)
        return BulkOutcome(action, sent)
    if action == BulkAction.MORE_LABELS:
        if more is None:
            raise DomainError("Say how many more labels each record needs.")
        asked = records_labels_request(actor=actor, project=project, record_ids=ids, more=more)
        return BulkOutcome(action, asked, more=more)
    raise DomainError(f"No such action: {action}.")


def records_send_to_adjudication(*, actor: User, project: Project, record_ids: list[int]) -> int:
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
