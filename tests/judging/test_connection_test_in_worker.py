"""Testing a judge's connection hands one short call to a worker: the page and the API answer at
once, and the page polls the result until it comes, then stops."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from curation.models import AuditEvent
from judging.models import ConnectionCheck
from tests.conftest import Cast
from tests.curation.api_clients import api_key
from tests.fake_llm import FakeLLM, answer, hang
from tests.judging.judge_runs import make_judge

STOP_POLLING = 286


def poll(client, url: str, *, seconds: float = 30) -> object:
    """What htmx does: GET the result every so often until the answer says to stop."""
    deadline = time.monotonic() + seconds
    while True:
        response = client.get(url, HTTP_HX_REQUEST="true")
        if response.status_code == STOP_POLLING:
            return response
        assert response.status_code == 200
        assert time.monotonic() < deadline, "the test never ended"
        time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
def test_a_worker_tests_the_connection_and_the_page_polls_until_it_answers(
    cast: Cast, celery_worker: None
) -> None:
    client = cast.client_for("manager")
    with FakeLLM(lambda request: answer("OK"), latency=0.5) as llm:
        judge = make_judge(cast.project, llm.base_url)
        started = time.monotonic()
        pending = client.post(
            reverse("judging:judge_test", args=[cast.project.slug, judge.pk]),
            HTTP_HX_REQUEST="true",
        )
        answered_in = time.monotonic() - started
        check = ConnectionCheck.objects.get(judge=judge)
        url = reverse("judging:judge_test_detail", args=[cast.project.slug, judge.pk, check.pk])

        done = poll(client, url)

    assert answered_in < 0.5, "the web request waited for the endpoint"
    assert f'hx-get="{url}"' in pending.content.decode()
    assert 'hx-trigger="every 1s"' in pending.content.decode()
    assert "Connected" in done.content.decode()
    assert "fake-judge-1 answered in" in done.content.decode()
    assert "hx-get" not in done.content.decode()
    assert llm.request_count == 1 and llm.requests[0].body["max_tokens"] == 5
    assert AuditEvent.objects.filter(action="judging.connection.tested").count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_api_accepts_a_test_and_reports_its_failure(cast: Cast, celery_worker: None) -> None:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_key(cast.manager)}")
    with FakeLLM(lambda request: hang(3)) as llm:
        judge = make_judge(cast.project, llm.base_url, timeout_seconds=1)

        accepted = api.post(reverse("judging_api:judge_test", args=[cast.project.slug, judge.pk]))
        deadline = time.monotonic() + 30
        while (result := api.get(accepted["Location"]).json())["state"] in ("pending", "running"):
            assert time.monotonic() < deadline, "the test never ended"
            time.sleep(0.2)

    assert accepted.status_code == 202
    assert accepted.json()["state"] == "pending"
    assert result["state"] == "failed"
    assert result["message"] == "No answer within 1 s, after every retry."
    assert result["abandoned"] is False


def test_a_test_no_worker_takes_ends_as_a_failure_a_minute_on(cast: Cast) -> None:
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    check = judge.connection_checks.create(connection=judge.connection, model=judge.model)
    ConnectionCheck.objects.filter(pk=check.pk).update(
        created_at=check.created_at - timedelta(minutes=2)
    )
    url = reverse("judging:judge_test_detail", args=[cast.project.slug, judge.pk, check.pk])

    response = cast.client_for("manager").get(url, HTTP_HX_REQUEST="true")

    assert response.status_code == STOP_POLLING
    assert "No worker finished the test within a minute" in response.content.decode()
