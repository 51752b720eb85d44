"""A connection's shared limits cannot be poisoned and are shared fairly: a refused or failed
call gives back the tokens it drew, the tokens bucket never owes more than one call may take,
callers take turns by project and then by run, and a caller that would wait too long, or is
told to stop, stops waiting (judging/limits.py)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from django.conf import settings

from judging.client import CallFailed, ChatClient
from judging.limits import Caller, Limits, LimitWait, buckets, pause_connection, wait_for_turn
from judging.services.judges import endpoint_of, judge_snapshot
from tests.fake_llm import FakeLLM, Reply, answer, revealing_error, server_error
from tests.judging.judge_runs import empty_buckets, make_connection, make_judge

PROMPT = [{"role": "user", "content": "Is this safe?"}]


@pytest.fixture
def fresh_buckets(settings) -> None:
    empty_buckets(settings.REDIS_URL)


def tokens_left(connection_id: int) -> float:
    client = redis.Redis.from_url(settings.REDIS_URL)
    key = f"judging:limit:{settings.DATABASES['default']['NAME']}:{connection_id}:tok"
    return float(client.hget(key, "level") or 0)


def client_of(project, connection, **parameters) -> ChatClient:
    judge = make_judge(project, "", connection=connection, max_retries=0, **parameters)
    return ChatClient(endpoint_of(judge_snapshot(judge)))


@pytest.mark.parametrize("refusal", [revealing_error(400), server_error(500)])
def test_a_refused_call_gives_back_the_tokens_it_drew(cast, fresh_buckets, refusal) -> None:
    with FakeLLM(lambda request: refusal) as llm:
        # 60,000 a minute: 1,000 a second, and as many in a burst.
        connection = make_connection(llm.base_url, tokens_per_minute=60_000, max_tokens=50_000)
        with client_of(cast.project, connection, parameters={"max_tokens": 50_000}) as client:
            started = time.monotonic()
            for _ in range(3):
                with pytest.raises(CallFailed):
                    client.complete(PROMPT)
            took = time.monotonic() - started

    # Each drew 50,000 tokens and more: kept, the second would have waited 50 s.
    assert llm.request_count == 3
    assert took < 3
    assert tokens_left(connection.pk) > 0


def test_an_unanswered_call_gives_back_the_tokens_it_drew(cast, fresh_buckets) -> None:
    with FakeLLM(lambda request: Reply(content="late", delay=2)) as llm:
        connection = make_connection(llm.base_url, tokens_per_minute=60_000, max_tokens=30_000)
        judge_fields = {"parameters": {"max_tokens": 30_000}, "timeout_seconds": 1}
        with (
            client_of(cast.project, connection, **judge_fields) as client,
            pytest.raises(CallFailed, match="No answer within 1 s"),
        ):
            client.complete(PROMPT)

    assert tokens_left(connection.pk) > 0


def test_the_bucket_never_owes_more_than_one_call_may_take(cast, fresh_buckets) -> None:
    # An endpoint that claims an absurd usage, as the provider that refused a call of
    # max_tokens 1,000,000,000 left the bucket at -999,999,584.
    absurd = answer("unsafe", prompt_tokens=1_000_000_000)
    with FakeLLM(lambda request: absurd) as llm:
        # 600 a second: at most 36,000 owed, which come back within a minute.
        connection = make_connection(llm.base_url, tokens_per_minute=36_000, max_tokens=100)
        with client_of(cast.project, connection) as client:
            client.complete(PROMPT)
            limits = Limits(connection.pk, tokens_per_minute=36_000)

            wait = buckets().draw(limits, 10)

    assert tokens_left(connection.pk) >= -36_000
    assert 55 <= wait <= 61


def test_a_bucket_poisoned_before_comes_back_within_a_minute(db, fresh_buckets) -> None:
    limits = Limits(connection_id=1, tokens_per_minute=36_000)
    client = redis.Redis.from_url(settings.REDIS_URL)
    key = f"judging:limit:{settings.DATABASES['default']['NAME']}:1:tok"
    client.hset(key, mapping={"level": "-999999584", "at": str(time.time())})

    wait = buckets().draw(limits, 10)

    assert wait <= 61


def test_callers_take_turns_by_project_then_by_run(db, fresh_buckets) -> None:
    # 10 requests a second. Project A runs three judges at 8 threads each, project B one run
    # with a single thread: B still gets half the calls, and A's runs a sixth each.
    limits = Limits(connection_id=1, requests_per_minute=600)
    callers = [Caller("project:A", f"run:{number}") for number in (1, 2, 3)] * 8
    callers.append(Caller("project:B", "run:4"))
    granted: Counter[str] = Counter()
    ending = time.monotonic() + 6

    def draw_until_the_end(caller: Caller) -> None:
        while time.monotonic() < ending:
            wait_for_turn(limits, 10, caller)
            # The last turns of every thread come after the end: not counted.
            if time.monotonic() < ending:
                granted[caller.name] += 1

    with ThreadPoolExecutor(len(callers)) as pool:
        list(pool.map(draw_until_the_end, callers))

    total = sum(granted.values())
    # 6 s at 10 a second, and the burst.
    assert 55 <= total <= 75
    assert granted["run:4"] >= 0.4 * total
    for name in ("run:1", "run:2", "run:3"):
        assert granted[name] >= 0.1 * total


def test_a_caller_that_would_wait_past_its_patience_is_told_how_long(db, fresh_buckets) -> None:
    limits = Limits(connection_id=1, requests_per_minute=60)
    pause_connection(1, 30)

    started = time.monotonic()
    with pytest.raises(LimitWait) as told:
        wait_for_turn(limits, 10, Caller("project:A", "run:1"), patience=2)

    assert time.monotonic() - started < 0.5
    assert 28 <= told.value.seconds <= 30


def test_a_caller_told_to_stop_stops_waiting_at_once(db, fresh_buckets) -> None:
    limits = Limits(connection_id=1, requests_per_minute=60)
    pause_connection(1, 30)
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()

    started = time.monotonic()
    with pytest.raises(LimitWait):
        wait_for_turn(limits, 10, Caller("project:A", "run:1"), stop=stop)

    assert time.monotonic() - started < 1.5


def test_a_caller_that_stepped_aside_holds_back_nobody(db, fresh_buckets) -> None:
    limits = Limits(connection_id=1, requests_per_minute=60)
    wait_for_turn(limits, 10, Caller("project:B", "run:2"))
    # The next request goes out in a second, and would be project A's, never served yet; its
    # run will not wait that long, and steps aside.
    with pytest.raises(LimitWait):
        wait_for_turn(limits, 10, Caller("project:A", "run:1"), patience=0.1)
    time.sleep(1)

    started = time.monotonic()
    wait_for_turn(limits, 10, Caller("project:B", "run:2"))

    assert time.monotonic() - started < 0.2
