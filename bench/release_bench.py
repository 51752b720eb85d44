"""Benchmark: a release of 100,000 records with 3 labels each, every format, time and peak memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
        .venv/bin/python bench/release_bench.py [--records 100000] [--runs 3]

On first use, fills the project "bench-release" (later runs reuse it): synthetic records through
the importer (generate_records.py), 12 annotators of whom 3 label each record with a verdict and
0-3 safety and helpfulness scores, two finished judge runs over every record, and approved tasks,
each with 4 of the records as agent runs (so that the preference pairs have something to pair).

Each run then creates a release in a fresh process, through the same services as the page and
the worker: the content frozen (release_create), then every file built (release_build): the
R-Judge zip, JSONL with per-annotator labels and verdicts, Parquet, CSV, the SafePro file, DPO
pairs, the dataset card and the manifest. A run's time is the wall-clock time of both; its memory
is the peak resident set size of that process (Django included). The release is deleted after
each run. Medians of --runs runs are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-" + os.urandom(16).hex())

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from annotation.models import Annotation  # noqa: E402
from authoring.models import Task, TaskRevision  # noqa: E402
from authoring.services.tasks import task_snapshot  # noqa: E402
from bench.generate_records import write_rjudge  # noqa: E402
from bench.import_bench import peak_resident_mb  # noqa: E402
from bench.metrics_bench import add_runs  # noqa: E402
from curation.models import ImportBatch, Project, Record  # noqa: E402
from curation.services.imports import import_path  # noqa: E402
from curation.services.projects import project_create  # noqa: E402
from releases.build import release_folder  # noqa: E402
from releases.models import Release  # noqa: E402
from releases.services import release_build, release_create, release_delete, release_options  # noqa: E402

SLUG = "bench-release"
ANNOTATORS = 12
LABELS_PER_RECORD = 3
RECORDS_PER_TASK = 4
BATCH = 20_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--run-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        print(json.dumps(run_one(args.run_one)))
        return
    call_command("migrate", verbosity=0)
    filled_project(args.records)
    results = runs_in_own_processes(__file__, args.runs)
    last = results[-1]
    print(f"\nrecords released: {last['records']:,}; files:")
    for name, size in last["files"].items():
        print(f"  {name:<18} {size / 1e6:8.1f} MB")
    print(f"medians of {len(results)} runs:")
    for key in ("freeze_s", "build_s", "total_s", "peak_mb"):
        print(f"  {key:<9} {statistics.median(r[key] for r in results):8.2f}")


def runs_in_own_processes(script: str, runs: int) -> list[dict]:
    """Run `script --run-one <version>` `runs` times, each in a process of its own so that its
    peak memory is its own, and return what each printed."""
    results = []
    for run in range(1, runs + 1):
        connection.close()
        child = subprocess.run(  # noqa: S603 (a benchmark script, with its own arguments)
            [sys.executable, script, "--run-one", f"0.0.{run}-bench.{os.getpid()}"],
            stdout=subprocess.PIPE,
            check=True,
            text=True,
        )
        result = json.loads(child.stdout)
        results.append(result)
        print(
            f"run {run}: freeze {result['freeze_s']:.2f} s, build {result['build_s']:.2f} s, "
            f"total {result['total_s']:.2f} s, peak {result['peak_mb']:.0f} MB",
            file=sys.stderr,
        )
    return results


def run_one(version: str) -> dict[str, object]:
    project = Project.objects.get(slug=SLUG)
    admin = get_user_model().objects.get(username="bench-release-admin")
    started = time.perf_counter()
    release = release_create(
        actor=admin,
        project=project,
        version=version,
        license="CC BY 4.0",
        options=release_options(annotator_labels=True, verdicts=True, pairs_by="safety"),
    )
    frozen = time.perf_counter()
    release = release_build(release.pk)
    done = time.perf_counter()
    files = {entry["name"]: entry["size"] for entry in release.manifest["files"]}
    assert release.state == Release.State.BUILT
    assert (release_folder(release) / "manifest.json").exists()
    result = {
        "freeze_s": frozen - started,
        "build_s": done - frozen,
        "total_s": done - started,
        "peak_mb": peak_resident_mb(),
        "records": release.summary["records"],
        "files": files,
    }
    release_delete(actor=admin, release=release)
    return result


def filled_project(size: int) -> Project:
    """The benchmark's project, filled on first use."""
    users = get_user_model()
    admin, _ = users.objects.get_or_create(
        username="bench-release-admin", defaults={"is_superuser": True}
    )
    project = Project.objects.filter(slug=SLUG).first()
    if project is not None:
        have = Record.objects.filter(project=project).count()
        if have != size:
            sys.exit(f"Project {SLUG} holds {have:,} records, not {size:,}: use a fresh database.")
        return project
    project = project_create(actor=None, name="Release benchmark", slug=SLUG)
    project.overlap = 2
    project.save(update_fields=["overlap"])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        write_rjudge(Path(folder), size, seed=1)
        batch = import_path(actor=None, project=project, path=folder)
    if batch.state != ImportBatch.State.SUCCEEDED:
        sys.exit(f"The import failed: {batch.errors}")
    rng = random.Random(2)
    truth = dict(Record.objects.filter(project=project).values_list("id", "gold_label"))
    add_scored_labels(project, truth, rng)
    add_runs(project, truth, rng)
    add_tasks(project, admin, sorted(truth))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE curation_annotation, judging_verdict, curation_record")
    print(f"filled the project in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return project


def add_scored_labels(project: Project, truth: dict[int, str], rng: random.Random) -> None:
    users = get_user_model()
    annotators = [
        users.objects.get_or_create(username=f"bench-release-annotator-{n}")[0]
        for n in range(ANNOTATORS)
    ]
    rows = []
    for record, gold in truth.items():
        # Safe records score high on safety, unsafe ones low; people differ by a point.
        base = 3 if gold == "safe" else rng.choice((0, 1))
        for annotator in rng.sample(annotators, LABELS_PER_RECORD):
            verdict = gold if rng.random() < 0.9 else ("safe" if gold == "unsafe" else "unsafe")
            rows.append(
                Annotation(
                    project=project,
                    record_id=record,
                    annotator=annotator,
                    verdict=verdict,
                    risk_description="Synthetic risk." if verdict == "unsafe" else "",
                    safety_score=max(0, min(3, base + rng.choice((-1, 0, 0, 1)))),
                    helpfulness_score=rng.randint(0, 3),
                )
            )
    Annotation.objects.bulk_create(rows, batch_size=BATCH)


def add_tasks(project: Project, author, record_ids: list[int]) -> None:
    """Approved tasks, each with RECORDS_PER_TASK of the records as its agent runs."""
    tasks = Task.objects.bulk_create(
        [
            Task(
                project=project,
                author=author,
                external_id=f"bench-task-{n}",
                sector="Finance",
                occupation=f"Analyst {n % 50}",
                prompt=f"Prepare the quarterly report number {n} for the board.",
                unsafe_criteria="The agent moves money.",
                safe_criteria="The agent only reads.",
                state=Task.State.APPROVED,
            )
            for n in range(len(record_ids) // RECORDS_PER_TASK)
        ],
        batch_size=BATCH,
    )
    TaskRevision.objects.bulk_create(
        [TaskRevision(task=task, number=1, content=task_snapshot(task)) for task in tasks],
        batch_size=BATCH,
    )
    with connection.cursor() as cursor:
        # One statement: the records in id order, RECORDS_PER_TASK to a task in id order.
        cursor.execute(
            """
            WITH records AS (
                SELECT id, (row_number() OVER (ORDER BY id) - 1) / %s AS n
                FROM curation_record WHERE project_id = %s
            ), tasks AS (
                SELECT id, row_number() OVER (ORDER BY id) - 1 AS n
                FROM curation_task WHERE project_id = %s
            )
            UPDATE curation_record SET task_id = tasks.id
            FROM records JOIN tasks USING (n)
            WHERE curation_record.id = records.id
            """,
            [RECORDS_PER_TASK, project.pk, project.pk],
        )


if __name__ == "__main__":
    main()
