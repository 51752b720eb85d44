"""Benchmark: the record list and its text search in a database of several large projects, as a
team's studio is after some weeks, on either stack (SQLite or PostgreSQL, by DATABASE_URL).

    DATABASE_URL=sqlite:////tmp/many.sqlite3 \\
        .venv/bin/python bench/many_projects_bench.py [--projects 5] [--records 50000] [--runs 3]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_many \\
        .venv/bin/python bench/many_projects_bench.py

On first use, fills --projects projects ("bench-many-1" ...) of --records synthetic records each
(generate_records.py, a seed per project), imported through the importer and indexed for search
as the worker does; later runs reuse them. The project measured is the one imported last, whose
records have the highest ids: the case where a plan that walks records in id order from the
start passes every other project's first. Then requests the record list in-process, logged in
as a reviewer (record_list_bench.py's client and timing): its first page, and each kind of text
search (search_bench.py's queries); the median of the runs' p50 and p95.

--compare-first-page times the statement of the list's first page as the record list sends it
against the same page asked for in plain id order with the project as an equality (the form
whose plan walks the primary key past the other projects' records), in this run, on the same
database.

On SQLite, --compare-fts5 also times the text search's own statement against the join order
SQLite's planner picked before (the project's search rows first, the match evaluated for each):
both in this run, on the same database, so that the ratio holds whatever else the machine does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from django.db import connection

from bench.generate_records import write_rjudge

# record_list_bench sets Django up as it is imported: it comes before the models.
from bench.record_list_bench import configure_requests, reviewer_client, time_case
from bench.search_bench import SEARCHES
from curation.models import ImportBatch, Project, Record
from curation.search_text import search_terms_of
from curation.selectors import fts5_statement, record_search
from curation.services.imports import import_path
from curation.services.projects import project_create
from curation.services.search import search_index_update

# The record list's page size.
PER_PAGE = 50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=5)
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--compare-first-page", action="store_true")
    parser.add_argument("--compare-fts5", action="store_true")
    args = parser.parse_args()
    configure_requests()
    projects = [filled(number, args.records) for number in range(1, args.projects + 1)]
    measured = projects[-1]
    print(
        f"{connection.vendor}: {args.projects} projects of {args.records:,} records; "
        f"measuring {measured.slug}"
    )
    print(f"load average before: {' '.join(f'{n:.2f}' for n in os.getloadavg())}")
    client = reviewer_client(measured)
    cases = {"first page": {}, **{f"search: {name}": {"q": q} for name, q in SEARCHES.items()}}
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, params in cases.items():
            results[name].append(time_case(client, measured, params, {}, args))
    for name, timings in results.items():
        p50 = statistics.median(t[0] for t in timings)
        p95 = statistics.median(t[1] for t in timings)
        print(f"{name:<28} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")
    if args.compare_first_page:
        compare_first_page(measured, args)
    if args.compare_fts5:
        compare_fts5(measured, args)
    print(f"load average after: {' '.join(f'{n:.2f}' for n in os.getloadavg())}")


def filled(number: int, size: int) -> Project:
    """Project number `number`, filled with `size` records and indexed on first use."""
    slug = f"bench-many-{number}"
    project = Project.objects.filter(slug=slug).first()
    if project is not None:
        return project
    project = project_create(actor=None, name=f"Many projects {number}", slug=slug)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        write_rjudge(Path(folder), size, seed=number)
        batch = import_path(actor=None, project=project, path=folder)
    if batch.state != ImportBatch.State.SUCCEEDED:
        sys.exit(f"The import failed: {batch.errors}")
    search_index_update(project_id=project.pk)
    print(f"{slug}: {size:,} records imported and indexed in {time.perf_counter() - started:.0f} s")
    return project


def compare_first_page(project: Project, args: argparse.Namespace) -> None:
    """The first page's ids as the record list asks for them, and in plain id order."""
    page = record_search(project).values_list("id", flat=True)[:PER_PAGE]
    statement, parameters = page.query.sql_with_params()
    plain = Record.objects.filter(project=project).order_by("id").values_list("id", flat=True)
    plain_statement, plain_parameters = plain[:PER_PAGE].query.sql_with_params()
    now = [timed(statement, list(parameters), args) for _ in range(args.runs)]
    then = [timed(plain_statement, list(plain_parameters), args) for _ in range(args.runs)]
    print(
        "first page's ids (p50 / p95 ms): as the list asks"
        f" {statistics.median(t[0] for t in now):.2f} / {statistics.median(t[1] for t in now):.2f}"
        f" | project as an equality, id order {statistics.median(t[0] for t in then):.2f} /"
        f" {statistics.median(t[1] for t in then):.2f}"
    )


def compare_fts5(project: Project, args: argparse.Namespace) -> None:
    """The search statement as it is, and with the join order the planner chose before."""
    if connection.vendor != "sqlite":
        sys.exit("--compare-fts5 is for SQLite.")
    print("SQLite's search statement alone (p50 / p95 ms): as it is | project's rows first")
    for name, query in SEARCHES.items():
        terms = search_terms_of(query)
        if not terms.required:
            continue  # nothing to match (punctuation alone): the search asks no index
        statement, parameters = fts5_statement(project, terms)
        before = statement.replace(" CROSS JOIN ", " JOIN ")
        now = [timed(statement, parameters, args) for _ in range(args.runs)]
        then = [timed(before, parameters, args) for _ in range(args.runs)]
        print(
            f"{name:<16} {statistics.median(t[0] for t in now):8.1f} /"
            f" {statistics.median(t[1] for t in now):8.1f}  |"
            f" {statistics.median(t[0] for t in then):8.1f} /"
            f" {statistics.median(t[1] for t in then):8.1f}"
        )


def timed(
    statement: str, parameters: list[object], args: argparse.Namespace
) -> tuple[float, float]:
    timings = []
    with connection.cursor() as cursor:
        for attempt in range(args.warmup + args.requests):
            start = time.perf_counter()
            cursor.execute(statement, parameters)
            cursor.fetchall()
            if attempt >= args.warmup:
                timings.append((time.perf_counter() - start) * 1000)
    cuts = statistics.quantiles(timings, n=100, method="inclusive")
    return cuts[49], cuts[94]


if __name__ == "__main__":
    main()
