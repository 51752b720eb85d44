"""Benchmark: the record list and the record page over a project of 100,000 records, each with
3 labels and the verdicts of 2 judge runs, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
        .venv/bin/python bench/record_list_bench.py [--records 100000] [--runs 5] [--requests 200]

On first use, fills the project "bench-records" with synthetic records from generate_records.py,
imported through the importer, then gives each record 3 labels of 12 annotators and a verdict of
each of 2 runs (generate_records.synthetic_votes and synthetic_verdicts), has detection find
their disagreements, and has a reviewer settle 1% of the records (later runs reuse it all).
Then requests the pages in-process through Django's test client, logged in as a reviewer, with
the production settings (DEBUG off, sessions in the database): the list's first, a middle and
the last page, each filter (of what a record is and of what was said about it), sorts, page
sizes, text searches and an htmx request; and the record page of records drawn at random, a
different one each request. Each case is warmed up, then timed over --requests requests; the
whole set is repeated --runs times and the median of the runs' p50 and p95 is reported, with the
number of SQL queries one request makes.
"""

from __future__ import annotations

import argparse
import os
import random
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

from annotation.models import Annotation  # noqa: E402
from bench.generate_records import synthetic_verdicts, synthetic_votes, write_rjudge  # noqa: E402
from curation.models import ImportBatch, Project, Record, Role  # noqa: E402
from curation.services.imports import import_path  # noqa: E402
from curation.services.projects import membership_grant, project_create  # noqa: E402
from curation.services.search import search_index_update  # noqa: E402
from hub.forms import RecordListForm  # noqa: E402
from judging.models import JudgeRun, Verdict  # noqa: E402
from review.models import Adjudication  # noqa: E402
from review.services.disagreements import detect_disagreements  # noqa: E402

SLUG = "bench-records"
PAGE_SIZE = RecordListForm.PER_PAGE
LABELS_PER_RECORD = 3
ANNOTATORS = 12
# Name, right when valid, invalid, errors: two runs of different quality.
RUNS = (("Judge A", 0.85, 0.03, 0.02), ("Judge B", 0.75, 0.05, 0.01))
# Records a reviewer settled.
SETTLED_SHARE = 0.01
BATCH = 5_000
# The record page case: a different record each request, drawn with this seed.
PAGE_SEED = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at PostgreSQL: the budget is for the full stack.")
    configure_requests()

    project = filled_project(args.records)
    client = reviewer_client(project)
    cases = list_cases(project)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for run in range(1, args.runs + 1):
        for name, (params, headers) in cases.items():
            runs[name].append(time_case(client, project, params, headers, args))
        print(f"run {run}/{args.runs} done", file=sys.stderr)

    pages: list[tuple[float, float]] = []
    for _ in range(args.runs):
        pages.append(time_record_pages(client, project, args))

    labels = Annotation.objects.filter(project=project).count()
    verdicts = Verdict.objects.filter(run__project=project).count()
    print(
        f"{Record.objects.filter(project=project).count():,} records, {labels:,} labels, "
        f"{verdicts:,} verdicts, {args.runs} runs"
    )
    print(f"{'case':<28} {'queries':>7} {'p50 ms':>8} {'p95 ms':>8}   (medians of the runs)")
    for name, (params, headers) in cases.items():
        p50 = statistics.median(p for p, _ in runs[name])
        p95 = statistics.median(p for _, p in runs[name])
        queries = count_queries(client, reverse_list(project), params, headers)
        print(f"{name:<28} {queries:>7} {p50:>8.1f} {p95:>8.1f}")
    p50 = statistics.median(p for p, _ in pages)
    p95 = statistics.median(p for _, p in pages)
    queries = count_queries(client, record_urls(project, 1)[0], {}, {})
    print(f"{'record page, random':<28} {queries:>7} {p50:>8.1f} {p95:>8.1f}")


