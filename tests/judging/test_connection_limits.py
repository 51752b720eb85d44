"""A connection's limits hold for every judge of it: calls at once per run, and requests and
tokens per minute across every run and worker (buckets in Redis, judging/limits.py)."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from judging import limits
from judging.client import ChatClient
from judging.limits import Limits, buckets, pause_connection, wait_for_turn
from judging.services.judges import endpoint_of, judge_snapshot
from tests.fake_llm import FakeLLM, answer, rate_limited
from tests.judging.judge_runs import empty_buckets, make_connection, make_judge

PROMPT = [{"role": "user", "content": "Is this safe?"}]


@pytest.fixture
def fresh_buckets(settings) -> None:
    """No buckets or pauses left in Redis by an earlier test of the same connection id."""
    empty_buckets(settings.REDIS_URL)


def sent_in_one_second(times: list[float]) -> int:
    """The most of these moments that fall within any one second."""
    times = sorted(times)
    return max(
        sum(1 for other in times[index:] if other - moment <= 1.0)
        for index, moment in enumerate(times)
    )


def test_a_judge_calls_at_most_as_many_at_once_as_its_connection_allows(cast) -> None:
    connection = make_connection("http://127.0.0.1:9/v1", max_concurrency=4)
    judge = make_judge(cast.project, "", connection=connection, concurrency=16)

    assert endpoint_of(judge_snapshot(judge)).concurrency == 4


def test_threads_together_never_send_more_than_the_requests_per_minute_allow(
    db, fresh_buckets
) -> None:
    # 240 a minute: 4 a second, a burst of 4 after a quiet spell.
    shared = Limits(connection_id=1, requests_per_minute=240)
    granted: list[float] = []

    def draw() -> None:
        wait_for_turn(shared, 10)
        granted.append(time.monotonic())

    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: draw(), range(16)))

    assert shared.burst() == 4
    # The burst at once, then 4 a second: 12 more take 3 s.
    assert 2.7 <= granted[-1] - started <= 3.6
    assert sent_in_one_second(granted) <= shared.burst() + 4


def test_tokens_past_the_tokens_per_minute_wait(db, fresh_buckets) -> None:
    # 600 tokens a minute: 10 a second, and as many in a burst.
    shared = Limits(connection_id=1, tokens_per_minute=600)

    started = time.monotonic()
    for _ in range(3):
        wait_for_turn(shared, 10)

    # The first draws the burst; each of the next two waits a second for ten more tokens.
    assert 1.8 <= time.monotonic() - started <= 2.6


def test_tokens_an_answer_took_beyond_its_estimate_hold_back_the_next_request(
    cast, fresh_buckets
) -> None:
    with FakeLLM(lambda request: answer("unsafe", prompt_tokens=3_000)) as llm:
        # 60,000 tokens a minute: 1,000 a second, and as many in a burst.
        connection = make_connection(llm.base_url, tokens_per_minute=60_000)
        endpoint = endpoint_of(judge_snapshot(make_judge(cast.project, "", connection=connection)))
        with ChatClient(endpoint) as client:
            client.complete(PROMPT)
            asked = time.monotonic()
            client.complete(PROMPT)
            waited = time.monotonic() - asked

    # The first drew an estimate of its prompt (a few dozen tokens), then told 3,005 used: the
    # bucket owes 2,000 and more, which take two seconds to come back.
    assert 1.8 <= waited <= 3


def test_a_429_with_retry_after_pauses_every_client_of_the_connection(cast, fresh_buckets) -> None:
    with FakeLLM() as llm:
        connection = make_connection(llm.base_url)
        endpoint = endpoint_of(judge_snapshot(make_judge(cast.project, "", connection=connection)))
        llm.script(rate_limited(retry_after=2))
        # The first is told to wait 2 s, and waits, retrying afterwards.
        with (
            ChatClient(endpoint) as first,
            ChatClient(endpoint) as second,
            ThreadPoolExecutor(1) as pool,
        ):
            pending = pool.submit(first.complete, PROMPT)
            while llm.request_count < 1:
                time.sleep(0.01)
            time.sleep(0.2)
            asked = time.monotonic()
            second.complete(PROMPT)
            answered = time.monotonic()
            pending.result()

    # The second, which was told nothing, waited out the same pause.
    assert answered - asked >= 1.6
    assert llm.request_count == 3


def test_without_redis_the_limits_hold_for_the_worker_process_and_say_so(
    db, settings, caplog
) -> None:
    settings.REDIS_URL = ""
    limits._buckets.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="judging.limits"):
            assert isinstance(buckets(), limits._LocalBuckets)
            shared = Limits(connection_id=1, requests_per_minute=120)
            started = time.monotonic()
            for _ in range(4):
                wait_for_turn(shared, 10)
            pause_connection(1, 0.5)
            wait_for_turn(shared, 10)
    finally:
        limits._buckets.cache_clear()

    # A burst of 2, then 2 a second: the last two at 0.5 s and 1 s; then the pause.
    assert 1.4 <= time.monotonic() - started <= 2.2
    assert "hold for each worker process alone" in caplog.text
