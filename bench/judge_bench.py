"""Benchmark: a judge run over N records against a local endpoint that answers after a delay,
executed by one Celery worker process; calls per second.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench \\
    REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python bench/judge_bench.py [--records 10000] [--runs 3] [--latency 0.2] \\
        [--concurrency 64]

Imports N synthetic records (bench/generate_records.py) into a fresh project, starts the
scriptable OpenAI-compatible server of the tests (tests/fake_llm.py) in this process, answering
every call after --latency seconds, and one real `celery worker --pool=solo` process on the
Redis broker. Then --runs times: a run of an R-Judge judge (two calls a record) with
--concurrency calls at once over every record is created and dispatched as the studio does; its
time is the worker's, from claiming the run to finishing it (the run's started_at and
finished_at). Printed per run and as medians: calls/s, records/s, the worker process's CPU time
per call. The project, its runs and records are deleted afterwards.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Production settings (DEBUG off, so no query log grows in memory); the key signs nothing that
# outlives the run.
os.environ.setdefault("SECRET_KEY", "bench-only-" + os.urandom(16).hex())
RUN_TIMEOUT = 1800


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection
    from generate_records import write_jsonl

    from config.celery import app
    from curation.models import Project
    from curation.services.imports import import_path
    from curation.services.projects import project_create
    from judging.models import JudgeRun, ModelConnection, Protocol
    from judging.services.judges import judge_create
    from judging.services.runs import judge_run_create
    from tests.fake_llm import FakeLLM

    if connection.vendor != "postgresql" or not os.environ.get("REDIS_URL"):
        sys.exit("Set DATABASE_URL to PostgreSQL and REDIS_URL: the budget is for the full stack.")
    project = project_create(actor=None, name="Judge benchmark", slug=f"bench-judge-{os.getpid()}")
    worker = None
    try:
        with tempfile.TemporaryDirectory(prefix="judge-bench-") as folder:
            import_path(
                actor=None, project=project, path=write_jsonl(Path(folder), args.records, 1)
            )
        app.control.purge()
        worker = start_worker()
        results = []
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
            for number in range(1, args.runs + 1):
                calls_before, cpu_before = llm.request_count, process_cpu(worker.pid)
                run = judge_run_create(actor=None, project=project, judge=judge)
                wait_until_finished(run, worker)
                run.refresh_from_db()
                if run.state != JudgeRun.State.SUCCEEDED or run.valid_count != args.records:
                    sys.exit(f"The run ended {run.state} with {run.valid_count} valid verdicts.")
                seconds = (run.finished_at - run.started_at).total_seconds()
                calls = llm.request_count - calls_before
                result = {
                    "seconds": seconds,
                    "calls_per_second": calls / seconds,
                    "records_per_second": args.records / seconds,
                    "cpu_ms_per_call": 1000 * (process_cpu(worker.pid) - cpu_before) / calls,
                }
                results.append(result)
                print(
                    f"run {number}: {calls:,} calls in {seconds:.1f} s, "
                    f"{result['calls_per_second']:.0f} calls/s, "
                    f"{result['records_per_second']:.0f} records/s, worker CPU "
                    f"{result['cpu_ms_per_call']:.2f} ms a call",
                    file=sys.stderr,
                )
        print(
            f"{args.records:,} records, R-Judge two-step, {args.latency * 1000:.0f} ms latency, "
            f"{args.concurrency} calls at once, one worker process, {args.runs} runs, medians: "
            f"{statistics.median(r['seconds'] for r in results):.1f} s, "
            f"{statistics.median(r['calls_per_second'] for r in results):.0f} calls/s, "
            f"{statistics.median(r['records_per_second'] for r in results):.0f} records/s, "
            f"worker CPU {statistics.median(r['cpu_ms_per_call'] for r in results):.2f} ms a call"
        )
    finally:
        if worker is not None and worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=60)
        delete_project(project.pk)
        Project.objects.filter(pk=project.pk).delete()
        ModelConnection.objects.filter(name=f"Benchmark connection {os.getpid()}").delete()


def start_worker() -> subprocess.Popen:
    return subprocess.Popen(
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
        ],
        cwd=ROOT,
        start_new_session=True,
    )


def wait_until_finished(run: object, worker: subprocess.Popen) -> None:
    from judging.models import JudgeRun

    deadline = time.monotonic() + RUN_TIMEOUT
    finished = (JudgeRun.State.SUCCEEDED, JudgeRun.State.FAILED, JudgeRun.State.CANCELLED)
    while JudgeRun.objects.values_list("state", flat=True).get(pk=run.pk) not in finished:
        if worker.poll() is not None:
            sys.exit("The worker stopped.")
        if time.monotonic() > deadline:
            sys.exit("The run did not finish in time.")
        time.sleep(0.5)


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
            "DELETE FROM judging_disagreement WHERE project_id = %s",
            "DELETE FROM judging_judgerun WHERE project_id = %s",
            "DELETE FROM judging_judge WHERE project_id = %s",
            "DELETE FROM curation_recordsearchtext WHERE project_id = %s",
            "DELETE FROM curation_record WHERE project_id = %s",
        ):
            cursor.execute(statement, [project_id])


if __name__ == "__main__":
    main()
