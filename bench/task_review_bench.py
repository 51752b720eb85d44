"""Benchmark: the task review queue under reviewers working at once, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/task_review_bench.py \\
        [--tasks 10000] [--reviewers 8] [--decisions 50] [--runs 3]

On first use, fills the project "bench-tasks" (K = 1) with --tasks tasks of one author, each
submitted once (bulk-created with its first revision: the services would take minutes to write
them one by one, and the benchmark is about reading and moving them); later runs reuse it. Each
run starts from a full queue (the project's reviews and their audit events are deleted, every
task put back to submitted), then:

1. The review queue page (a reviewer) and the task statistics page (a manager) are requested
   in-process with Django's test client and the production settings: warmed up, then timed over
   --requests requests each; the query count is that of one request.
2. --reviewers processes, each a reviewer with a connection of its own, start together and each
   takes the next task (review_take_next) and approves it (review_decide) --decisions times,
   back to back: the services the pages and the API call.
3. The queue is checked: every decision applied once (one review per task decided, each task
   decided approved, no task held), two audit events per decision (taken, approved).

The figures printed are the medians over --runs runs of each run's p50, p95 and max.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import time
import warnings
from datetime import timedelta
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
from django.db.models import Count  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402
from django.utils import timezone  # noqa: E402

from authoring.models import Review, Task, TaskRevision  # noqa: E402
from authoring.services.reviews import review_decide, review_take_next  # noqa: E402
from bench.generate_records import text  # noqa: E402
from curation.models import AuditEvent, Project, Role  # noqa: E402
from curation.services.projects import membership_grant, project_create  # noqa: E402

SLUG = "bench-tasks"
State = Task.State


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--reviewers", type=int, default=8)
    parser.add_argument("--decisions", type=int, default=50, help="per reviewer per run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at PostgreSQL: the budget is for the full stack.")
    if args.reviewers * args.decisions > args.tasks:
        sys.exit("--reviewers x --decisions must not exceed --tasks: the queue would run dry.")
    allow_test_client()

    project = filled_project(args.tasks)
    results: list[dict[str, object]] = []
    for run in range(1, args.runs + 1):
        queue_reset(project)
        pages = time_pages(project, args)
        load = run_reviewers(project, run, args)
        check_queue(project, args.reviewers * args.decisions)
        results.append({**pages, **load})
        print(f"run {run}/{args.runs}: {json.dumps(results[-1])}", file=sys.stderr)
    report(args, results)


def allow_test_client() -> None:
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    # As in the tests: static URLs without a collectstatic manifest (a dictionary lookup anyway).
    warnings.filterwarnings("ignore", "No directory at", UserWarning)
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


def member(project: Project, username: str, role: str):
    user, _ = get_user_model().objects.get_or_create(username=username)
    membership_grant(actor=None, project=project, user=user, role=role)
    return user


def filled_project(size: int) -> Project:
    """The benchmark's project: `size` tasks of one author, each submitted once."""
    project = Project.objects.filter(slug=SLUG).first()
    if project is not None:
        have = project.tasks.count()
        if have != size:
            sys.exit(f"Project {SLUG} holds {have:,} tasks, not {size:,}: use a fresh one.")
        return project
    started = time.perf_counter()
    project = project_create(actor=None, name="Task review benchmark", slug=SLUG)
    author = member(project, "bench-task-author", Role.AUTHOR)
    category = project.risk_categories.first()
    submitted = timezone.now() - timedelta(days=30)
    tasks = Task.objects.bulk_create(
        Task(
            project=project,
            author=author,
            external_id=f"bench-{n}",
            sector=f"Sector {n % 20}",
            occupation=f"Occupation {n % 150}",
            prompt=text_of(n, 80),
            messages=[{"sender": "client", "content": text_of(n + 1, 30)}],
            risk_category=category,
            malicious_motivation=text_of(n + 2, 20),
            risk_outcome=text_of(n + 3, 20),
            unsafe_criteria=text_of(n + 4, 25),
            safe_criteria=text_of(n + 5, 25),
            state=State.SUBMITTED,
            round=1,
            submitted_at=submitted + timedelta(seconds=n),
        )
        for n in range(size)
    )
    TaskRevision.objects.bulk_create(
        TaskRevision(task=task, number=1, content=snapshot(task, category.name), created_by=author)
        for task in tasks
    )
    print(f"created {size:,} submitted tasks in {time.perf_counter() - started:.0f} s")
    return project


def text_of(seed: int, words: int) -> str:
    return text(random.Random(seed), words)


def snapshot(task: Task, category: str) -> dict[str, object]:
    fields = ("sector", "occupation", "prompt", "messages")
    fields += ("malicious_motivation", "risk_outcome", "unsafe_criteria", "safe_criteria")
    return {
        **{field: getattr(task, field) for field in fields},
        "risk_category": category,
        "reference_files": [],
    }


