"""One judge run spread over two and three real Celery workers, on the suite's Redis and
PostgreSQL, against the fake endpoint: every worker takes chunks of it, one killed loses nothing,
and the connection's limits and pauses hold for all of them together."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from curation.services.projects import project_create
from judging.limits import Limits
from judging.models import JudgeRun, RunChunk, Verdict
from judging.services.runs import judge_run_create
from tests.factories import UserFactory
from tests.fake_llm import ChatRequest, FakeLLM, Reply, default_reply, rate_limited
from tests.judging.judge_runs import empty_buckets, make_connection, make_judge, numbered_records

TIMEOUT = 120
# A worker that dies is taken over two seconds after its chunk's last lease.
WORKER_ENV = {"JUDGE_RUN_STALE_SECONDS": "2"}

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def workers(start_worker, settings, tmp_path: Path) -> Callable[[int], list[subprocess.Popen]]:
    """Start n workers and wait until each is ready, so that all take part from the start."""
    settings.JUDGE_RUN_CHUNK_SIZE = 10
    empty_buckets(settings.REDIS_URL)

    def start(count: int) -> list[subprocess.Popen]:
        processes = [start_worker(f"worker{number}", env=WORKER_ENV) for number in range(count)]
        for number, process in enumerate(processes):
            log = tmp_path / f"worker{number}.log"
            wait_for(lambda log=log: " ready." in log.read_text(), "the workers to start", process)
        return processes

    return start


def wait_for(condition: Callable[[], bool], what: str, *processes: subprocess.Popen) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert all(process.poll() is None for process in processes), f"A worker stopped: {what}"
        assert time.monotonic() < deadline, f"Timed out waiting for {what}."
        time.sleep(0.1)


def finished(run: JudgeRun) -> Callable[[], bool]:
    return lambda: JudgeRun.objects.get(pk=run.pk).state not in ("pending", "running")


def assert_one_verdict_per_record(run: JudgeRun) -> None:
    run.refresh_from_db()
    record_ids = list(Verdict.objects.filter(run=run).values_list("record_id", flat=True))
    assert run.state == JudgeRun.State.SUCCEEDED
    assert len(record_ids) == len(set(record_ids)) == run.total
    assert set(record_ids) == set(run.record_ids)
    assert run.valid_count == run.total


def workers_of(run: JudgeRun) -> set[str]:
    return set(RunChunk.objects.filter(run=run).values_list("worker", flat=True))


def sent_in_one_second(times: list[float]) -> int:
    """The most of these moments that fall within any one second."""
    times = sorted(times)
    return max(
        sum(1 for other in times[index:] if other - moment <= 1.0)
        for index, moment in enumerate(times)
    )


def test_a_run_spread_over_three_workers_ends_with_one_verdict_per_record(workers) -> None:
    manager = UserFactory()
    project = project_create(actor=manager, name="Spread", slug="spread")
    numbered_records(project, 150)
    with FakeLLM(latency=0.05) as llm:
        judge = make_judge(project, llm.base_url, concurrency=4, timeout_seconds=10)
        processes = workers(3)
        run = judge_run_create(actor=manager, project=project, judge=judge)
        wait_for(finished(run), "the run to finish", *processes)

    assert_one_verdict_per_record(run)
    assert workers_of(run) == {f"worker{number}@{os.uname().nodename}" for number in range(3)}
    assert not RunChunk.objects.filter(run=run).exclude(state="done").exists()


def test_killing_one_of_two_workers_mid_run_loses_nothing(workers) -> None:
    manager = UserFactory()
    project = project_create(actor=manager, name="Killed", slug="killed")
    numbered_records(project, 150)
    with FakeLLM(latency=0.05) as llm:
        judge = make_judge(project, llm.base_url, concurrency=4, timeout_seconds=10)
        doomed, survivor = workers(2)
        run = judge_run_create(actor=manager, project=project, judge=judge)
        verdicts = Verdict.objects.filter(run=run)
        doomed_chunks = RunChunk.objects.filter(run=run, worker__startswith="worker0@")
        wait_for(lambda: doomed_chunks.filter(state="done").exists(), "a chunk done", doomed)
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=20)
        held = list(doomed_chunks.filter(state="taken").values_list("number", flat=True))
        assert verdicts.count() < run.total
        wait_for(finished(run), "the run to finish", survivor)

    assert_one_verdict_per_record(run)
    # The chunks the dead worker held were taken over by the other.
    assert held
    taken_over = RunChunk.objects.filter(run=run, number__in=held)
    assert set(taken_over.values_list("worker", flat=True)) == {f"worker1@{os.uname().nodename}"}


def test_three_workers_together_never_exceed_the_connections_requests_per_minute(
    workers,
) -> None:
    manager = UserFactory()
    project = project_create(actor=manager, name="Limited", slug="limited")
    numbered_records(project, 40)
    with FakeLLM() as llm:
        # 600 a minute: 10 a second, and a burst of 10 (JUDGE_LIMIT_BURST_SECONDS, 1 s).
        connection = make_connection(llm.base_url, requests_per_minute=600)
        judge = make_judge(project, "", connection=connection, concurrency=8, timeout_seconds=10)
        processes = workers(3)
        run = judge_run_create(actor=manager, project=project, judge=judge)
        wait_for(finished(run), "the run to finish", *processes)
        arrivals = [request.at for request in llm.requests]

    assert_one_verdict_per_record(run)
    assert len(workers_of(run)) == 3
    limit = Limits(connection.pk, requests_per_minute=600)
    # Any one second: the burst and a second's rate at most, and one more for the moments a
    # request spends between its grant and its arrival, which differ from one to the next.
    assert sent_in_one_second(arrivals) <= limit.burst() + 10 + 1
    # 80 calls at 10 a second after a burst of 10 take 7 s at least.
    assert max(arrivals) - min(arrivals) >= 6.5


def test_a_429_with_retry_after_pauses_every_worker(workers) -> None:
    told: list[float] = []

    def respond(request: ChatRequest) -> Reply:
        if request.number == 60:
            told.append(request.at)
            return rate_limited(retry_after=3)
        return default_reply(request)

    manager = UserFactory()
    project = project_create(actor=manager, name="Paused", slug="paused")
    numbered_records(project, 90)
    with FakeLLM(respond, latency=0.05) as llm:
        judge = make_judge(project, llm.base_url, concurrency=4, timeout_seconds=10)
        processes = workers(3)
        run = judge_run_create(actor=manager, project=project, judge=judge)
        wait_for(finished(run), "the run to finish", *processes)
        arrivals = [request.at for request in llm.requests]

    assert_one_verdict_per_record(run)
    assert len(workers_of(run)) == 3
    [at] = told
    # Requests sent before the 429 came back may arrive in its first moments (its answer takes
    # 50 ms); after that, none from any worker until the 3 s are over.
    during_pause = [moment for moment in arrivals if at + 0.5 < moment < at + 2.8]
    assert during_pause == []
    assert any(moment >= at + 2.8 for moment in arrivals)
