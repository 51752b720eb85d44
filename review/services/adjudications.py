"""Reviewers settling a record's disagreements in their own terms: a final label for those about
safe and unsafe, a settled 0-3 score for scores that are far apart."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from curation.choices import SafetyLabel, ScoreScale
from curation.errors import DomainError
from curation.models import Project, Record
from curation.services.audit import audit_log
from review.models import Adjudication, Disagreement, ScoreAdjudication
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
    """Set `record`'s final label, and resolve the record's open disagreements about its label
    (every kind but scores far apart, which a settled score resolves).

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
        open_about_label = Disagreement.objects.filter(
            record=record, state=Disagreement.State.OPEN
        ).exclude(kind=Disagreement.Kind.SCORE_GAP)
        resolved = open_about_label.update(
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


def score_adjudication_create(
    *,
    actor: User,
    project: Project,
    record: Record,
    scores: dict[str, int],
    reason: str,
) -> list[ScoreAdjudication]:
    """Settle `record`'s score on each scale given (`{"safety": 1}`), and resolve its open
    "scores far apart" disagreement. The latest settled score of a scale is the record's final
    human score on it; earlier ones stay as its history."""
    if record.project_id != project.pk:
        raise DomainError("This record belongs to another project.")
    if not scores:
        raise DomainError("Choose the settled score of at least one scale.")
    for scale, score in scores.items():
        if scale not in ScoreScale.values:
            raise DomainError(f"Scores are {' or '.join(ScoreScale.values)} scores.")
        if score not in range(4):
            raise DomainError("A settled score is 0, 1, 2 or 3.")
    if not reason.strip():
        raise DomainError("Say why: the reason is kept with the settled score.")
    with transaction.atomic():
        # Detection takes the same lock: it cannot reopen what this resolves meanwhile.
        lock_project_for_detection(project.pk)
        settled = [
            ScoreAdjudication.objects.create(
                project=project,
                record=record,
                scale=scale,
                score=score,
                reason=reason.strip(),
                reviewer=actor,
            )
            for scale, score in sorted(scores.items())
        ]
        resolved = Disagreement.objects.filter(
            record=record, state=Disagreement.State.OPEN, kind=Disagreement.Kind.SCORE_GAP
        ).update(
            state=Disagreement.State.RESOLVED,
            resolved_at=settled[-1].created_at,
            updated_at=settled[-1].created_at,
        )
        audit_log(
            actor=actor,
            action="review.score_adjudication.created",
            project=project,
            obj=record,
            after={
                "settled_scores": dict(sorted(scores.items())),
                "reason": reason.strip(),
                "resolved_disagreements": resolved,
            },
        )
    return settled
