"""Benchmark: importing N synthetic records, records per second and peak memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
        .venv/bin/python bench/import_bench.py [--records 100000] [--runs 3] [--format jsonl|rjudge]

Generates the records once (bench/generate_records.py) into a temporary folder, then imports
them --runs times, each run in a fresh process into a fresh, empty project through the same
service the command and the worker use (`import_path`). A run's time is the import's wall-clock
time; its memory is the peak resident set size of the importing process (Django included).
Medians of the runs are printed, with the CPU time of the importing process and of its PostgreSQL
backend (read from /proc when the database runs on this machine). Each run deletes its project
afterwards and vacuums the records' tables, so that every run starts from the same tables.
With DATABASE_URL=sqlite:///PATH (the embedded default; migrate it first), SQLite works inside
the importing process, whose CPU time then includes the database's; the import's own thread's
CPU time is printed apart from the process's (the rest is the thread that writes the rows), and
the call's time is until the records are searchable, with when they were stored beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Production settings (DEBUG off, so no query log grows in memory); the key signs nothing that
# outlives the run.
os.environ.setdefault("SECRET_KEY", "bench-only-" + os.urandom(16).hex())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--format", choices=("jsonl", "rjudge"), default="jsonl")
    parser.add_argument(
        "--no-search-indexing",
        action="store_true",
        help="time the import alone, without indexing the text for search afterwards",
    )
    parser.add_argument("--run-one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        print(json.dumps(run_one(args.run_one, index_search=not args.no_search_indexing)))
        return

    from generate_records import write_jsonl, write_rjudge

    with tempfile.TemporaryDirectory(prefix="import-bench-") as folder:
        writer = write_jsonl if args.format == "jsonl" else write_rjudge
        source = writer(Path(folder), args.records, seed=1)
        size = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
        print(f"{args.records:,} records, {args.format}, {size / 1e6:.0f} MB", file=sys.stderr)
        results = []
        for run in range(1, args.runs + 1):
            child = subprocess.run(  # noqa: S603 (this script, with its own arguments)
                [sys.executable, __file__, "--run-one", str(source)]
                + (["--no-search-indexing"] if args.no_search_indexing else []),
                stdout=subprocess.PIPE,
                text=True,
                check=True,
            )
            result = json.loads(child.stdout)
            results.append(result)
            print(
                f"run {run}: {result['seconds']:.2f} s, {result['rate']:,.0f} records/s, "
                f"stored after {result['stored_seconds']:.2f} s"
                + _searchable([result])
                + f", peak {result['peak_mb']:.0f} MB; CPU: Python {result['python_cpu']:.1f} s "
                f"(the importing thread {result['thread_cpu']:.1f} s), "
                f"PostgreSQL {result['database_cpu']:.1f} s, load {os.getloadavg()[0]:.1f}"
                + _indexing(", then search indexing", [result]),
                file=sys.stderr,
            )
    print(
        f"{args.records:,} records ({args.format}, {size / 1e6:.0f} MB), {args.runs} runs, "
        f"medians: {statistics.median(r['seconds'] for r in results):.2f} s, "
        f"{statistics.median(r['rate'] for r in results):,.0f} records/s, stored after "
        f"{statistics.median(r['stored_seconds'] for r in results):.2f} s"
        + _searchable(results)
        + ", "
        f"peak memory {statistics.median(r['peak_mb'] for r in results):.0f} MB; CPU: Python "
        f"{statistics.median(r['python_cpu'] for r in results):.1f} s (the importing thread "
        f"{statistics.median(r['thread_cpu'] for r in results):.1f} s), PostgreSQL "
        f"{statistics.median(r['database_cpu'] for r in results):.1f} s"
        + _indexing("; search indexing after the import", results)
    )


def _searchable(results: list[dict]) -> str:
    """When the imports' records were searchable, if the import made them so (SQLite)."""
    if any(r["searchable_seconds"] is None for r in results):
        return ""
    return f", searchable after {statistics.median(r['searchable_seconds'] for r in results):.2f} s"


def _indexing(label: str, results: list[dict]) -> str:
    """The median time the search indexing took, if it was run."""
    if results[0]["search_seconds"] is None:
        return ""
    return f"{label} {statistics.median(r['search_seconds'] for r in results):.1f} s"


def run_one(source: Path, *, index_search: bool) -> dict[str, float | None]:
    """Import `source` into a new project in this process; delete the project afterwards."""
    import django

    django.setup()
    from django.db import connection

    from curation.models import ImportBatch, Project
    from curation.services.imports import import_path
    from curation.services.projects import project_create
    from curation.services.search import search_index_update

    project = project_create(
        actor=None, name="Import benchmark", slug=f"bench-import-{os.getpid()}"
    )
    try:
        backend = database_cpu_reader()
        started, cpu_started, database_started = time.perf_counter(), time.process_time(), backend()
        thread_started, clock_started = time.thread_time(), time.time()
        batch = import_path(actor=None, project=project, path=source)
        seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
        thread_seconds = time.thread_time() - thread_started
        database_seconds = backend() - database_started
        batch.refresh_from_db()
        # On SQLite the call returns once the words are indexed too: when the batch was
        # marked finished (just before its records' commit) says when they were stored.
        stored_seconds = batch.finished_at.timestamp() - clock_started
        if batch.state != ImportBatch.State.SUCCEEDED:
            sys.exit(f"The import failed: {batch.errors[:3]}")
        peak_mb = peak_resident_mb()
        # The text search is indexed after the import commits (by a worker); timed apart.
        search_seconds = None
        if index_search:
            indexing_started = time.perf_counter()
            search_index_update(project_id=project.pk)
            search_seconds = time.perf_counter() - indexing_started
        return {
            "search_seconds": search_seconds,
            "seconds": seconds,
            "rate": batch.created_count / seconds,
            "stored_seconds": stored_seconds,
            "searchable_seconds": (
                None
                if batch.searchable_at is None
                else batch.searchable_at.timestamp() - clock_started
            ),
            "thread_cpu": thread_seconds,
            "peak_mb": peak_mb,
            "python_cpu": cpu_seconds,
            "database_cpu": database_seconds,
        }
    finally:
        # Records first, in plain statements: Django's cascade would load all their ids.
        with connection.cursor() as cursor:
            cursor.execute(
                "DELETE FROM curation_recordsearchtext WHERE record_id IN "
                "(SELECT id FROM curation_record WHERE project_id = %s)",
                [project.pk],
            )
            cursor.execute("DELETE FROM curation_record WHERE project_id = %s", [project.pk])
        Project.objects.filter(pk=project.pk).delete()
        if connection.vendor == "postgresql":
            # So that every run starts from the same tables: otherwise the next one would find
            # these rows' dead index entries in its way, and run beside autovacuum clearing them.
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE curation_record, curation_recordsearchtext")


def peak_resident_mb() -> float:
    """This process's peak resident set size.

    Read from /proc rather than getrusage: Linux carries ru_maxrss over an exec, so a child
    would report its parent's peak if that were higher.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def database_cpu_reader() -> Callable[[], float]:
    """CPU seconds used so far by this connection's PostgreSQL backend (NaN if not local).

    The machine is shared, so wall-clock time varies with what else runs; CPU time shows where
    the work is.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        # SQLite runs inside this process: its time is the Python process's.
        return lambda: math.nan
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        stat = Path(f"/proc/{cursor.fetchone()[0]}/stat")

    def read() -> float:
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            return math.nan
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    return read


if __name__ == "__main__":
    main()
