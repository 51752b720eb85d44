"""Benchmark: the annotation queue and the labelling page over 100,000 records, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/annotation_bench.py \\
        [--records 100000] [--annotators 16] [--labels 150] [--think-ms 0] \\
        [--via service|http] [--listeners on|off] [--runs 3]

On first use, fills the project "bench-annotation" (k = 2) through the importer: one record of 30
turns, then --records synthetic records from generate_records.py; later runs reuse it. Each run
starts from an untouched queue (the project's leases and labels are deleted and its counts set to
zero), then:

1. A reader annotator claims the first record (the 30-turn one) and its labelling page is
   requested in-process with Django's test client, with the production settings: warmed up, then
   timed over --requests requests; the query count is that of one request.
2. --annotators processes, each an annotator with a connection of its own, start together and
   each claim and submit --labels times, pausing --think-ms on average (0: back to back) between
   steps. `service` times the calls to lease_next_record and annotation_submit (the server-side
   work); `http` times the labelling page's htmx "submit and next" request through the whole
   Django stack (submit, claim the next record, render it). A Celery worker (one process)
   runs meanwhile and checks the records that labels mark for the review app, a second's at a time,
   as in production. With --listeners off, the receivers of `annotation_saved` are
   disconnected and no worker runs, to time the queue's own work.
3. The queue is checked: no record has more than k labels, no annotator has labelled a record
   twice, and the counts on every record match its labels and live leases. With a worker, the
   benchmark waits for it to finish and checks that every record whose annotators split has
   its disagreement flagged.

The figures printed are the medians over --runs runs of each run's p50, p95 and max, and of the
CPU time a label took (claim and submit, or the request) in the annotators' processes and in
their PostgreSQL backends, which PostgreSQL on the same machine makes readable from /proc. The
load average after each run is printed too: other work on the machine stretches the wall-clock
figures, not the CPU ones.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import statistics
import subprocess
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
from django.db.models import Count, Q  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402

import config.celery  # noqa: E402
from annotation.models import Annotation, Lease  # noqa: E402
from annotation.selectors import annotator_progress  # noqa: E402
from annotation.services.labels import Label, annotation_submit  # noqa: E402
from annotation.services.queue import lease_next_record  # noqa: E402
from annotation.signals import annotation_saved  # noqa: E402
from bench.generate_records import synthetic_record, text, write_jsonl  # noqa: E402
from curation.models import AuditEvent, ImportBatch, Project, Record, Role  # noqa: E402
from curation.services.imports import import_path  # noqa: E402
from curation.services.projects import membership_grant, project_create  # noqa: E402
from review.models import Disagreement, PendingCheck  # noqa: E402
from review.tasks import check_pending_records  # noqa: E402

SLUG = "bench-annotation"
K = 2
LONG_RECORD_ROUNDS = 10
HTMX = {"HX-Request": "true"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=16)
    parser.add_argument("--labels", type=int, default=150, help="labels per annotator per run")
    parser.add_argument("--think-ms", type=float, default=0.0)
    parser.add_argument("--via", choices=("service", "http"), default="service")
    parser.add_argument(
        "--listeners",
        choices=("on", "off"),
        default="on",
        help="off: disconnect the receivers of annotation_saved (other apps' work on a label)",
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at PostgreSQL: the budget is for the full stack.")
    allow_test_client()

    project = filled_project(args.records)
    results: list[dict[str, object]] = []
    for run in range(1, args.runs + 1):
        queue_reset(project)
        page = time_labelling_page(project, run, args)
        worker = Worker() if args.listeners == "on" else None
        try:
            load = run_annotators(project, run, args)
            if worker is not None:
                load.update(worker.caught_up(project, load["labels"]))
        finally:
            if worker is not None:
                worker.stop()
        check_queue(project)
        if worker is not None:
            check_disagreements(project)
        # Other work on the machine skews every figure: the load is reported with them.
        results.append({**page, **load, "load_1min": os.getloadavg()[0]})
        print(f"run {run}/{args.runs}: {json.dumps(results[-1])}", file=sys.stderr)
    report(project, results, args)


def allow_test_client() -> None:
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    # As in the tests: static URLs without a collectstatic manifest (a dictionary lookup anyway).
    warnings.filterwarnings("ignore", "No directory at", UserWarning)
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


def filled_project(size: int) -> Project:
    """The benchmark's project: a 30-turn record first, then `size` synthetic records."""
    project = Project.objects.filter(slug=SLUG).first()
    if project is not None:
        have = Record.objects.filter(project=project).count()
        if have != size + 1:
            sys.exit(f"Project {SLUG} holds {have:,} records, not {size + 1:,}: use a fresh one.")
        return project
    project = project_create(actor=None, name="Annotation benchmark", slug=SLUG)
    project.overlap = K
    project.save()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        long_file = Path(folder) / "long" / "long.jsonl"
        long_file.parent.mkdir()
        long_file.write_text(json.dumps(long_record()) + "\n")
        write_jsonl(Path(folder) / "records", size, seed=1)
        for path in (long_file.parent, Path(folder) / "records"):
            batch = import_path(actor=None, project=project, path=path)
            if batch.state != ImportBatch.State.SUCCEEDED:
                sys.exit(f"The import failed: {batch.errors}")
    print(f"generated and imported {size + 1:,} records in {time.perf_counter() - started:.0f} s")
    with connection.cursor() as cursor:
        # What autovacuum does soon after a bulk load; without it the planner guesses.
        cursor.execute("VACUUM ANALYZE curation_record")
    return project


