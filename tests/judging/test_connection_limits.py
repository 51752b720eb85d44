"""A connection's limits hold for every judge of it: calls at once per run, and requests per
minute across every run and worker (counted in the shared cache)."""

from __future__ import annotations

import secrets

import pytest

from judging import client
from judging.services.judges import endpoint_of, judge_snapshot
from tests.judging.judge_runs import make_connection, make_judge


def test_a_judge_calls_at_most_as_many_at_once_as_its_connection_allows(cast) -> None:
    connection = make_connection("http://127.0.0.1:9/v1", max_concurrency=4)
    judge = make_judge(cast.project, "", connection=connection, concurrency=16)

    assert endpoint_of(judge_snapshot(judge)).concurrency == 4


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now
        self.slept: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch) -> Clock:
    # 15 s into a minute of its own: no count of an earlier test run is found in the cache.
    fake = Clock(now=60 * (29_000_000 + secrets.randbelow(10**9)) + 15)
    monkeypatch.setattr(client.time, "time", fake.time)
    monkeypatch.setattr(client.time, "sleep", fake.sleep)
    return fake


def test_requests_past_the_minutes_limit_wait_for_the_next_minute(db, clock: Clock) -> None:
    connection = make_connection("http://127.0.0.1:9/v1", requests_per_minute=2)

    for _ in range(3):
        client.wait_for_rate(connection.pk, 2)

    # The first two go at once; the third waits out the 45 s left of the minute.
    assert len(clock.slept) == 1 and 45 <= clock.slept[0] <= 45.1
