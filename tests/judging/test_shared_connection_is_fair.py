"""One project cannot stall another on a shared connection: a judge with absurd parameters,
a run whose every call the provider refuses and twenty connection tests against a hanging
endpoint, all in one project, beside another project's run on the same connection, with two
real workers on the suite's Redis and PostgreSQL and the fake endpoint over HTTP. The other
run finishes, at its share of the connection's requests per minute."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.urls import reverse

from curation.services.projects import project_create
from judging.limits import Limits
from judging.models import ConnectionCheck, Judge, JudgeRun
from judging.services.runs import judge_run_create
from tests.factories import UserFactory
from tests.fake_llm import ChatRequest, FakeLLM, Reply, default_reply, hang, revealing_error
from tests.judging.judge_runs import (
    empty_buckets,
    make_connection,
    make_judge,
    numbered_records,
    record_number,
)
from tests.judging.test_limits_cannot_be_poisoned import tokens_left
from tests.judging.test_run_across_workers import sent_in_one_second, wait_for
from tests.judging.test_run_api import api_for

pytestmark = pytest.mark.django_db(transaction=True)

# 120 requests a minute: 2 a second, shared by both projects.
REQUESTS_PER_MINUTE = 120
TEST_PROMPT = "Reply with the single word OK."
# The first project's records are numbered from here, the other's from 1.
FIRST_PROJECTS_RECORDS = 1001
WORKER_ENV = {
    "JUDGE_RUN_STALE_SECONDS": "10",
    "JUDGE_LIMIT_PATIENCE_SECONDS": "3",
    "JUDGE_RUN_SLICE_SECONDS": "5",
}


def respond(request: ChatRequest) -> Reply:
    """Tests hang; the first project's records are refused (its judge asks for the most
    tokens the connection allows, which the provider will not give); the other's answered."""
    if TEST_PROMPT in request.text:
        return hang(60)
    if record_number(request) >= FIRST_PROJECTS_RECORDS:
        return revealing_error(400)
    return default_reply(request)


def is_run_call(request: ChatRequest) -> bool:
    return TEST_PROMPT not in request.text


def test_one_projects_absurd_judge_and_tests_do_not_stall_another_projects_run(
    cast, start_worker, settings, tmp_path: Path
) -> None:
    settings.JUDGE_RUN_CHUNK_SIZE = 10
    # A run spreads over as many workers as there are.
    settings.JUDGE_RUN_MAX_WORKERS = 2
    empty_buckets(settings.REDIS_URL)
    # Two minutes of calls at the whole limit: still running when the other run ends.
    numbered_records(cast.project, 240, start=FIRST_PROJECTS_RECORDS)
    other_manager = UserFactory()
    other = project_create(actor=other_manager, name="Other", slug="other")
    numbered_records(other, 20)
    api = api_for(cast.manager)
    with FakeLLM(respond) as llm:
        connection = make_connection(
            llm.base_url,
            requests_per_minute=REQUESTS_PER_MINUTE,
            tokens_per_minute=60_000,
            max_tokens=1000,
            max_concurrency=8,
        )
        absurd_fields = {"max_tokens": 1_000_000_000, "temperature": 50}
        refused_judge = api.post(
            reverse("judging_api:judge_list", args=[cast.project.slug]),
            {
                "name": "Absurd",
                "protocol": "rjudge",
                "connection": connection.pk,
                "model": "fake-judge-1",
                "parameters": absurd_fields,
            },
            format="json",
        )
        # One saved before parameters were bounded, and one at the most the connection allows.
        absurd = make_judge(cast.project, "", connection=connection, name="Saved long ago")
        Judge.objects.filter(pk=absurd.pk).update(parameters=absurd_fields)
        absurd.refresh_from_db()
        greedy = make_judge(
            cast.project,
            "",
            connection=connection,
            name="Greedy",
            parameters={"max_tokens": 1000, "temperature": 2},
            timeout_seconds=15,
        )
        judge = make_judge(other, "", connection=connection, timeout_seconds=15)
        processes = [start_worker(f"worker{number}", env=WORKER_ENV) for number in range(2)]
        for number, process in enumerate(processes):
            log = tmp_path / f"worker{number}.log"
            wait_for(lambda log=log: " ready." in log.read_text(), "the workers to start", process)

        absurd_run = judge_run_create(actor=cast.manager, project=cast.project, judge=absurd)
        greedy_run = judge_run_create(actor=cast.manager, project=cast.project, judge=greedy)
        test_url = reverse("judging_api:judge_test", args=[cast.project.slug, greedy.pk])
        tests = [api.post(test_url).status_code for _ in range(20)]
        run = judge_run_create(actor=other_manager, project=other, judge=judge)
        started = time.monotonic()
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).state not in ("pending", "running"),
            "the other project's run to finish",
            *processes,
        )
        took = time.monotonic() - started
        greedy_state = JudgeRun.objects.get(pk=greedy_run.pk).state
        wait_for(
            lambda: ConnectionCheck.objects.filter(state="failed").exists(),
            "the test to end",
            *processes,
        )
        calls = [request for request in llm.requests if is_run_call(request)]

    run.refresh_from_db()
    assert refused_judge.status_code == 400
    assert JudgeRun.objects.get(pk=absurd_run.pk).state == JudgeRun.State.FAILED
    assert sorted(tests) == [202] + [409] * 19
    [check] = ConnectionCheck.objects.all()
    assert check.message == "No answer within 15 s, after every retry."
    assert run.state == JudgeRun.State.SUCCEEDED and run.valid_count == 20

    # Its 40 calls (two a record) went out at its share of the limit at least, with the first
    # project's greedy run going on beside it, which takes the whole limit when alone.
    its_calls = [request.at for request in calls if record_number(request) < 1000]
    first = [request.at for request in calls if record_number(request) >= 1000]
    span = max(its_calls) - min(its_calls)
    beside = [moment for moment in first if min(its_calls) <= moment <= max(its_calls)]
    share = REQUESTS_PER_MINUTE / 60 / 2
    print(
        f"The other run: {len(its_calls)} calls in {span:.1f} s ({len(its_calls) / span:.2f}/s), "
        f"{len(beside)} of the first project's beside them; finished {took:.1f} s after it "
        f"was started; the greedy run was {greedy_state} then"
    )
    assert len(its_calls) == 40
    assert took < 90
    assert greedy_state == JudgeRun.State.RUNNING
    assert len(beside) >= 5
    assert (len(its_calls) - 1) / span >= 0.8 * share
    # The limit held for both together, and the bucket owes a few calls' worth at most, not the
    # thousand tokens each of the hundred refused calls drew.
    limit = Limits(connection.pk, requests_per_minute=REQUESTS_PER_MINUTE)
    assert sent_in_one_second([request.at for request in calls]) <= limit.burst() + 2 + 1
    assert tokens_left(connection.pk) > -5_000
