"""Benchmark: disagreement detection and every metric over 100,000 records, 3 labels each, 2 runs.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
        .venv/bin/python bench/metrics_bench.py [--records 100000] [--runs 5]

On first use, fills the project "bench-metrics" (later runs reuse it): synthetic records
through the importer (generate_records.py), 12 annotators of whom 3 label each record, and two
finished judge runs over every record. Annotators are right 75 to 95% of the time and unsure
5% of it; the judges are right 85% and 75% of the time, with 2% and 5% invalid outputs and
0.5% errors. Then, in each run, in-process and through the same functions as the pages:

1. detection over every record, from scratch (the project's disagreements deleted first);
2. detection again, nothing having changed;
3. human agreement on verdicts: percent agreement, Fleiss, Krippendorff, Gwet, Cohen for each
   pair of annotators, each annotator against the consensus, with bootstrap intervals;
4. judge quality of both runs against the human consensus, overall and per category,
   scenario and attack type, with bootstrap intervals.

The budget is for 1 + 3 + 4 (detection and all metrics); medians of --runs runs are reported.
"""

from __future__ import annotations

import argparse
import os
import random
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

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402

from annotation.models import Annotation  # noqa: E402
from bench.generate_records import synthetic_verdicts, synthetic_votes, write_rjudge  # noqa: E402
from curation.models import ImportBatch, Project, Record  # noqa: E402
from curation.services.imports import import_path  # noqa: E402
from curation.services.projects import project_create  # noqa: E402
from judging.models import JudgeRun, Verdict  # noqa: E402
from reports import (  # noqa: E402
    agreement,
    quality,
)
from review.models import Disagreement  # noqa: E402
from review.services.disagreements import detect_disagreements  # noqa: E402

SLUG = "bench-metrics"
ANNOTATORS = 12
LABELS_PER_RECORD = 3
# (name, share right, share invalid, share errors)
JUDGES = (("judge A", 0.85, 0.02, 0.005), ("judge B", 0.75, 0.05, 0.005))
BATCH = 20_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at PostgreSQL: the budget is for the full stack.")
    project = filled_project(args.records)
    record_ids = list(Record.objects.filter(project=project).values_list("id", flat=True))
    run_ids = list(project.judge_runs.order_by("id").values_list("id", flat=True))
    steps = {
        "detection, from scratch": lambda: detect_disagreements(
            project_id=project.pk, record_ids=record_ids
        ),
        "detection, nothing changed": lambda: detect_disagreements(
            project_id=project.pk, record_ids=record_ids
        ),
        "human agreement": lambda: agreement.agreement_report(project, scale="verdict"),
        "judge quality, 2 runs": lambda: quality.quality_report(
            project, run_ids=run_ids, reference=quality.Reference.CONSENSUS
        ),
    }
    timings: dict[str, list[tuple[float, float, float]]] = {name: [] for name in steps}
    totals = []
    for run in range(1, args.runs + 1):
        Disagreement.objects.filter(project=project).delete()
        with connection.cursor() as cursor:
            # Runs start alike: no dead rows left by the previous run's deletion.
            cursor.execute("VACUUM ANALYZE judging_disagreement")
        for name, step in steps.items():
            timings[name].append(timed(step))
        budgeted = [timings[name][-1] for name in steps if name != "detection, nothing changed"]
        totals.append(tuple(sum(part) for part in zip(*budgeted, strict=True)))
        print(f"run {run}/{args.runs}: {totals[-1][0]:.2f} s", file=sys.stderr)
    disagreements = Disagreement.objects.filter(project=project).count()
    print(
        f"{len(record_ids):,} records, {Annotation.objects.filter(project=project).count():,} "
        f"labels, {len(run_ids)} runs, {disagreements:,} disagreements; medians of {args.runs} runs"
    )
    print(f"{'step':<28} {'wall':>7} {'CPU: Python':>12} {'CPU: PostgreSQL':>16}")
    for name, values in [*timings.items(), ("detection and all metrics", totals)]:
        wall, python, postgres = (statistics.median(v[i] for v in values) for i in range(3))
        print(f"{name:<28} {wall:6.2f}s {python:11.2f}s {postgres:15.2f}s")


def timed(step: Callable[[], object]) -> tuple[float, float, float]:
    """Wall-clock seconds of step(), and the CPU seconds of this process and of its database
    backend (read from /proc: the database runs on this machine)."""
    backend = Path(f"/proc/{backend_pid()}/stat")
    started = (time.perf_counter(), time.process_time(), cpu_seconds(backend))
    step()
    ended = (time.perf_counter(), time.process_time(), cpu_seconds(backend))
    wall, python, postgres = (end - start for end, start in zip(ended, started, strict=True))
    return wall, python, postgres


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def cpu_seconds(stat: Path) -> float:
    # utime and stime, the 14th and 15th fields, in clock ticks.
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def filled_project(size: int) -> Project:
    """The benchmark's project, filled on first use."""
    project = Project.objects.filter(slug=SLUG).first()
    if project is not None:
        have = Record.objects.filter(project=project).count()
        if have != size:
            sys.exit(f"Project {SLUG} holds {have:,} records, not {size:,}: use a fresh database.")
        return project
    project = project_create(actor=None, name="Metrics benchmark", slug=SLUG)
    project.overlap = LABELS_PER_RECORD
    project.save(update_fields=["overlap"])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        write_rjudge(Path(folder), size, seed=1)
        batch = import_path(actor=None, project=project, path=folder)
    if batch.state != ImportBatch.State.SUCCEEDED:
        sys.exit(f"The import failed: {batch.errors}")
    rng = random.Random(2)
    truth = dict(Record.objects.filter(project=project).values_list("id", "gold_label"))
    add_labels(project, truth, rng)
    add_runs(project, truth, rng)
    with connection.cursor() as cursor:
        # What autovacuum does soon after a bulk load; without it the planner guesses.
        cursor.execute("VACUUM ANALYZE curation_annotation, judging_verdict, curation_record")
    print(f"filled the project in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return project


def add_labels(project: Project, truth: dict[int, str], rng: random.Random) -> None:
    users = get_user_model()
    annotators = [
        users.objects.get_or_create(username=f"bench-annotator-{n}")[0].pk
        for n in range(ANNOTATORS)
    ]
    rows = [
        Annotation(project=project, record_id=record, annotator_id=annotator, verdict=verdict)
        for record, annotator, verdict in synthetic_votes(rng, truth, annotators, LABELS_PER_RECORD)
    ]
    Annotation.objects.bulk_create(rows, batch_size=BATCH)


def add_runs(project: Project, truth: dict[int, str], rng: random.Random) -> None:
    answers = {
        Verdict.Parse.ERROR: {"error": "timed out"},
        Verdict.Parse.INVALID: {"raw_output": "I cannot say."},
        Verdict.Parse.VALID: {},
    }
    for name, right, invalid, errors in JUDGES:
        run = JudgeRun.objects.create(
            project=project,
            name=name,
            judge_snapshot={"protocol": "rjudge"},
            state=JudgeRun.State.SUCCEEDED,
            total=len(truth),
        )
        rows = [
            Verdict(
                run=run,
                record_id=record,
                analysis="Synthetic.",
                parse_status=status,
                label=label,
                **answers[status],
            )
            for record, status, label in synthetic_verdicts(
                rng, truth, right=right, invalid=invalid, errors=errors
            )
        ]
        Verdict.objects.bulk_create(rows, batch_size=BATCH)


if __name__ == "__main__":
    main()
