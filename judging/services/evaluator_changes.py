"""Corrected ToolEmu evaluations, taken: the verdict a manager chose to replace, replaced.

An import that meets an evaluation differing from the verdict its run holds keeps the new line
as a change of that verdict (evaluator_runs.py), listed with the import's other changes. When a
manager takes them (curation.services.record_changes sends verdict_changes_taken), each verdict
is read again from its new line, as an import would read it; keeping them leaves the verdicts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from curation.formats.toolemu import read_evaluation
from curation.models import ImportBatch, RecordChange
from curation.services.audit import audit_log
from judging.models import JudgeRun, Verdict
from judging.services.evaluator_runs import METRICS, evaluation_outcome
from judging.services.verdict_import import verdict_from_outcome
from judging.signals import verdicts_saved

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# What an evaluation decides of a verdict; the rest (tokens, latency) an import never has.
_READ_FIELDS = ("label", "score", "score_label", "analysis", "raw_output", "parse_status", "error")


def evaluator_changes_take(*, actor: User, batch: ImportBatch, changes: list[RecordChange]) -> None:
    """Replace the verdicts the changes name with their new evaluations, in the caller's
    transaction. A verdict deleted since (its run deleted) has nothing left to replace."""
    touched = []
    runs: dict[str, JudgeRun | None] = {}
    for change in changes:
        if change.verdict_of not in runs:
            runs[change.verdict_of] = _evaluator_run(batch, change.verdict_of)
        run = runs[change.verdict_of]
        verdict = None if run is None else run.verdicts.filter(record_id=change.record_id).first()
        if run is None or verdict is None:
            continue
        _protocol, scale, score_key = METRICS[run.judge_snapshot["metric"]]
        evaluation = read_evaluation(orjson.loads(change.raw), raw=change.raw)
        new = verdict_from_outcome(
            verdict.record_id, evaluation_outcome(evaluation, scale, score_key), run=run
        )
        before = {name: getattr(verdict, name) for name in ("label", "score", "parse_status")}
        for name in _READ_FIELDS:
            setattr(verdict, name, getattr(new, name))
        verdict.save(update_fields=list(_READ_FIELDS))
        audit_log(
            actor=actor,
            action="judging.verdict.changed",
            project=batch.project,
            obj=run,
            before=before,
            after={
                "record": verdict.record_id,
                "import": batch.pk,
                "label": verdict.label,
                "score": verdict.score,
                "parse_status": verdict.parse_status,
                "fields": change.fields,
            },
        )
        touched.append(verdict.record_id)
    for run in runs.values():
        if run is not None:
            _recount(run)
    if touched:
        verdicts_saved.send(sender=JudgeRun, project_id=batch.project_id, record_ids=touched)


def _evaluator_run(batch: ImportBatch, name: str) -> JudgeRun | None:
    # Runs imported from evaluator files say their metric; a run imported by hand under the
    # same name does not.
    return (
        JudgeRun.objects.select_for_update()
        .filter(
            project_id=batch.project_id,
            source=JudgeRun.Source.IMPORTED,
            name=name,
            judge_snapshot__metric__in=list(METRICS),
        )
        .order_by("pk")
        .first()
    )


def _recount(run: JudgeRun) -> None:
    statuses = run.verdicts.values_list("parse_status", flat=True)
    run.valid_count = sum(status == Verdict.Parse.VALID for status in statuses)
    run.invalid_count = sum(status == Verdict.Parse.INVALID for status in statuses)
    run.save(update_fields=["valid_count", "invalid_count"])