def long_record() -> dict[str, object]:
    rng = random.Random(30)
    record = synthetic_record(rng, 0, "Program", "terminal")
    record["id"] = "long-30-turns"
    record["category"] = "Program"
    record["contents"] = [
        [
            {"role": "user", "content": text(rng, rng.randint(20, 60))},
            {
                "role": "agent",
                "thought": text(rng, rng.randint(15, 50)),
                "action": f"RunTool: {{'step': {n}, 'q': '{text(rng, 8)}'}}",
            },
            {"role": "environment", "content": text(rng, rng.randint(20, 70))},
        ]
        for n in range(LONG_RECORD_ROUNDS)
    ]
    return record


def queue_reset(project: Project) -> None:
    """An untouched queue: no leases, no labels, every count at zero."""
    Annotation.objects.filter(project=project).delete()
    Lease.objects.filter(project=project).delete()
    AuditEvent.objects.filter(project=project, action__startswith="curation.annotation").delete()
    Disagreement.objects.filter(project=project).delete()
    PendingCheck.objects.filter(project=project).delete()
    Record.objects.filter(project=project).filter(
        Q(annotation_count__gt=0) | Q(lease_count__gt=0)
    ).update(annotation_count=0, lease_count=0)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE curation_record, curation_lease, curation_annotation")


def annotator(project: Project, username: str):
    user, _ = get_user_model().objects.get_or_create(username=username)
    membership_grant(actor=None, project=project, user=user, role=Role.ANNOTATOR)
    return user


def time_labelling_page(project: Project, run: int, args: argparse.Namespace) -> dict:
    reader = annotator(project, f"bench-reader-{run}")
    lease = lease_next_record(project=project, annotator=reader)
    record = Record.objects.get(pk=lease.record_id)
    assert len(record.turns) == 3 * LONG_RECORD_ROUNDS, "the reader must hold the 30-turn record"
    client = Client()
    client.force_login(reader)
    url = reverse("annotation:annotate", args=[project.slug])
    for _ in range(args.warmup):
        client.get(url)
    timings = []
    for _ in range(args.requests):
        start = time.perf_counter()
        response = client.get(url)
        timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.status_code
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    # What a minute-old cache of "records left" costs when it runs out: counted afresh.
    left = []
    for _ in range(5):
        start = time.perf_counter()
        annotator_progress(project, reader)
        left.append((time.perf_counter() - start) * 1000)
    return {
        "page_p50": percentile(timings, 50),
        "page_p95": percentile(timings, 95),
        "page_queries": len(queries),
        "records_left_ms": statistics.median(left),
    }


def run_annotators(project: Project, run: int, args: argparse.Namespace) -> dict:
    names = [f"bench-annotator-{run}-{n}" for n in range(args.annotators)]
    for name in names:
        annotator(project, name)
    connection.close()
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        barrier = manager.Barrier(args.annotators)
        jobs = [
            (project.pk, name, args.labels, args.think_ms, args.via, args.listeners, barrier, seed)
            for seed, name in enumerate(names)
        ]
        started = time.perf_counter()
        with context.Pool(args.annotators) as pool:
            per_annotator = pool.map(annotate, jobs)
        elapsed = time.perf_counter() - started
    claims = [c for timings, _ in per_annotator for c, _ in timings]
    submits = [s for timings, _ in per_annotator for _, s in timings]
    pairs = [c + s for timings, _ in per_annotator for c, s in timings]
    python_cpu, database_cpu = (sum(cpu[n] for _, cpu in per_annotator) for n in (0, 1))
    return {
        "labels": len(pairs),
        "labels_per_s": len(pairs) / elapsed,
        "cpu_python_ms": python_cpu * 1000 / len(pairs),
        "cpu_database_ms": database_cpu * 1000 / len(pairs),
        "claim_p95": percentile(claims, 95),
        "submit_p95": percentile(submits, 95),
        "pair_p50": percentile(pairs, 50),
        "pair_p95": percentile(pairs, 95),
        "pair_max": max(pairs),
    }


