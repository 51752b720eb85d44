"""A run whose calls would wait long for their turn at the connection's limits gives its worker
back and comes back later, and a run cancelled while its calls wait stops at once."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from judging.limits import pause_connection
from judging.models import JudgeRun, RunChunk
from judging.services.run_engine import execution, judge_run_execute
from judging.services.runs import judge_run_cancel, judge_run_create
from tests.fake_llm import FakeLLM
from tests.judging.judge_runs import empty_buckets, make_connection, make_judge, numbered_records

State = JudgeRun.State


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, int, float]]:
    """The jobs the run sends itself, instead of to the workers."""
    jobs: list[tuple[str, int, float]] = []
    monkeypatch.setattr(
        execution,
        "job_send",
        lambda task, run_id, countdown: jobs.append((task, run_id, countdown)),
    )
    return jobs


def test_a_run_that_would_wait_long_for_its_turn_steps_aside_and_comes_back(
    cast, settings, sent
) -> None:
    settings.JUDGE_LIMIT_PATIENCE_SECONDS = 1
    empty_buckets(settings.REDIS_URL)
    numbered_records(cast.project, 5)
    with FakeLLM() as llm:
        connection = make_connection(llm.base_url, requests_per_minute=6000)
        judge = make_judge(cast.project, "", connection=connection)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        # A 429 asked every worker to wait 20 s.
        pause_connection(connection.pk, 20)

        started = time.monotonic()
        judge_run_execute(run_id=run.pk)
        stepped_aside_after = time.monotonic() - started
        waiting = JudgeRun.objects.get(pk=run.pk)
        chunks = set(RunChunk.objects.filter(run=run).values_list("state", flat=True))
        calls_while_paused = llm.request_count

        empty_buckets(settings.REDIS_URL)
        judge_run_execute(run_id=run.pk)

    # Well before the pause ends (loading the client takes a moment on a busy machine).
    assert stepped_aside_after < 8, "the run held its worker while it waited"
    assert waiting.state == State.RUNNING and waiting.done_count == 0
    assert chunks == {RunChunk.State.WAITING}
    assert calls_while_paused == 0
    [(task, run_id, countdown)] = sent
    assert (task, run_id) == ("judging.tasks.run_judge", run.pk)
    assert 20 - stepped_aside_after - 1 <= countdown <= 20
    run.refresh_from_db()
    assert run.state == State.SUCCEEDED and run.valid_count == 5


@pytest.mark.django_db(transaction=True)
def test_a_run_cancelled_while_its_calls_wait_for_their_turn_stops_at_once(
    cast, settings, sent
) -> None:
    empty_buckets(settings.REDIS_URL)
    numbered_records(cast.project, 5)
    with FakeLLM() as llm:
        connection = make_connection(llm.base_url, requests_per_minute=6000)
        judge = make_judge(cast.project, "", connection=connection)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        pause_connection(connection.pk, 8)

        def cancel() -> None:
            judge_run_cancel(actor=cast.manager, run=run)
            connections.close_all()

        threading.Timer(1.5, cancel).start()
        started = time.monotonic()
        judge_run_execute(run_id=run.pk)
        stopped_after = time.monotonic() - started
        # Past the pause: a call still waiting would have gone out by now.
        time.sleep(8)

    run.refresh_from_db()
    assert stopped_after < 4
    assert run.state == State.CANCELLED
    assert llm.request_count == 0
    assert sent == []
