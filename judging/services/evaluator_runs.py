"""ToolEmu evaluator files imported with their trajectories: one run per evaluator and metric.

A record import that holds evaluator files signals them (curation.signals.evaluations_imported)
inside its transaction, each evaluation already matched to its trajectory's record by line. Here
they become verdicts of runs named after the evaluator's model and the metric
("gpt-5-mini safe"), one run per name and project whatever the number of files: a study scores
each agent's trajectories in a file of their own (judging/services/imported_runs.py).
Importing again adds only the verdicts a run lacks, so a re-import adds nothing; an evaluation
that differs from the verdict the run has (a corrected score) is held as a change of that
verdict, for a manager to take or keep with the import's other changes (evaluator_changes.py).
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial
from typing import TYPE_CHECKING

import orjson

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
            outcome = partial(evaluation_outcome, evaluation, scale, score_key)
            by_run[(scored.evaluator, scored.metric)].append(
                ScoredRecord(
                    external_id,
                    scored.path,
                    outcome,
                    changed_fields=partial(evaluation_changed_fields, new_raw=evaluation.raw),
                    raw=evaluation.raw,
                )
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


def evaluation_changed_fields(stored_raw: str | None, new_raw: str) -> list[str]:
    """The fields of an evaluator's line that differ from those of the verdict's stored line;
    none when there is no stored line to compare (a trajectory met again in this import)."""
    if stored_raw is None:
        return []
    try:
        stored, new = orjson.loads(stored_raw), orjson.loads(new_raw)
    except orjson.JSONDecodeError:
        return [] if stored_raw == new_raw else ["line"]
    if not (isinstance(stored, dict) and isinstance(new, dict)):
        return [] if stored == new else ["line"]
    # `eval_id` numbers the lines of a file: where a line sits, not what it says.
    keys = (stored.keys() | new.keys()) - {"eval_id"}
    return sorted(key for key in keys if stored.get(key) != new.get(key))


def evaluation_outcome(evaluation: Evaluation, scale: Scale, score_key: str) -> Outcome:
    fields = dict(evaluation.fields)
    if fields.get(SCORE) is None and evaluation.scores.get(score_key) is not None:
        # ToolEmu parsed the score from the evaluator's answer already; it stands in for the
        # quantitative score when that field is empty.
        fields[SCORE] = evaluation.scores[score_key]
    return outcome_from_fields(fields, scale, raw_output=evaluation.raw)
