"""Reviewers settling a record's disagreements with its final label."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from curation.choices import SafetyLabel
from curation.errors import DomainError
from curation.models import Project, Record
from curation.services.audit import audit_log
from review.models import Adjudication, Disagreement
from review.selectors import ADJUDICATED, final_labels
from review.services.disagreements import lock_project_for_detection

if TYPE_CHECKING:
    from django.contrib.auth.models import User

FINAL_LABELS = (SafetyLabel.SAFE, SafetyLabel.UNSAFE)


def adjudication_create(
    *,
    actor: User,
    project: Project,
    record: Record,
    label: str,
    reason: str,
    risk_description: str = "",
) -> Adjudication:
    """Set `record`'s final label, and resolve every open disagreement of the record.

    The latest adjudication is the final label; earlier ones stay as its history. A disagreement
    it resolved opens again only if a label or verdict is added or changed afterwards.
    """
    if record.project_id != project.pk:
        raise DomainError("This record belongs to another project.")
    if label not in FINAL_LABELS:
        raise DomainError("A final label is safe or unsafe.")
    if not reason.strip():
        raise DomainError("Say why: the reason is kept with the final label.")
    with transaction.atomic():
        # Detection takes the same lock: it cannot reopen what this resolves meanwhile.
        lock_project_for_detection(project.pk)
        before = final_labels(project, [record.pk]).get(record.pk)
        adjudication = Adjudication(
            project=project,
            record=record,
            label=label,
            reason=reason.strip(),
            risk_description=risk_description.strip(),
            reviewer=actor,
        )
        adjudication.full_clean()
        adjudication.save()
        resolved = Disagreement.objects.filter(record=record, state=Disagreement.State.OPEN).update(
            state=Disagreement.State.RESOLVED,
            resolved_at=adjudication.created_at,
            updated_at=adjudication.created_at,
        )
        audit_log(
            actor=actor,
            action="judging.adjudication.created",
            project=project,
            obj=adjudication,
            before={"final_label": list(before) if before else None},
            after={
                "final_label": [label, ADJUDICATED],
                "reason": adjudication.reason,
                "risk_description": adjudication.risk_description,
                "resolved_disagreements": resolved,
            },
        )
    return adjudication
