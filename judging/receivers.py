"""What the judging app does when other apps signal something."""

from __future__ import annotations

from typing import Any

from curation.models import ImportBatch
from judging.services.evaluator_runs import evaluator_runs_import
from judging.services.sample_score_runs import sample_score_runs_import


def keep_evaluations(
    sender: object, *, batch: ImportBatch, evaluations: list[Any], **kwargs: Any
) -> None:
    """A record import held ToolEmu evaluator files: they become runs, in its transaction."""
    evaluator_runs_import(batch=batch, evaluations=evaluations)


def keep_sample_scores(
    sender: object, *, batch: ImportBatch, scores: list[Any], **kwargs: Any
) -> None:
    """A record import held scored Inspect samples: their scores become runs, in its
    transaction."""
    sample_score_runs_import(batch=batch, scores=scores)
