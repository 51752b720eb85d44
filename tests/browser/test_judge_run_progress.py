"""A run's page in a real browser: the progress bar follows the worker, and stops polling when
the run ends."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from judging.models import JudgeRun
from judging.services import runs as runs_service
from judging.services.runs import judge_run_create
from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.judging.judge_runs import make_judge, numbered_records

pytestmark = pytest.mark.browser


def test_the_progress_bar_follows_the_run_and_stops_when_it_ends(
    cast: Cast, page: Page, page_events: PageEvents, log_in, monkeypatch
) -> None:
    # The worker is played by this test, writing the run's row as a worker would.
    monkeypatch.setattr(runs_service, "job_send_after_commit", lambda task, run_id: None)
    numbered_records(cast.project, 5)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
    rows = JudgeRun.objects.filter(pk=run.pk)
    rows.update(state="running", valid_count=1, rate=0.5, heartbeat_at=timezone.now())
    polls: list[str] = []
    page.on(
        "request",
        lambda request: polls.append(request.url) if request.headers.get("hx-request") else None,
    )
    log_in(cast.manager)

    page.goto(f"/p/{cast.project.slug}/runs/{run.pk}/")
    progress = page.locator("#run-progress")
    expect(progress).to_contain_text("1 of 5 records judged (20%)")
    expect(progress).to_contain_text("About 8 s left")
    expect(progress.locator("progress")).to_have_attribute("value", "1")

    rows.update(valid_count=3, error_count=1, heartbeat_at=timezone.now())
    expect(progress).to_contain_text("4 of 5 records judged (80%)")

    rows.update(state="succeeded", valid_count=4, finished_at=timezone.now(), rate=None)
    expect(progress).to_contain_text("5 of 5 records judged (100%)")
    expect(progress.locator("progress")).to_have_count(0)
    expect(progress.get_by_role("button", name="Cancel the run")).to_have_count(0)
    polled = len(polls)
    page.wait_for_timeout(2500)
    assert len(polls) == polled, "The page went on polling a finished run."
    assert page_events.console_errors == [] and page_events.errors == []
