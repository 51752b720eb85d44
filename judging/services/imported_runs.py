"""Scores that came with an import's records, kept as runs: one per source of scores (a
ToolEmu evaluator and metric, an Inspect task's scorer) and project, whatever the number of
files. Importing again adds only the verdicts a run lacks, so a re-import adds nothing; where
a source says how a score changed (`changed_fields`), a score that differs from the verdict the
run holds is held as a change of that verdict (RecordChange with `verdict_of`), for a manager to
take or keep with the import's other changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from curation.importers import ImportFailed, Problem
from curation.models import ImportBatch, RecordChange
from curation.services.audit import audit_log
from judging.models import JudgeRun, Verdict
from judging.protocols import Outcome
from judging.services.verdict_import import verdict_from_outcome
from judging.signals import verdicts_saved


@dataclass(frozen=True)
class ScoredRecord:
    external_id: str
    # The file the score came from, to say where a score of no record was found.
    path: str
    # The verdict, read only for records the run has not judged yet.
    outcome: Callable[[], Outcome]
    # Given the raw output the run holds for the record, the fields in which this score differs
    # from it (none: the same); None for a source whose scores are not compared.
    changed_fields: Callable[[str | None], list[str]] | None = None
    # What a held change keeps, to be read again when a manager takes it.
    raw: str = ""


@dataclass(frozen=True)
class ImportedRun:
    name: str
    # What the run records of its source, and what finds it again on the next import.
    snapshot: dict[str, str]
    scored: list[ScoredRecord]


def imported_runs_keep(*, batch: ImportBatch, runs: list[ImportedRun]) -> list[JudgeRun]:
    """Keep the import's scores as runs; raises ImportFailed when one matches no record."""
    wanted = {item.external_id for run in runs for item in run.scored}
    record_of = dict(
        batch.project.records.filter(external_id__in=wanted).values_list("external_id", "id")
    )
    kept = []
    with transaction.atomic():
        for run in sorted(runs, key=lambda run: run.name):
            kept.append(_run_keep(batch, run, record_of))
        touched = sorted({record_of[external_id] for external_id in wanted})
        verdicts_saved.send(sender=JudgeRun, project_id=batch.project_id, record_ids=touched)
    return kept


def _run_keep(batch: ImportBatch, imported: ImportedRun, record_of: dict[str, int]) -> JudgeRun:
    now = timezone.now()
    # Found by what it holds, not by its name alone: a run imported by hand may have that name.
    run, created = JudgeRun.objects.select_for_update().get_or_create(
        project=batch.project,
        source=JudgeRun.Source.IMPORTED,
        name=imported.name[:200],
        **{f"judge_snapshot__{key}": value for key, value in imported.snapshot.items()},
        defaults={
            "judge_snapshot": imported.snapshot,
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
    for item in imported.scored:
        record_id = record_of.get(item.external_id)
        if record_id is None:
            # The import wrote every record it scored: a missing record is a defect.
            message = f"no record {item.external_id} to score"
            raise ImportFailed([Problem(item.path, None, "", message)])
        if record_id in judged:
            # The same record in several files, or imported before: scored once per run, and
            # compared once with what the run held.
            changed = (
                item.changed_fields(stored.pop(record_id, None)) if item.changed_fields else []
            )
            if changed:
                changes.append(
                    RecordChange(
                        batch=batch,
                        record_id=record_id,
                        verdict_of=run.name,
                        raw=item.raw,
                        fields=changed,
                    )
                )
            continue
        judged.add(record_id)
        verdicts.append(verdict_from_outcome(record_id, item.outcome(), run=run))
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
