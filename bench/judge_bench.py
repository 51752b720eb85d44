"""Benchmark: a judge run over N records against a local endpoint that answers after a delay,
executed by one or more Celery worker processes side by side; calls per second.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
    REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python bench/judge_bench.py [--records 10000] [--runs 3] [--latency 0.2] \\
        [--concurrency 64] [--workers 1,2] [--window 0]

Imports N synthetic records (bench/generate_records.py) into a fresh project, starts the
scriptable OpenAI-compatible server of the tests (tests/fake_llm.py) in this process, answering
every call after --latency seconds. Then, for each number of workers in --workers (in the same
invocation, one after the other, on the same records and endpoint), --runs times: that many
real `celery worker --pool=solo` processes are started on the Redis broker, and a run of an
R-Judge judge (two calls a record) with --concurrency calls at once per worker over every record
is created and dispatched as the studio does. With --window 0 the run goes to its end and its
time is the workers', from the run's started_at to its finished_at. With --window S the calls
are counted over S seconds of steady work, from the first verdict plus --warmup seconds, and
the run is then cancelled: at 1 s a call a whole run of 5,000 records takes ten minutes a
worker, and its rate is the same all through. Printed per run and as medians per number of
workers: calls/s, records/s, the worker processes' CPU time per call. The project, its runs
and records are deleted afterwards.

With --profile S, one more run follows with one worker started for Linux `perf` to read its
Python stacks (bench/cpu_profile.py): S seconds of its steady work are sampled, from --warmup
seconds after the first verdict, and its CPU a call is broken down by what bounds it (the
openai client, HTTP, the database, Redis, Celery, our own code), in milliseconds a call at the
median CPU a call of the one-worker runs above, with the functions most often on the CPU.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Production settings (DEBUG off, so no query log grows in memory); the key signs nothing that
# outlives the run.
os.environ.setdefault("SECRET_KEY", "bench-only-" + os.urandom(16).hex())
RUN_TIMEOUT = 1800

import cpu_profile  # noqa: E402 (bench/ is on the path from here)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", default="1", help="Numbers of workers to compare: 1,2")
    parser.add_argument("--window", type=float, default=0, help="Seconds measured; 0: whole runs")
    parser.add_argument("--warmup", type=float, default=10)
    parser.add_argument(
        "--profile", type=float, default=0, help="Seconds of one worker sampled by perf; 0: none"
    )
    args = parser.parse_args()
    if args.profile and not cpu_profile.available():
        sys.exit("--profile needs Linux perf (apt-get install linux-perf).")

    import django

    django.setup()
    from django.db import connection
    from generate_records import write_jsonl

    from config.celery import app
    from curation.models import Project
    from curation.services.imports import import_path
    from curation.services.projects import project_create
    from judging.models import ModelConnection, Protocol
    from judging.services.judges import judge_create
    from tests.fake_llm import FakeLLM

    if connection.vendor != "postgresql" or not os.environ.get("REDIS_URL"):
        sys.exit("Set DATABASE_URL to PostgreSQL and REDIS_URL: the budget is for the full stack.")
    project = project_create(actor=None, name="Judge benchmark", slug=f"bench-judge-{os.getpid()}")
    workers: list[subprocess.Popen] = []
    try:
        with tempfile.TemporaryDirectory(prefix="judge-bench-") as folder:
            import_path(
                actor=None, project=project, path=write_jsonl(Path(folder), args.records, 1)
            )
        with FakeLLM(latency=args.latency) as llm:
            # The fake server listens on 127.0.0.1, as a local model server would.
            connection = ModelConnection.objects.create(
                name=f"Benchmark connection {os.getpid()}",
                base_url=llm.base_url,
                model_names="fake-judge-1",
                max_concurrency=args.concurrency,
                allow_private=True,
            )
            judge = judge_create(
                actor=None,
                project=project,
                name="Benchmark judge",
                protocol=Protocol.RJUDGE,
                connection=connection,
                model="fake-judge-1",
                concurrency=args.concurrency,
                timeout_seconds=30,
                max_retries=2,
            )
            medians = []
            for count in [int(number) for number in args.workers.split(",")]:
                results = []
                for number in range(1, args.runs + 1):
                    app.control.purge()
                    workers = [start_worker(f"bench{index}") for index in range(count)]
                    result = measure(args, project, judge, llm, workers)
                    stop_workers(workers)
                    results.append(result)
                    print(f"{count} worker(s), run {number}: {describe(result)}", file=sys.stderr)
                median = {key: statistics.median(r[key] for r in results) for key in results[0]}
                medians.append((count, median))
            if args.profile:
                app.control.purge()
                workers = [start_worker("bench0", {"PYTHON_PERF_JIT_SUPPORT": "1"})]
                profiled = profile(args, project, judge, llm, workers)
                stop_workers(workers)
        for count, median in medians:
            print(
                f"{args.records:,} records, R-Judge two-step, {args.latency * 1000:.0f} ms "
                f"latency, {args.concurrency} calls at once a worker, {count} worker(s), "
                f"{args.runs} runs, medians: {describe(median)}"
            )
        if len(medians) > 1:
            base = medians[0][1]["calls_per_second"]
            for count, median in medians[1:]:
                print(f"{count} workers: {median['calls_per_second'] / base:.2f} x one worker's")
        if args.profile:
            one = dict(medians).get(1, {}).get("cpu_ms_per_call")
            print_profile(*profiled, one)
    finally:
        stop_workers(workers)
        delete_project(project.pk)
        Project.objects.filter(pk=project.pk).delete()
        ModelConnection.objects.filter(name=f"Benchmark connection {os.getpid()}").delete()


def measure(
    args: argparse.Namespace, project: Any, judge: Any, llm: Any, workers: list[subprocess.Popen]
) -> dict[str, float]:
    """One run by these workers: its calls a second and CPU a call, whole or over a window."""
    from judging.models import JudgeRun
    from judging.services.runs import judge_run_cancel, judge_run_create

    run = judge_run_create(actor=None, project=project, judge=judge)
    if not args.window:
        calls_before, cpu_before = llm.request_count, total_cpu(workers)
        wait_until_finished(run, workers)
        run.refresh_from_db()
        if run.state != JudgeRun.State.SUCCEEDED or run.valid_count != args.records:
            sys.exit(f"The run ended {run.state} with {run.valid_count} valid verdicts.")
        seconds = (run.finished_at - run.started_at).total_seconds()
        calls = llm.request_count - calls_before
        cpu = total_cpu(workers) - cpu_before
    else:
        deadline = time.monotonic() + RUN_TIMEOUT
        while not run.verdicts.exists():
            check_workers(workers, deadline)
            time.sleep(0.2)
        time.sleep(args.warmup)
        calls_before, cpu_before, started = llm.request_count, total_cpu(workers), time.monotonic()
        time.sleep(args.window)
        calls = llm.request_count - calls_before
        cpu = total_cpu(workers) - cpu_before
        seconds = time.monotonic() - started
        judge_run_cancel(actor=None, run=run)
        wait_until_finished(run, workers)
    return {
        "seconds": seconds,
        "calls_per_second": calls / seconds,
        "records_per_second": calls / 2 / seconds,
        "cpu_ms_per_call": 1000 * cpu / calls,
    }


def profile(
    args: argparse.Namespace, project: Any, judge: Any, llm: Any, workers: list[subprocess.Popen]
) -> tuple[cpu_profile.Profile, float]:
    """One worker's run, sampled for --profile seconds of steady work; the profile and the CPU
    a call over those seconds (perf's own work on the process included)."""
    from judging.services.runs import judge_run_cancel, judge_run_create

    run = judge_run_create(actor=None, project=project, judge=judge)
    deadline = time.monotonic() + RUN_TIMEOUT
    while not run.verdicts.exists():
        check_workers(workers, deadline)
        time.sleep(0.2)
    time.sleep(args.warmup)
    before = (llm.request_count, total_cpu(workers))
    after: list[tuple[int, float]] = []

    def sampled() -> None:
        after.append((llm.request_count, total_cpu(workers)))
        if run.verdicts.count() == run.total:
            sys.exit("The run ended while it was sampled: give it more --records.")
        judge_run_cancel(actor=None, run=run)

    profiled = cpu_profile.record(workers[0].pid, args.profile, then=sampled)
    wait_until_finished(run, workers)
    calls, cpu = (end - start for end, start in zip(after[0], before, strict=True))
    return profiled, 1000 * cpu / calls


def print_profile(sampled: cpu_profile.Profile, profiled_ms: float, one: float | None) -> None:
    scale = one or profiled_ms
    source = "the one-worker runs' median" if one else "the profiled run's"
    print(
        f"\nOne worker's CPU a call by what bounds it ({sampled.samples} samples; ms a call at "
        f"{source}, {scale:.2f} ms; {profiled_ms:.2f} ms while sampled):"
    )
    for owner, share in sampled.by_owner:
        print(f"  {share * 100:5.1f} %  {share * scale:5.2f} ms  {owner}")
    print("Functions most often on the CPU themselves (the innermost Python frame):")
    for frame, share in sampled.own[:12]:
        print(f"  {share * 100:5.1f} %  {cpu_profile.short(frame)}")
    print("Functions most often on the stack (on the CPU, or calling what is):")
    for frame, share in sampled.inclusive[:25]:
        print(f"  {share * 100:5.1f} %  {cpu_profile.short(frame)}")


def describe(result: dict[str, float]) -> str:
    return (
        f"{result['seconds']:.1f} s, {result['calls_per_second']:.1f} calls/s, "
        f"{result['records_per_second']:.1f} records/s, worker CPU "
        f"{result['cpu_ms_per_call']:.2f} ms a call"
    )


def start_worker(name: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603 (this interpreter, fixed arguments)
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "--quiet",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            f"--hostname={name}@%h",
        ],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )


def stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        worker.wait(timeout=60)


def check_workers(workers: list[subprocess.Popen], deadline: float) -> None:
    if any(worker.poll() is not None for worker in workers):
        sys.exit("A worker stopped.")
    if time.monotonic() > deadline:
        sys.exit("The run did not finish in time.")


def wait_until_finished(run: object, workers: list[subprocess.Popen]) -> None:
    from judging.models import JudgeRun

    deadline = time.monotonic() + RUN_TIMEOUT
    finished = (JudgeRun.State.SUCCEEDED, JudgeRun.State.FAILED, JudgeRun.State.CANCELLED)
    while JudgeRun.objects.values_list("state", flat=True).get(pk=run.pk) not in finished:
        check_workers(workers, deadline)
        time.sleep(0.5)


def total_cpu(workers: list[subprocess.Popen]) -> float:
    """CPU seconds used so far by the worker processes (each one process: --pool=solo)."""
    return sum(process_cpu(worker.pid) for worker in workers)


def process_cpu(pid: int) -> float:
    """CPU seconds used so far by a process of this machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def delete_project(project_id: int) -> None:
    """Verdicts, runs and records first, in plain statements: Django's cascade loads every id."""
    from django.db import connection

    with connection.cursor() as cursor:
        for statement in (
            "DELETE FROM judging_verdict WHERE run_id IN "
            "(SELECT id FROM judging_judgerun WHERE project_id = %s)",
            "DELETE FROM judging_runchunk WHERE run_id IN "
            "(SELECT id FROM judging_judgerun WHERE project_id = %s)",
            "DELETE FROM judging_disagreement WHERE project_id = %s",
            "DELETE FROM judging_judgerun WHERE project_id = %s",
            "DELETE FROM judging_judge WHERE project_id = %s",
            "DELETE FROM curation_recordsearchtext WHERE project_id = %s",
            "DELETE FROM curation_record WHERE project_id = %s",
        ):
            cursor.execute(statement, [project_id])


if __name__ == "__main__":
    main()
