"""Benchmark: the record list page over a project of 100,000 records, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
        .venv/bin/python bench/record_list_bench.py [--records 100000] [--runs 5] [--requests 200]

On first use, fills the project "bench-records" with synthetic records from generate_records.py,
imported through the importer (later runs reuse it). Then requests the list in-process through
Django's test client, logged in as a reviewer, with the production settings (DEBUG off, sessions
in the database): the first, a middle and the last page, each filter, text searches and an htmx
request. Each case is warmed up, then timed over --requests requests; the
whole set is repeated --runs times and the median of the runs' p50 and p95 is reported, with the
number of SQL queries one request makes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# The benchmark runs the production settings in-process over plain HTTP; the key signs nothing
# that outlives the run.
os.environ.setdefault("SECRET_KEY", "bench-only-" + os.urandom(16).hex())
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("SECURE_COOKIES", "false")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402

from bench.generate_records import write_rjudge  # noqa: E402
from curation.models import ImportBatch, Project, Record, Role  # noqa: E402
from curation.services.imports import import_path  # noqa: E402
from curation.services.projects import membership_grant, project_create  # noqa: E402
from curation.services.search import search_index_update  # noqa: E402
from curation.views.records import PAGE_SIZE  # noqa: E402

SLUG = "bench-records"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at PostgreSQL: the budget is for the full stack.")
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    # As in the tests: static URLs without a collectstatic manifest (a dictionary lookup anyway).
    warnings.filterwarnings("ignore", "No directory at", UserWarning)
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }

    project = filled_project(args.records)
    client = reviewer_client(project)
    cases = list_cases(project)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for run in range(1, args.runs + 1):
        for name, (params, headers) in cases.items():
            runs[name].append(time_case(client, project, params, headers, args))
        print(f"run {run}/{args.runs} done", file=sys.stderr)

    print(f"{Record.objects.filter(project=project).count():,} records, {args.runs} runs")
    print(f"{'case':<28} {'queries':>7} {'p50 ms':>8} {'p95 ms':>8}   (medians of the runs)")
    for name, (params, headers) in cases.items():
        p50 = statistics.median(p for p, _ in runs[name])
        p95 = statistics.median(p for _, p in runs[name])
        queries = count_queries(client, project, params, headers)
        print(f"{name:<28} {queries:>7} {p50:>8.1f} {p95:>8.1f}")


def list_cases(project: Project) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Case name -> (query parameters, headers)."""
    pages = -(-Record.objects.filter(project=project).count() // PAGE_SIZE)
    htmx = {"HX-Request": "true"}
    return {
        "first page": ({}, {}),
        "middle page": ({"page": str(pages // 2)}, {}),
        "last page": ({"page": str(pages)}, {}),
        "category": ({"category": "Finance"}, {}),
        "scenario": ({"scenario": "bitcoin"}, {}),
        "gold label": ({"gold_label": "safe"}, {}),
        "attack type": ({"attack_type": "injection"}, {}),
        "text search, rare": ({"q": "4242"}, {}),
        "text search, common word": ({"q": "password"}, {}),
        "text search, two words": ({"q": "door open"}, {}),
        "text search, stem": ({"q": "deleting"}, {}),
        "text search, phrase": ({"q": '"door open"'}, {}),
        "text search, rare phrase": ({"q": '"the agent user"'}, {}),
        "text search, left out": ({"q": "door -password -token"}, {}),
        "text search, no match": ({"q": "zebra"}, {}),
        "text search, punctuation": ({"q": '{"'}, {}),
        "text search, id": ({"q": "99999"}, {}),
        "two filters, page 3": (
            {"category": "Program", "gold_label": "unsafe", "page": "3"},
            {},
        ),
        "htmx, category": ({"category": "Finance"}, htmx),
    }


def time_case(
    client: Client,
    project: Project,
    params: dict[str, str],
    headers: dict[str, str],
    args: argparse.Namespace,
) -> tuple[float, float]:
    """(p50, p95) in milliseconds over args.requests requests, after args.warmup of them."""
    url = reverse("judging:record_list", args=[project.slug])
    for _ in range(args.warmup):
        client.get(url, params, headers=headers)
    timings = []
    for _ in range(args.requests):
        start = time.perf_counter()
        response = client.get(url, params, headers=headers)
        timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.status_code
    cuts = statistics.quantiles(timings, n=100, method="inclusive")
    return cuts[49], cuts[94]


def count_queries(
    client: Client, project: Project, params: dict[str, str], headers: dict[str, str]
) -> int:
    url = reverse("judging:record_list", args=[project.slug])
    with CaptureQueriesContext(connection) as queries:
        client.get(url, params, headers=headers)
    return len(queries)


def reviewer_client(project: Project) -> Client:
    user, _ = get_user_model().objects.get_or_create(username="bench-reviewer")
    membership_grant(actor=None, project=project, user=user, role=Role.REVIEWER)
    client = Client()
    client.force_login(user)
    return client


def filled_project(size: int) -> Project:
    """The benchmark's project, filled on first use through the importer with synthetic records."""
    project = Project.objects.filter(slug=SLUG).first()
    if project is not None:
        have = Record.objects.filter(project=project).count()
        if have != size:
            sys.exit(f"Project {SLUG} holds {have:,} records, not {size:,}: use a fresh database.")
        return project
    project = project_create(actor=None, name="Record list benchmark", slug=SLUG)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        write_rjudge(Path(folder), size, seed=1)
        batch = import_path(actor=None, project=project, path=folder)
    if batch.state != ImportBatch.State.SUCCEEDED:
        sys.exit(f"The import failed: {batch.errors}")
    print(f"generated and imported {size:,} records in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    search_index_update(project_id=project.pk)
    print(f"indexed them for search in {time.perf_counter() - started:.1f} s")
    with connection.cursor() as cursor:
        # What autovacuum does soon after a bulk load; without it the planner guesses.
        cursor.execute("VACUUM ANALYZE curation_record")
        cursor.execute("VACUUM ANALYZE curation_recordsearchtext")
    return project


if __name__ == "__main__":
    main()
