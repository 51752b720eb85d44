"""Benchmark: the record list's text search over 100,000 records, on PostgreSQL: indexing, and
each kind of search.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
        .venv/bin/python bench/search_bench.py [--runs 3] [--requests 50] [--no-indexing]

Uses the project of record_list_bench.py ("bench-records", filled on first use). Indexing: the
project's search rows are deleted, then search_index_update indexes every record again, as the
worker does after an import; wall-clock time, and the CPU time of this process and of the
PostgreSQL backends of its database (read from /proc: the database must be on this machine),
medians of --runs.
Searches: the record list page with each query, requested in-process as record_list_bench.py
does (production settings, logged in as a reviewer); the median of the runs' p50 and p95.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from django.conf import settings
from django.db import connection

# record_list_bench sets Django up as it is imported: it comes before the models.
from bench.processes import TICK, CpuMeter
from bench.record_list_bench import (
    configure_requests,
    filled_project,
    reviewer_client,
    time_case,
)
from curation.models import Project, RecordSearchText
from curation.services.search import search_index_update

# Each kind of query the search box reads, on words of the synthetic records.
SEARCHES = {
    "rare word": "4242",
    "common word": "password",
    "two words": "door open",
    "stem": "deleting",
    "phrase": '"door open"',
    "rare phrase": '"the agent user"',
    "left out": "door -password -token",
    "no match": "zebra",
    "punctuation": '{"',
    "id": "99999",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--no-indexing", action="store_true")
    parser.add_argument("--no-searches", action="store_true")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at PostgreSQL: the budget is for PostgreSQL's search.")
    configure_requests()
    project = filled_project(args.records)
    print(f"load average before: {' '.join(f'{n:.2f}' for n in os.getloadavg())}")
    if not args.no_indexing:
        report_indexing(project, args.runs)
    if not args.no_searches:
        report_searches(project, args)
    print(f"load average after: {' '.join(f'{n:.2f}' for n in os.getloadavg())}")


def report_indexing(project: Project, runs: int) -> None:
    timings = [index_again(project) for _ in range(runs)]
    for run, (wall, python, backend) in enumerate(timings, start=1):
        print(f"indexing run {run}: {wall:.1f} s, CPU Python {python:.1f} s, PG {backend:.1f} s")
    wall, python, backend = (statistics.median(values) for values in zip(*timings, strict=True))
    print(f"indexing, median: {wall:.1f} s, CPU Python {python:.1f} s, PG {backend:.1f} s")


def index_again(project: Project) -> tuple[float, float, float]:
    """(wall-clock, this process's CPU, its backends' CPU) seconds to index every record again."""
    # Statistics as the last ANALYZE left them (a full table): a VACUUM of the emptied table
    # would tell the planner it is empty, and it then picks nested loops that never end.
    RecordSearchText.objects.filter(project=project).delete()
    backends = BackendClock(settings.DATABASES["default"]["NAME"])
    python_before = time.process_time()
    started = time.perf_counter()
    with backends:
        search_index_update(project_id=project.pk)
    wall = time.perf_counter() - started
    python = time.process_time() - python_before
    with connection.cursor() as cursor:
        # What autovacuum does soon after a bulk load; without it the planner guesses.
        cursor.execute("VACUUM ANALYZE curation_recordsearchtext")
    return wall, python, backends.seconds


class BackendClock:
    """The CPU time of the PostgreSQL backends serving `database` (on this machine, so that
    /proc shows them) while the block runs. Sampled as it runs, since the indexing's own
    connections end with it; other engineers' backends, on other databases, are not counted.

    Reading all of /proc costs about 9 ms of CPU, which ten times a second was some 4 s of the
    indexing's measured Python CPU, taken from the cores it measures: /proc is read whole once
    a second, to find new backends, and in between only the backends found are read."""

    INTERVAL = 0.1
    SCAN_EVERY = 10

    def __init__(self, database: str) -> None:
        self.database = database
        self.start = self.read()
        self.latest = dict(self.start)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)

    def read(self) -> dict[int, float]:
        return CpuMeter(roots=[], database=self.database).now()[1]

    def sample(self) -> None:
        samples = 0
        while not self.done.wait(self.INTERVAL):
            samples += 1
            if samples % self.SCAN_EVERY == 0:
                self.latest.update(self.read())
            else:
                self.latest.update(cpu_seconds_of(self.latest))

    def __enter__(self) -> BackendClock:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.done.set()
        self.thread.join()
        self.latest.update(self.read())

    @property
    def seconds(self) -> float:
        return CpuMeter.database_seconds(self.start, self.latest)


def cpu_seconds_of(pids: Iterable[int]) -> dict[int, float]:
    """The CPU seconds of those of `pids` still running."""
    seconds = {}
    for pid in pids:
        try:
            # As processes.process_table reads it: utime, stime, cutime and cstime.
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[pid] = sum(int(value) for value in fields[11:15]) / TICK
    return seconds


def report_searches(project: Project, args: argparse.Namespace) -> None:
    with connection.cursor() as cursor:
        # A phrase reads the vectors of every record that holds its words: the searches depend
        # on whether the table holds only them (as a first indexing leaves it) or also the
        # space of rows deleted before (as indexing everything again leaves it until a VACUUM
        # FULL).
        table = RecordSearchText._meta.db_table
        cursor.execute(f"SELECT pg_size_pretty(pg_table_size('{table}')), count(*) FROM {table}")  # noqa: S608
        size, rows = cursor.fetchone()
    print(f"search table: {size} for {rows} records")
    client = reviewer_client(project)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in SEARCHES}
    for run in range(1, args.runs + 1):
        for name, query in SEARCHES.items():
            runs[name].append(time_case(client, project, {"q": query}, {}, args))
        print(f"search run {run}/{args.runs} done", file=sys.stderr)
    print(f"{'search':<14} {'query':<24} {'p50 ms':>8} {'p95 ms':>8}   (medians of the runs)")
    for name, query in SEARCHES.items():
        p50 = statistics.median(p for p, _ in runs[name])
        p95 = statistics.median(p for _, p in runs[name])
        print(f"{name:<14} {query:<24} {p50:>8.1f} {p95:>8.1f}")


if __name__ == "__main__":
    main()