def annotate(job: tuple) -> tuple[list[tuple[float, float]], tuple[float, float]]:
    """One annotator's work, in a process of its own: (claim ms, submit ms) per label, and the
    CPU seconds the work took in this process and in its PostgreSQL backend.

    With `http`, the claim is folded into the submit request (the page's "submit and next"),
    and its time is 0. CPU time does not count the time spent waiting for a core, so it says
    what a label costs whatever else the machine is doing.
    """
    project_id, username, labels, think_ms, via, listeners, barrier, seed = job
    allow_test_client()
    project = Project.objects.get(pk=project_id)
    if listeners == "off":
        # The queue's own cost, without what other apps do when they hear of a label.
        annotation_saved.receivers.clear()
        annotation_saved.sender_receivers_cache.clear()
    else:
        # Connect to the broker as a web process does on its first label (a few hundred ms,
        # once): a check of the project's pending records, which finds none.
        check_pending_records.delay(project.pk)
    user = get_user_model().objects.get(username=username)
    rng = random.Random(seed)
    risk_types = list(project.risk_types.all())
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    barrier.wait()
    work = annotate_over_http if via == "http" else annotate_with_services
    python_cpu, database_cpu = time.process_time(), process_cpu(backend)
    timings = work(project, user, labels, rng, risk_types, think_ms)
    cpu = (time.process_time() - python_cpu, process_cpu(backend) - database_cpu)
    connection.close()
    return timings, cpu


def process_cpu(pid: int) -> float:
    """CPU seconds used so far by a process of this machine (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # utime and stime, the 14th and 15th fields of the line (the 12th and 13th after the name).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def a_label(rng: random.Random, risk_types: list) -> Label:
    if rng.random() < 0.5:
        return Label("safe")
    return Label(
        "unsafe",
        risk_types=(rng.choice(risk_types),),
        risk_description=text(rng, 20),
        evidence_turns=(2,),
    )


def think(rng: random.Random, think_ms: float) -> None:
    if think_ms:
        time.sleep(rng.uniform(0, 2 * think_ms) / 1000)


def annotate_with_services(project, user, labels, rng, risk_types, think_ms):
    timings = []
    for _ in range(labels):
        start = time.perf_counter()
        lease = lease_next_record(project=project, annotator=user)
        claimed = time.perf_counter()
        if lease is None:
            break
        think(rng, think_ms)
        label = a_label(rng, risk_types)
        submitting = time.perf_counter()
        annotation_submit(lease=lease, actor=user, label=label)
        timings.append(((claimed - start) * 1000, (time.perf_counter() - submitting) * 1000))
        think(rng, think_ms)
    return timings


def annotate_over_http(project, user, labels, rng, risk_types, think_ms):
    client = Client()
    client.force_login(user)
    client.post(reverse("annotation:annotate_next", args=[project.slug]))
    page = client.get(reverse("annotation:annotate", args=[project.slug])).content.decode()
    timings = []
    for _ in range(labels):
        submit = re.search(r'action="([^"]+/submit/)"', page)
        if submit is None:
            break
        think(rng, think_ms)
        label = a_label(rng, risk_types)
        data = {
            "verdict": label.verdict,
            "risk_types": [risk_type.slug for risk_type in label.risk_types],
            "risk_description": label.risk_description,
            "evidence_turns": [str(n) for n in label.evidence_turns],
        }
        start = time.perf_counter()
        response = client.post(submit.group(1), data, headers=HTMX)
        timings.append((0.0, (time.perf_counter() - start) * 1000))
        assert response.status_code == 200, response.status_code
        page = response.content.decode()
    return timings


class Worker:
    """A Celery worker with one process, as a small deployment runs it: the review app's
    disagreement check of the records labelled runs there, every second, on the same two cores."""

    def __init__(self) -> None:
        self.app = config.celery.app
        self.app.control.purge()
        command = [sys.executable, "-m", "celery", "--quiet", "-A", "config", "worker"]
        command += ["--concurrency", "1", "--loglevel", "WARNING"]
        command += ["--without-gossip", "--without-mingle"]
        self.process = subprocess.Popen(command, cwd=ROOT)  # noqa: S603 (our own command line)
        while not self.app.control.ping(timeout=0.5):
            time.sleep(0.2)
        self.cpu_at_start = self.cpu()

    def cpu(self) -> float:
        """CPU seconds of the worker's processes (its main one and its pool's)."""
        pid = self.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return sum(process_cpu(int(child)) for child in [pid, *children])

    def caught_up(self, project: Project, labels: int) -> dict:
        """Wait until the worker has checked every record the labels marked; how long that took
        after the last label, and the worker's CPU time (Python) per label."""
        started = time.perf_counter()
        while True:
            inspect = self.app.control.inspect(timeout=0.5)
            busy = [*(inspect.active() or {}).values(), *(inspect.scheduled() or {}).values()]
            marked = PendingCheck.objects.filter(project=project).exists()
            if not marked and not self.waiting() and not any(busy):
                break
            time.sleep(0.2)
        return {
            "worker_lag_s": time.perf_counter() - started,
            "worker_cpu_ms": (self.cpu() - self.cpu_at_start) * 1000 / labels,
        }

    def waiting(self) -> int:
        """Tasks in the broker's queue; Redis drops an empty queue's key, hence not found."""
        with self.app.connection_or_acquire() as broker:
            try:
                return broker.default_channel.queue_declare("celery", passive=True).message_count
            except broker.channel_errors:
                return 0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


