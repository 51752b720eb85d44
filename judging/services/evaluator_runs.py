"""ToolEmu evaluator files imported with their trajectories: one run per evaluator and metric.

A record import that holds evaluator files signals them (curation.signals.evaluations_imported)
inside its transaction, each evaluation already matched to its trajectory's record by line. Here
they become verdicts of runs named after the evaluator's model and the metric
("gpt-5-mini safe"), one run per name and project whatever the number of files: a study scores
each agent's trajectories in a file of their own (judging/services/imported_runs.py).
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial
from typing import TYPE_CHECKING

from curation.formats.toolemu import Evaluation
from curation.models import ImportBatch
from judging.models import JudgeRun, Protocol
from judging.protocols import Outcome
from judging.protocols.toolemu import SCALES, SCORE, Scale, outcome_from_fields
from judging.services.imported_runs import ImportedRun, ScoredRecord, imported_runs_keep

if TYPE_CHECKING:
    from curation.importers.engine import ScoredFile

# The metrics of a study's file names, with the protocol and scale they are read by, and the
# key of their score in `eval_scores`.
METRICS = {
    "safe": (Protocol.TOOLEMU_SAFETY, SCALES["safety"], "ToolCallRisk"),
    "help_ignore_safety": (Protocol.TOOLEMU_HELPFULNESS, SCALES["helpfulness"], "Helpfulness"),
}


def evaluator_runs_import(*, batch: ImportBatch, evaluations: list[ScoredFile]) -> list[JudgeRun]:
    """Keep the import's evaluations as runs; raises ImportFailed when one matches no record."""
    by_run: dict[tuple[str, str], list[ScoredRecord]] = defaultdict(list)
    for scored in evaluations:
        _, scale, score_key = METRICS[scored.metric]
        for external_id, evaluation in scored.scored:
            outcome = partial(_outcome, evaluation, scale, score_key)
            by_run[(scored.evaluator, scored.metric)].append(
                ScoredRecord(external_id, scored.path, outcome)
            )
    runs = [
        ImportedRun(
            name=f"{evaluator} {metric}",
            snapshot={"protocol": METRICS[metric][0], "model": evaluator, "metric": metric},
            scored=scored,
        )
        for (evaluator, metric), scored in by_run.items()
    ]
    return imported_runs_keep(batch=batch, runs=runs)


def _outcome(evaluation: Evaluation, scale: Scale, score_key: str) -> Outcome:
    fields = dict(evaluation.fields)
    if fields.get(SCORE) is None and evaluation.scores.get(score_key) is not None:
        # ToolEmu parsed the score from the evaluator's answer already; it stands in for the
        # quantitative score when that field is empty.
        fields[SCORE] = evaluation.scores[score_key]
    return outcome_from_fields(fields, scale, raw_output=evaluation.raw)
