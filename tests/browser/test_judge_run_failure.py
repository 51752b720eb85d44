"""A judge run against an endpoint that refuses connections, started in a real browser and run
by a real worker: it stops within seconds as failed, and the page says why."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from judging.models import JudgeRun
from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.fake_llm import refusing_base_url
from tests.judging.judge_runs import make_judge, numbered_records

pytestmark = pytest.mark.browser

REASON = "Could not reach the endpoint: the connection was refused, dropped or never made."


def test_a_run_against_a_refusing_endpoint_ends_as_failed_within_seconds(
    cast: Cast, page: Page, page_events: PageEvents, log_in, celery_worker: None
) -> None:
    numbered_records(cast.project, 50)
    make_judge(cast.project, refusing_base_url(), name="Nobody home", concurrency=4)
    log_in(cast.manager)
    page.goto(f"/p/{cast.project.slug}/runs/new/")
    page.get_by_label("Judge").select_option(label="Nobody home")

    started = time.monotonic()
    page.get_by_role("button", name="Start the run").click()

    progress = page.locator("#run-progress")
    expect(progress.locator(".badge.run-failed")).to_have_text("Failed")
    took = time.monotonic() - started
    expect(progress.locator(".run-error")).to_contain_text("records in a row failed: " + REASON)
    errors = progress.locator(".run-errors")
    expect(errors).to_contain_text("Most frequent errors")
    expect(errors.locator("td").first).to_have_text(REASON)
    expect(progress.get_by_role("button", name="Resume")).to_be_visible()
    expect(progress.get_by_role("button", name="Retry the errored records")).to_be_visible()
    # The verdict table followed the run without a reload.
    expect(page.locator("#run-verdicts .badge.parse-error").first).to_be_visible()
    assert took < 8, f"The run took {took:.1f} s to fail."
    run = JudgeRun.objects.get()
    assert run.state == JudgeRun.State.FAILED and run.error_count < 10
    assert page_events.console_errors == [] and page_events.errors == []