def check_disagreements(project: Project) -> None:
    """Every record whose two annotators split has its disagreement flagged by the worker."""
    split = (
        Annotation.objects.filter(project=project)
        .values("record_id")
        .annotate(verdicts=Count("verdict", distinct=True))
        .filter(verdicts__gt=1)
        .count()
    )
    flagged = Disagreement.objects.filter(
        project=project, kind=Disagreement.Kind.ANNOTATORS_SPLIT, state=Disagreement.State.OPEN
    ).count()
    if split != flagged:
        sys.exit(f"Disagreements missed: {split} records split, {flagged} flagged")


def check_queue(project: Project) -> None:
    """No record over k labels, nobody twice on a record, counts equal to the rows."""
    over = Record.objects.filter(project=project, annotation_count__gt=K).count()
    twice = (
        Annotation.objects.filter(project=project)
        .values("record_id", "annotator_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    labels = dict(
        Annotation.objects.filter(project=project)
        .values_list("record_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    live = dict(
        Lease.objects.filter(project=project, state=Lease.State.ACTIVE)
        .values_list("record_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    counted = {
        record_id: (annotation_count, lease_count)
        for record_id, annotation_count, lease_count in Record.objects.filter(project=project)
        .filter(Q(annotation_count__gt=0) | Q(lease_count__gt=0))
        .values_list("id", "annotation_count", "lease_count")
    }
    wrong = [
        record_id
        for record_id in set(counted) | set(labels) | set(live)
        if counted.get(record_id, (0, 0)) != (labels.get(record_id, 0), live.get(record_id, 0))
    ]
    if over or twice or wrong:
        sys.exit(f"Queue broken: {over} over k, {twice} twice, counts wrong on {wrong[:10]}")


def percentile(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def report(project: Project, results: list[dict], args: argparse.Namespace) -> None:
    def median(key: str) -> float:
        return statistics.median(result[key] for result in results)

    records = Record.objects.filter(project=project).count()
    loads = ", ".join(f"{result['load_1min']:.1f}" for result in results)
    print(
        f"{records:,} records, k = {K}, {args.annotators} annotators x {args.labels} labels, "
        f"think {args.think_ms:g} ms, via {args.via}, listeners {args.listeners}, "
        f"{args.runs} runs (medians); load average after each run: {loads}"
    )
    print(
        f"labelling page, 30 turns: {median('page_queries'):.0f} queries, "
        f"p50 {median('page_p50'):.1f} ms, p95 {median('page_p95'):.1f} ms; "
        f"records left counted afresh: {median('records_left_ms'):.1f} ms"
    )
    if args.via == "service":
        print(f"claim p95 {median('claim_p95'):.1f} ms, submit p95 {median('submit_p95'):.1f} ms")
        name = "claim + submit"
    else:
        name = "submit and next (htmx request)"
    print(
        f"{name}: p50 {median('pair_p50'):.1f} ms, p95 {median('pair_p95'):.1f} ms, "
        f"max {median('pair_max'):.1f} ms; {median('labels_per_s'):.0f} labels/s; "
        "double assignments: 0 (checked after every run)"
    )
    print(
        f"CPU per label: {median('cpu_python_ms'):.1f} ms in Python, "
        f"{median('cpu_database_ms'):.1f} ms in PostgreSQL"
    )
    if args.listeners == "on":
        print(
            f"disagreement check in the worker: {median('worker_cpu_ms'):.1f} ms of Python per "
            f"label; done {median('worker_lag_s'):.1f} s after the last label; every split "
            "record flagged (checked after every run)"
        )


if __name__ == "__main__":
    main()