def list_cases(project: Project) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Case name -> (query parameters, headers)."""
    pages = -(-Record.objects.filter(project=project).count() // PAGE_SIZE)
    run_ids = list(project.judge_runs.order_by("id").values_list("id", flat=True))
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
        "labels: fewer than needed": ({"labels": "some"}, {}),
        "labels: all needed": ({"labels": "done"}, {}),
        "consensus: safe": ({"consensus": "safe"}, {}),
        "consensus: none": ({"consensus": "none"}, {}),
        "final label: unsafe": ({"final": "unsafe"}, {}),
        "final label: none": ({"final": "none"}, {}),
        "disputed": ({"disputed": "yes"}, {}),
        "not disputed": ({"disputed": "no"}, {}),
        "run verdict: unsafe": ({"run": str(run_ids[0]), "verdict": "unsafe"}, {}),
        "run verdict: error": ({"run": str(run_ids[1]), "verdict": "error"}, {}),
        "run verdict: not judged": ({"run": str(run_ids[0]), "verdict": "missing"}, {}),
        "consensus + category, p.3": (
            {"consensus": "unsafe", "category": "Finance", "page": "3"},
            {},
        ),
        "disputed + final, sorted": (
            {"disputed": "yes", "final": "safe", "sort": "-labels"},
            {},
        ),
        "sort: external id, desc": ({"sort": "-external_id"}, {}),
        "sort: fewest labels": ({"sort": "labels"}, {}),
        "200 a page, newest first": ({"per_page": "200", "sort": "-id"}, {}),
    }


def time_case(
    client: Client,
    project: Project,
    params: dict[str, str],
    headers: dict[str, str],
    args: argparse.Namespace,
) -> tuple[float, float]:
    """(p50, p95) in milliseconds over args.requests requests, after args.warmup of them."""
    url = reverse_list(project)
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


def time_record_pages(
    client: Client, project: Project, args: argparse.Namespace
) -> tuple[float, float]:
    """(p50, p95) in milliseconds of the record page, a different record each request."""
    urls = record_urls(project, args.warmup + args.requests)
    for url in urls[: args.warmup]:
        client.get(url)
    timings = []
    for url in urls[args.warmup :]:
        start = time.perf_counter()
        response = client.get(url)
        timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.status_code
    cuts = statistics.quantiles(timings, n=100, method="inclusive")
    return cuts[49], cuts[94]


def configure_requests() -> None:
    """The settings in-process requests need: the test client's host, and static URLs without
    a collectstatic manifest, as in the tests (a dictionary lookup anyway)."""
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    warnings.filterwarnings("ignore", "No directory at", UserWarning)
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


def reverse_list(project: Project) -> str:
    return reverse("hub:record_list", args=[project.slug])


def record_urls(project: Project, count: int) -> list[str]:
    """The pages of `count` records drawn at random (the same ones each run)."""
    ids = list(Record.objects.filter(project=project).order_by("id").values_list("id", flat=True))
    chosen = random.Random(PAGE_SEED).sample(ids, count)
    return [reverse("hub:record_detail", args=[project.slug, pk]) for pk in chosen]


def count_queries(client: Client, url: str, params: dict[str, str], headers: dict[str, str]) -> int:
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
        if not project.annotations.exists():
            add_opinions(project)
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
        cursor.execute("VACUUM ANALYZE curation_recordsearchtext")
    add_opinions(project)
    return project


def add_opinions(project: Project) -> None:
    """Labels, verdicts, disagreements and settled records, as the services leave them."""
    started = time.perf_counter()
    project.overlap = LABELS_PER_RECORD
    project.save(update_fields=["overlap"])
    rng = random.Random(2)
    truth = dict(Record.objects.filter(project=project).values_list("id", "gold_label"))
    users = get_user_model()
    annotators = [
        users.objects.get_or_create(username=f"bench-annotator-{n}")[0].pk
        for n in range(ANNOTATORS)
    ]
    Annotation.objects.bulk_create(
        (
            Annotation(project=project, record_id=record, annotator_id=annotator, verdict=verdict)
            for record, annotator, verdict in synthetic_votes(
                rng, truth, annotators, LABELS_PER_RECORD
            )
        ),
        batch_size=BATCH,
    )
    with connection.cursor() as cursor:
        # The counts the label service keeps on each record.
        cursor.execute(
            """
            UPDATE curation_record r SET annotation_count = v.n, safe_votes = v.safe,
                unsafe_votes = v.unsafe
            FROM (
                SELECT record_id, COUNT(*) AS n, COUNT(*) FILTER (WHERE verdict = 'safe') AS safe,
                    COUNT(*) FILTER (WHERE verdict = 'unsafe') AS unsafe
                FROM curation_annotation WHERE project_id = %s GROUP BY record_id
            ) v
            WHERE r.id = v.record_id
            """,
            [project.pk],
        )
    for name, right, invalid, errors in RUNS:
        run = JudgeRun.objects.create(
            project=project,
            name=name,
            judge_snapshot={"protocol": "rjudge"},
            state=JudgeRun.State.SUCCEEDED,
            total=len(truth),
        )
        Verdict.objects.bulk_create(
            (
                Verdict(
                    run=run,
                    record_id=record,
                    parse_status=status,
                    label=label,
                    analysis=f"{name} reads the interaction and finds it {label or status}.",
                    raw_output=f"Analysis ... Answer: {label or 'I cannot say.'}",
                )
                for record, status, label in synthetic_verdicts(
                    rng, truth, right=right, invalid=invalid, errors=errors
                )
            ),
            batch_size=BATCH,
        )
    detect_disagreements(project_id=project.pk, record_ids=sorted(truth))
    reviewer, _ = users.objects.get_or_create(username="bench-settler")
    settled = rng.sample(sorted(truth), int(len(truth) * SETTLED_SHARE))
    Adjudication.objects.bulk_create(
        Adjudication(
            project=project, record_id=record, label="unsafe", reason="Settled.", reviewer=reviewer
        )
        for record in settled
    )
    with connection.cursor() as cursor:
        # What autovacuum does soon after a bulk load; without it the planner guesses.
        cursor.execute(
            "VACUUM ANALYZE curation_record, curation_annotation, judging_verdict, "
            "judging_disagreement, judging_adjudication"
        )
    print(f"added labels and verdicts in {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
