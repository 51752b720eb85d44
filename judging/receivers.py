"""What the judging app does when other apps signal something."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curation.models import ImportBatch, Project, RecordChange
from judging.models import Judge, JudgeRun
from judging.services.evaluator_changes import evaluator_changes_take
from judging.services.evaluator_runs import evaluator_runs_import
from judging.services.sample_score_runs import sample_score_runs_import

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def keep_evaluations(
    sender: object, *, batch: ImportBatch, evaluations: list[Any], **kwargs: Any
) -> None:
    """A record import held ToolEmu evaluator files: they become runs, in its transaction."""
    evaluator_runs_import(batch=batch, evaluations=evaluations)


def take_verdict_changes(
    sender: object, *, actor: User, batch: ImportBatch, changes: list[RecordChange], **kwargs: Any
) -> None:
    """A manager took an import's changes, some of them corrected evaluations: in their
    transaction, the verdicts become what the new evaluations say."""
    evaluator_changes_take(actor=actor, batch=batch, changes=changes)


def keep_sample_scores(
    sender: object, *, batch: ImportBatch, scores: list[Any], **kwargs: Any
) -> None:
    """A record import held scored Inspect samples: their scores become runs, in its
    transaction."""
    sample_score_runs_import(batch=batch, scores=scores)


def clear_judge_holds(sender: object, *, project: Project, **kwargs: Any) -> None:
    """The project is being deleted: let its judges and prompt templates go by cascade, which
    runs (holding their judge) and judges (holding their template) would stop. Connections are
    the site's and stay."""
    JudgeRun.objects.filter(project=project).update(judge=None)
    Judge.objects.filter(project=project).update(template=None)
