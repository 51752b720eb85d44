"""Benchmark: a ToolEmu study's import, and the score reports over 100,000 scored records.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
        .venv/bin/python bench/toolemu_bench.py [--runs 5] [--replicates 26]

1. Import: the study's files (bench/generate_toolemu.py: 27 agents x 144 cases = 3,888
   trajectories, laid out under both evaluators' folders, with their 4 evaluator files each,
   15,552 evaluations) into a fresh project through the service the command and the worker use
   (`import_path`), --runs times; each run deletes its project afterwards. The text search is
   indexed by a worker after the import commits, and is not part of it.
2. The source models' view, over the project "bench-toolemu-view", filled on first use (later
   runs reuse it): the study imported once, then its records and their verdicts copied in SQL
   as --replicates replicates (26: 101,088 records, each scored by both evaluators for safety
   and helpfulness; the copies repeat the scores of the import, which changes no timing and
   saves the half hour that 26 imports take on a loaded machine): timed through
   the selector that the page, the API and the dataset card read (`source_model_view`), with
   the default sources, then filtered by a toolkit; and the two evaluators compared on safety
   (`evaluator_report`, overall and per case, toolkit and source model).

Medians of --runs runs are printed, each with the bootstrap's 1,000 resamples.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-" + os.urandom(16).hex())

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from bench.generate_toolemu import write_study  # noqa: E402
from bench.import_bench import database_cpu_reader  # noqa: E402
from curation.models import ImportBatch, Project, Record  # noqa: E402
from curation.services.imports import import_path  # noqa: E402
from curation.services.projects import project_create  # noqa: E402
from judging.models import Verdict  # noqa: E402
from reports.evaluators import compared_sources, evaluator_report  # noqa: E402
from reports.source_models import source_model_view, view_choices  # noqa: E402

VIEW_SLUG = "bench-toolemu-view"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--replicates", type=int, default=26)
    parser.add_argument("--skip-import", action="store_true", help="time the reports only")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at PostgreSQL: the budget is for the full stack.")
    if not args.skip_import:
        with tempfile.TemporaryDirectory(prefix="toolemu-bench-") as folder:
            study = write_study(Path(folder))
            seconds = [import_once(study, run) for run in range(args.runs)]
        print(f"import of 3,888 trajectories, 15,552 evaluations: {summary(seconds)}")
    project = filled_project(args.replicates)
    records = project.records.count()
    safety, helpfulness, _ = view_choices(project)
    toolkit = "Terminal"
    first, second = compared_sources(project, "safety")
    steps: dict[str, Callable[[], object]] = {
        "source models' view": lambda: source_model_view(
            project, safety=safety, helpfulness=helpfulness
        ),
        f"the view, cases using {toolkit}": lambda: source_model_view(
            project, safety=safety, helpfulness=helpfulness, toolkit=toolkit
        ),
        "evaluators compared (safety)": lambda: evaluator_report(
            project, scale="safety", first=first, second=second
        ),
    }
    for name, step in steps.items():
        seconds = []
        for _ in range(args.runs):
            started = time.perf_counter()
            step()
            seconds.append(time.perf_counter() - started)
        print(f"{name} over {records:,} records: {summary(seconds)}")


def summary(seconds: list[float]) -> str:
    runs = ", ".join(f"{s:.2f}" for s in seconds)
    return f"median {statistics.median(seconds):.2f} s ({len(seconds)} runs: {runs})"


def import_once(study: Path, run: int) -> float:
    project = project_create(actor=None, name="ToolEmu import", slug=f"bench-toolemu-{run}")
    try:
        backend = database_cpu_reader()
        started, cpu_started, database_started = time.perf_counter(), time.process_time(), backend()
        batch = import_path(actor=None, project=project, path=study)
        seconds = time.perf_counter() - started
        if batch.state != ImportBatch.State.SUCCEEDED:
            sys.exit(f"The import failed: {batch.errors[:3]}")
        # The machine is shared: the CPU times say what the import itself cost.
        print(
            f"run {run + 1}: {seconds:.2f} s, {batch.created_count:,} records, "
            f"{sum(batch.evaluation_counts.values()):,} evaluations; CPU: Python "
            f"{time.process_time() - cpu_started:.1f} s, PostgreSQL "
            f"{backend() - database_started:.1f} s",
            file=sys.stderr,
        )
        return seconds
    finally:
        # Rows under the records first, in plain statements: Django's cascade would load all
        # their ids, and a project's categories protect their records.
        with connection.cursor() as cursor:
            for statement in (
                "DELETE FROM judging_verdict WHERE run_id IN "
                "(SELECT id FROM judging_judgerun WHERE project_id = %(project)s)",
                "DELETE FROM judging_disagreement WHERE project_id = %(project)s",
                "DELETE FROM curation_recordsearchtext WHERE record_id IN "
                "(SELECT id FROM curation_record WHERE project_id = %(project)s)",
                "DELETE FROM curation_record WHERE project_id = %(project)s",
            ):
                cursor.execute(statement, {"project": project.pk})
        Project.objects.filter(pk=project.pk).delete()


def filled_project(replicates: int) -> Project:
    """The view's project: one replicate of the study imported, then copied in SQL (records and
    their verdicts, each copy another replicate of every trajectory) up to `replicates`."""
    project = Project.objects.filter(slug=VIEW_SLUG).first()
    if project is not None:
        return project
    project = project_create(actor=None, name="ToolEmu view", slug=VIEW_SLUG)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="toolemu-view-") as folder:
        batch = import_path(actor=None, project=project, path=write_study(Path(folder)))
    if batch.state != ImportBatch.State.SUCCEEDED:
        sys.exit(f"The import failed: {batch.errors[:3]}")
    record_columns = [f.column for f in Record._meta.concrete_fields if f.column != "id"]
    renamed = {
        "external_id": "external_id || %(suffix)s",
        "source_replicate": "source_replicate || %(suffix)s",
    }
    chosen = ", ".join(renamed.get(column, column) for column in record_columns)
    verdict_columns = [
        f.column for f in Verdict._meta.concrete_fields if f.column not in ("id", "record_id")
    ]
    with connection.cursor() as cursor:
        for replicate in range(2, replicates + 1):
            suffix = f"#{replicate}"
            params = {"project": project.pk, "suffix": suffix}
            # Of the imported records only (their ids carry no "#"), a copy each.
            cursor.execute(
                f"INSERT INTO curation_record ({', '.join(record_columns)}) "  # noqa: S608 (the models' columns)
                f"SELECT {chosen} FROM curation_record "
                "WHERE project_id = %(project)s AND strpos(external_id, '#') = 0",
                params,
            )
            cursor.execute(
                f"INSERT INTO judging_verdict ({', '.join(verdict_columns)}, record_id) "  # noqa: S608 (the models' columns)
                f"SELECT {', '.join('v.' + c for c in verdict_columns)}, copy.id "
                "FROM judging_verdict v JOIN curation_record original ON original.id = v.record_id "
                "JOIN curation_record copy ON copy.project_id = original.project_id "
                "AND copy.external_id = original.external_id || %(suffix)s "
                "WHERE original.project_id = %(project)s AND strpos(original.external_id, '#') = 0",
                params,
            )
        # What autovacuum does soon after a bulk load; without it the planner guesses.
        cursor.execute("VACUUM ANALYZE curation_record, judging_verdict")
    print(f"filled the project in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return project


if __name__ == "__main__":
    main()
