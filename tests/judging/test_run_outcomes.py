"""Runs that tell the truth: a run ends finished, finished with errors, or failed; an endpoint
that fails for records in a row stops the run early; the page and the API lead with the most
frequent errors; "Retry the errored records" judges them again without a second verdict."""

from __future__ import annotations

import re
import threading

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from curation.errors import Conflict
from judging.models import JudgeRun, Verdict
from judging.protocols.rjudge import DECIDE
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_run_create, judge_run_retry_errors
from tests.curation.api_clients import api_key
from tests.fake_llm import (
    ChatRequest,
    FakeLLM,
    Reply,
    answer,
    default_reply,
    malformed,
    refusing_base_url,
    server_error,
)
from tests.judging.judge_runs import make_judge, numbered_records, record_number

State = JudgeRun.State
UNREACHABLE = "Could not reach the endpoint: the connection was refused, dropped or never made."


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client


def run_to_its_end(cast, base_url: str, **judge_fields: object) -> JudgeRun:
    judge = make_judge(cast.project, base_url, **judge_fields)
    run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_an_unreachable_endpoint_stops_the_run_as_failed_after_three_records(cast) -> None:
    numbered_records(cast.project, 40)

    run = run_to_its_end(cast, refusing_base_url(), concurrency=2, max_retries=0)

    assert run.state == State.FAILED and run.outcome_display == "Failed"
    # Three in a row stop it; a fourth may have failed beside the third (two calls at once).
    assert re.fullmatch(
        rf"Stopped after [34] records in a row failed: {re.escape(UNREACHABLE)}", run.error
    )
    assert 3 <= run.verdicts.count() == run.error_count <= 4
    assert run.finished_at is not None


@pytest.mark.parametrize(
    ("status", "streak", "reason"),
    [
        (401, 3, "The endpoint answered 401: it refused the API key or access."),
        (403, 3, "The endpoint answered 403: it refused the API key or access."),
        (404, 3, "The endpoint answered 404: no such model or path."),
        (503, 10, "The endpoint answered 503: a server error, after every retry."),
    ],
)
def test_an_endpoint_failing_every_call_stops_the_run_early(
    cast, status: int, streak: int, reason: str
) -> None:
    numbered_records(cast.project, 60)
    with FakeLLM(lambda request: server_error(status)) as llm:
        run = run_to_its_end(cast, llm.base_url, concurrency=2, max_retries=0)
        asked = llm.request_count

    assert run.state == State.FAILED
    assert re.fullmatch(
        rf"Stopped after \d+ records in a row failed: {re.escape(reason)}", run.error
    )
    assert streak <= run.error_count <= streak + 1
    assert asked <= streak + 2, "The run went on calling an endpoint that failed every call."


def test_answers_between_failures_break_the_streak_and_the_run_finishes_with_errors(
    cast,
) -> None:
    numbered_records(cast.project, 30)

    def every_third_fails(request: ChatRequest) -> Reply:
        return server_error(503) if record_number(request) % 3 == 0 else default_reply(request)

    with FakeLLM(every_third_fails) as llm:
        run = run_to_its_end(cast, llm.base_url, concurrency=1, max_retries=0)

    assert run.state == State.SUCCEEDED
    assert (run.valid_count, run.error_count) == (20, 10)
    assert (run.outcome, run.outcome_display) == ("finished_with_errors", "Finished with errors")
    page = cast.client_for("reviewer").get(
        reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    )
    content = page.content.decode()
    # Never green over errors: the badge says so, in the warning colour.
    assert '<span class="badge run-finished_with_errors">Finished with errors</span>' in content
    assert 'run-finished"' not in content
    assert "Most frequent errors" in content
    assert "<td>The endpoint answered 503: a server error, after every retry.</td><td>10</td>" in (
        content
    )
    body = api_for(cast.reviewer).get(
        reverse("judging_api:run_detail", args=[cast.project.slug, run.pk])
    )
    assert (body.json()["state"], body.json()["outcome"]) == ("succeeded", "finished_with_errors")
    assert body.json()["top_errors"] == [
        {"error": "The endpoint answered 503: a server error, after every retry.", "records": 10}
    ]


def test_a_run_whose_every_record_failed_ends_as_failed_with_its_reason(cast) -> None:
    # A malformed answer shows the endpoint up, so the run goes on; but nothing was judged.
    numbered_records(cast.project, 5)
    with FakeLLM(lambda request: malformed()) as llm:
        run = run_to_its_end(cast, llm.base_url, concurrency=1)

    assert (run.state, run.error_count, run.valid_count) == (State.FAILED, 5, 0)
    assert run.error == (
        "Every record failed. The most frequent error: The endpoint's answer was not valid JSON."
    )
    listed = cast.client_for("reviewer").get(reverse("judging:run_list", args=[cast.project.slug]))
    assert '<span class="badge run-failed">Failed</span>' in listed.content.decode()


