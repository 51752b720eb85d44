"""A judge's Test connection in a real browser: the result arrives by polling once a worker has
made the call, and the polling stops with it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from judging.models import ConnectionCheck
from judging.services import judges as judges_service
from judging.services.judges import connection_check_execute
from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.fake_llm import FakeLLM, answer
from tests.judging.judge_runs import make_judge

pytestmark = pytest.mark.browser


def test_the_result_of_a_connection_test_arrives_by_polling(
    cast: Cast, page: Page, page_events: PageEvents, log_in, monkeypatch
) -> None:
    # The worker is played by this test, once the page shows the test waiting.
    monkeypatch.setattr(judges_service, "job_send_after_commit", lambda task, check_id: None)
    polls: list[str] = []
    page.on(
        "request",
        lambda request: polls.append(request.url) if request.headers.get("hx-request") else None,
    )
    with FakeLLM(lambda request: answer("OK")) as llm:
        judge = make_judge(cast.project, llm.base_url)
        log_in(cast.manager)
        page.goto(f"/p/{cast.project.slug}/judges/{judge.pk}/")

        page.get_by_role("button", name="Test connection").click()
        result = page.locator("#connection")
        expect(result).to_contain_text("Waiting for a worker")
        connection_check_execute(check_id=ConnectionCheck.objects.get(judge=judge).pk)
        expect(result).to_contain_text("Connected")

    expect(result).to_contain_text("fake-judge-1 answered in")
    polled = len(polls)
    page.wait_for_timeout(2500)
    assert len(polls) == polled, "The page went on polling a finished test."
    assert page_events.console_errors == [] and page_events.errors == []
