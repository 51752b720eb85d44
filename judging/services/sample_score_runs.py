"""Inspect samples' scores imported with their samples: one run per task and scorer.

A record import that holds Inspect logs signals their scores
(curation.signals.sample_scores_imported) inside its transaction, each with its sample's record.
Here they become verdicts of runs named after the task and the scorer ("agentharm
combined_scorer"), one per name and project whatever the number of logs, as ToolEmu's evaluator
files do (judging/services/imported_runs.py).

An Inspect score's value is of the scorer's own making: "C" or "I", a number, a list or a dict.
It is kept as it is, as the verdict's score label (its start) and raw output (the whole score),
its explanation as the analysis. Only a value that says "safe" or "unsafe" is a safety label:
the 0-3 scores of the studio's reports are ToolEmu's scales, which a scorer's 0 or 1 is not.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import orjson

from curation.choices import SafetyLabel
from curation.formats.inspect_log import SampleScore
from curation.models import ImportBatch
from judging.models import JudgeRun, Verdict
from judging.protocols import Outcome
from judging.services.imported_runs import ImportedRun, ScoredRecord, imported_runs_keep

if TYPE_CHECKING:
    from curation.importers.inspect_logs import ScorerScores

# The judge_snapshot protocol of these runs: no judge of the studio's ran them.
PROTOCOL = "inspect_scorer"
# The longest score label a verdict holds.
SCORE_LABEL_CHARS = 100


def sample_score_runs_import(*, batch: ImportBatch, scores: list[ScorerScores]) -> list[JudgeRun]:
    """Keep the import's scores as runs; raises ImportFailed when one matches no record."""
    runs = [
        ImportedRun(
            name=scorer_scores.name,
            snapshot={
                "protocol": PROTOCOL,
                "task": scorer_scores.task,
                "scorer": scorer_scores.scorer,
            },
            scored=[
                ScoredRecord(external_id, path, partial(score_outcome, score))
                for external_id, path, score in scorer_scores.scored
            ],
        )
        for scorer_scores in scores
    ]
    return imported_runs_keep(batch=batch, runs=runs)


def score_outcome(score: SampleScore) -> Outcome:
    value = score.value if isinstance(score.value, str) else orjson.dumps(score.value).decode()
    word = value.strip().lower()
    label = word if word in (SafetyLabel.SAFE, SafetyLabel.UNSAFE) else ""
    return Outcome(
        Verdict.Parse.VALID,
        label=label,
        score_label=value[:SCORE_LABEL_CHARS],
        analysis=score.explanation,
        raw_output=score.raw,
    )