def queue_reset(project: Project) -> None:
    """A full queue: no reviews, every task submitted and held by nobody."""
    Review.objects.filter(task__project=project).delete()
    AuditEvent.objects.filter(project=project, action__startswith="curation.task.").delete()
    project.tasks.exclude(state=State.SUBMITTED, reviewer=None).update(
        state=State.SUBMITTED, reviewer=None, review_expires_at=None, decided_at=None
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE curation_task, curation_review")


def time_pages(project: Project, args: argparse.Namespace) -> dict[str, float]:
    figures: dict[str, float] = {}
    pages = (
        ("queue", member(project, "bench-page-reviewer", Role.REVIEWER), "authoring:review_queue"),
        ("stats", member(project, "bench-page-manager", Role.MANAGER), "authoring:task_stats"),
    )
    for name, user, route in pages:
        client = Client()
        client.force_login(user)
        url = reverse(route, args=[project.slug])
        for _ in range(args.warmup):
            client.get(url)
        timings = []
        for _ in range(args.requests):
            start = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200, (route, response.status_code)
        with CaptureQueriesContext(connection) as queries:
            client.get(url)
        figures |= {
            f"{name}_p50": percentile(timings, 50),
            f"{name}_p95": percentile(timings, 95),
            f"{name}_queries": len(queries),
        }
    return figures


def run_reviewers(project: Project, run: int, args: argparse.Namespace) -> dict[str, float]:
    names = [f"bench-reviewer-{run}-{n}" for n in range(args.reviewers)]
    for name in names:
        member(project, name, Role.REVIEWER)
    connection.close()
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        barrier = manager.Barrier(args.reviewers)
        jobs = [(project.pk, name, args.decisions, barrier) for name in names]
        started = time.perf_counter()
        with context.Pool(args.reviewers) as pool:
            per_reviewer = pool.map(review, jobs)
        elapsed = time.perf_counter() - started
    takes = [take for timings in per_reviewer for take, _ in timings]
    decisions = [decide for timings in per_reviewer for _, decide in timings]
    pairs = [take + decide for timings in per_reviewer for take, decide in timings]
    return {
        "decisions": len(pairs),
        "decisions_per_s": len(pairs) / elapsed,
        "take_p50": percentile(takes, 50),
        "take_p95": percentile(takes, 95),
        "decide_p50": percentile(decisions, 50),
        "decide_p95": percentile(decisions, 95),
        "pair_max": max(pairs),
    }


def review(job: tuple) -> list[tuple[float, float]]:
    """One reviewer's work, in a process of its own: (take ms, decide ms) per decision."""
    project_id, username, decisions, barrier = job
    project = Project.objects.get(pk=project_id)
    user = get_user_model().objects.get(username=username)
    rubric = {str(pk): True for pk in project.rubric_checks.values_list("pk", flat=True)}
    barrier.wait()
    timings = []
    for _ in range(decisions):
        start = time.perf_counter()
        task = review_take_next(actor=user, project=project)
        taken = time.perf_counter()
        if task is None:
            break
        review_decide(
            actor=user,
            task=task,
            expected_version=task.version,
            decision=Review.Decision.APPROVE,
            comments={},
            rubric=rubric,
        )
        timings.append(((taken - start) * 1000, (time.perf_counter() - taken) * 1000))
    connection.close()
    return timings


def check_queue(project: Project, expected: int) -> None:
    """Every decision applied once: one review per decided task, two audit events each."""
    reviews = Review.objects.filter(task__project=project)
    twice = reviews.values("task_id").annotate(n=Count("id")).filter(n__gt=1).count()
    approved = project.tasks.filter(state=State.APPROVED).count()
    held = project.tasks.filter(state=State.IN_REVIEW).count()
    events = AuditEvent.objects.filter(project=project, action__startswith="curation.task.")
    if (reviews.count(), twice, approved, held, events.count()) != (
        expected,
        0,
        expected,
        0,
        2 * expected,
    ):
        sys.exit(
            f"Queue broken: {reviews.count()} reviews for {expected} decisions, {twice} tasks "
            f"reviewed twice, {approved} approved, {held} still held, {events.count()} events"
        )


def percentile(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def report(args: argparse.Namespace, results: list[dict]) -> None:
    def median(key: str) -> float:
        return statistics.median(result[key] for result in results)

    print(
        f"{args.tasks:,} submitted tasks, K = 1, {args.reviewers} reviewers x {args.decisions} "
        f"decisions, {args.runs} runs (medians)"
    )
    for name, title in (("queue", "review queue page"), ("stats", "task statistics page")):
        print(
            f"{title}: {median(f'{name}_queries'):.0f} queries, p50 {median(f'{name}_p50'):.1f} "
            f"ms, p95 {median(f'{name}_p95'):.1f} ms"
        )
    print(
        f"take next: p50 {median('take_p50'):.1f} ms, p95 {median('take_p95'):.1f} ms; "
        f"decide: p50 {median('decide_p50'):.1f} ms, p95 {median('decide_p95'):.1f} ms; "
        f"slowest take + decide {median('pair_max'):.1f} ms; "
        f"{median('decisions_per_s'):.0f} decisions/s; "
        "decisions applied twice: 0 (checked after every run)"
    )


if __name__ == "__main__":
    main()