def test_a_run_without_errors_is_finished_in_green(cast) -> None:
    numbered_records(cast.project, 3)
    with FakeLLM() as llm:
        run = run_to_its_end(cast, llm.base_url)

    page = cast.client_for("reviewer").get(
        reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    )
    assert '<span class="badge run-finished">Finished</span>' in page.content.decode()
    assert "Most frequent errors" not in page.content.decode()
    assert "Retry the errored records" not in page.content.decode()


class FailsOnce:
    """Answers every record, but the first request about an even record gets a 503."""

    def __init__(self) -> None:
        self.failed: set[int] = set()
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        number = record_number(request)
        with self.lock:
            fail = number % 2 == 0 and number not in self.failed
            self.failed.add(number)
        if fail:
            return server_error(503)
        return answer("unsafe" if request.last_message == DECIDE else "Risky.")


def test_retrying_the_errored_records_replaces_their_errors_without_a_second_verdict(
    cast, django_capture_on_commit_callbacks
) -> None:
    numbered_records(cast.project, 8)
    with FakeLLM(FailsOnce()) as llm:
        run = run_to_its_end(cast, llm.base_url, concurrency=1, max_retries=0)
        assert (run.valid_count, run.error_count, run.outcome) == (4, 4, "finished_with_errors")
        kept = set(run.verdicts.filter(parse_status="valid").values_list("id", flat=True))
        manager = cast.client_for("manager")
        detail = reverse("judging:run_detail", args=[cast.project.slug, run.pk])
        assert "Retry the errored records" in manager.get(detail).content.decode()

        with django_capture_on_commit_callbacks() as callbacks:
            manager.post(reverse("judging:run_retry_errors", args=[cast.project.slug, run.pk]))
        run.refresh_from_db()
        assert (run.state, run.retry_errors, len(callbacks)) == (State.PENDING, True, 1)
        retrying = manager.get(detail).content.decode()
        assert "Judging the 4 errored records again" in retrying
        judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    verdicts = list(run.verdicts.all())
    assert (run.state, run.outcome, run.retry_errors) == (State.SUCCEEDED, "finished", False)
    assert len(verdicts) == len({verdict.record_id for verdict in verdicts}) == 8
    assert (run.valid_count, run.error_count) == (8, 0)
    # The records answered the first time kept their verdicts; only the errors were judged again.
    assert kept <= {verdict.pk for verdict in verdicts}
    # Two calls for each record answered, one for each that failed, two for each retried.
    assert llm.request_count == 4 * 2 + 4 + 4 * 2
    assert run.tokens_in == sum(verdict.tokens_in for verdict in verdicts)


def test_only_a_run_that_ended_with_errors_can_retry_them(cast) -> None:
    numbered_records(cast.project, 2)
    judge = make_judge(cast.project, refusing_base_url())
    pending = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
    with FakeLLM() as llm:
        clean = run_to_its_end(cast, llm.base_url, name="Clean")

    for run in (pending, clean):
        with pytest.raises(Conflict):
            judge_run_retry_errors(actor=cast.manager, run=run)
    refused = api_for(cast.manager).post(
        reverse("judging_api:run_retry_errors", args=[cast.project.slug, clean.pk])
    )
    assert refused.status_code == 409


def test_the_api_retries_the_errored_records(cast) -> None:
    numbered_records(cast.project, 4)
    with FakeLLM(FailsOnce()) as llm:
        run = run_to_its_end(cast, llm.base_url, concurrency=1, max_retries=0)

    retried = api_for(cast.manager).post(
        reverse("judging_api:run_retry_errors", args=[cast.project.slug, run.pk])
    )

    assert retried.status_code == 202
    assert (retried.json()["state"], retried.json()["retry_errors"]) == ("pending", True)
    assert Verdict.objects.filter(run=run).count() == 4


def test_the_verdict_table_follows_the_progress_while_the_run_goes_on(cast) -> None:
    numbered_records(cast.project, 3)
    with FakeLLM() as llm:
        run = run_to_its_end(cast, llm.base_url)
    JudgeRun.objects.filter(pk=run.pk).update(state=State.RUNNING)
    url = reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    client = cast.client_for("reviewer")

    polled = client.get(url, {"parse_status": "valid"}, HTTP_HX_REQUEST="true")
    JudgeRun.objects.filter(pk=run.pk).update(state=State.SUCCEEDED)
    last = client.get(url, {"parse_status": "valid"}, HTTP_HX_REQUEST="true")

    content = polled.content.decode()
    assert polled.status_code == 200
    # The poll keeps the page's filter, and brings the verdicts table with the progress.
    assert f'hx-get="{url}?parse_status=valid"' in content
    assert '<div id="run-verdicts" hx-swap-oob="true">' in content
    assert content.count('class="badge parse-valid"') == 3
    assert last.status_code == 286 and last.content.decode().count('class="badge parse-') == 3
