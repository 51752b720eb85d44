"""ToolEmu evaluator files imported with their trajectories: one run per evaluator and metric.

A record import that holds evaluator files signals them (curation.signals.evaluations_imported)
inside its transaction, each evaluation already matched to its trajectory's record by line. Here
they become verdicts of runs named after the evaluator's model and the metric
("gpt-5-mini safe"), one run per name and project whatever the number of files: a study scores
each agent's trajectories in a file of their own. Importing again adds only the verdicts a run
lacks, so a re-import adds nothing; an evaluation that differs from the verdict the run has (a
corrected score) is held as a change of that verdict, for a manager to take or keep with the
import's other changes (evaluator_changes.py).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import orjson
from django.db import connection, transaction
from django.utils import timezone

from curation.formats.toolemu import Evaluation
from curation.importers import ImportFailed, Problem
from curation.models import ImportBatch, RecordChange
from curation.services.audit import audit_log
from judging.models import JudgeRun, Protocol, Verdict
from judging.protocols import Outcome
from judging.protocols.toolemu import SCALES, SCORE, Scale, outcome_from_fields
from judging.services.verdict_import import verdict_from_outcome
from judging.signals import verdicts_saved

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
    by_run: dict[tuple[str, str], list[tuple[str, Evaluation, str]]] = defaultdict(list)
    for scored in evaluations:
        for external_id, evaluation in scored.scored:
            by_run[(scored.evaluator, scored.metric)].append((external_id, evaluation, scored.path))
    wanted = {external_id for items in by_run.values() for external_id, _, _ in items}
    record_of = dict(
        batch.project.records.filter(external_id__in=wanted).values_list("external_id", "id")
    )
    runs = []
    with transaction.atomic():
        for (evaluator, metric), items in sorted(by_run.items()):
            runs.append(_run_import(batch, evaluator, metric, items, record_of))
        touched = sorted({record_of[external_id] for external_id in wanted})
        verdicts_saved.send(sender=JudgeRun, project_id=batch.project_id, record_ids=touched)
    return runs


def _run_import(
    batch: ImportBatch,
    evaluator: str,
    metric: str,
    items: list[tuple[str, Evaluation, str]],
    record_of: dict[str, int],
) -> JudgeRun:
    protocol, scale, score_key = METRICS[metric]
    name = f"{evaluator} {metric}"[:200]
    now = timezone.now()
    # Found by what it holds, not by its name alone: a run imported by hand may have that name.
    run, created = JudgeRun.objects.select_for_update().get_or_create(
        project=batch.project,
        source=JudgeRun.Source.IMPORTED,
        name=name,
        judge_snapshot__model=evaluator,
        judge_snapshot__metric=metric,
        defaults={
            "judge_snapshot": {"protocol": protocol, "model": evaluator, "metric": metric},
            "state": JudgeRun.State.SUCCEEDED,
            "started_at": now,
            "finished_at": now,
            "created_by": batch.created_by,
        },
    )
    # What the run said of each record before this import.
    stored = dict(run.verdicts.values_list("record_id", "raw_output"))
    judged = set(stored)
    verdicts = []
    changes = []
    for external_id, evaluation, path in items:
        record_id = record_of.get(external_id)
        if record_id is None:
            # The import wrote every trajectory it matched: a missing record is a defect.
            raise ImportFailed([Problem(path, None, "", f"no record {external_id} to score")])
        if record_id in judged:
            # The same trajectory in several files, or imported before: scored once per run.
            changed = evaluation_changed_fields(stored.pop(record_id, None), evaluation.raw)
            if changed:
                changes.append(
                    RecordChange(
                        batch=batch,
                        record_id=record_id,
                        verdict_of=run.name,
                        raw=evaluation.raw,
                        fields=changed,
                    )
                )
            continue
        judged.add(record_id)
        outcome = evaluation_outcome(evaluation, scale, score_key)
        verdicts.append(verdict_from_outcome(record_id, outcome, run=run))
    _verdicts_write(verdicts)
    RecordChange.objects.bulk_create(changes)
    run.record_ids = sorted(judged)
    run.total = len(judged)
    run.valid_count += sum(v.parse_status == Verdict.Parse.VALID for v in verdicts)
    run.invalid_count += sum(v.parse_status == Verdict.Parse.INVALID for v in verdicts)
    run.report = {"imports": [*run.report.get("imports", []), batch.pk]}
    run.save()
    audit_log(
        actor=batch.created_by,
        action="judging.evaluations.imported",
        project=batch.project,
        obj=run,
        after={
            "import": batch.pk,
            "created": created,
            "verdicts": len(verdicts),
            "changes_held": len(changes),
        },
    )
    return run


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


# The columns an imported verdict fills; the others keep their defaults.
_COLUMNS = (
    "run_id",
    "record_id",
    "label",
    "score",
    "score_label",
    "analysis",
    "raw_output",
    "parse_status",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "attempts",
    "error",
    "created_at",
)


def _verdicts_write(verdicts: list[Verdict]) -> None:
    """Insert the verdicts: through COPY on PostgreSQL, where a study's 15,000 evaluations with
    their long analyses took 8 s as INSERTs, most of it spent quoting the text into them."""
    if connection.vendor != "postgresql":
        Verdict.objects.bulk_create(verdicts)
        return
    now = timezone.now()
    statement = f"COPY {Verdict._meta.db_table} ({', '.join(_COLUMNS)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.copy(statement) as copy:
        for verdict in verdicts:
            copy.write_row(
                [now if name == "created_at" else getattr(verdict, name) for name in _COLUMNS]
            )
