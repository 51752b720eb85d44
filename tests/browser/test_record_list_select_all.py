"""Choosing every record that matches the record list's filters, across its pages, by keyboard,
in a real browser: the count is confirmed on the server's page before anything changes."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from curation.models import Record
from tests.browser.conftest import TIMEOUT_MS, PageEvents
from tests.conftest import Cast
from tests.factories import PASSWORD
from tests.hub.matching_records import open_requests, unlabelled_over_two_pages

pytestmark = pytest.mark.browser


@pytest.fixture
def unlabelled(cast: Cast) -> list[Record]:
    return unlabelled_over_two_pages(cast.project)


def test_a_manager_sends_every_match_of_two_pages_to_adjudication_by_keyboard(
    cast: Cast, unlabelled: list[Record], page: Page, page_events: PageEvents, log_in
) -> None:
    log_in(cast.manager)
    page.goto(f"/p/{cast.project.slug}/records/?gold_label=none&per_page=25")
    expect(page.locator("#record-results tbody tr")).to_have_count(25)
    offer = page.get_by_role("button", name="Choose all 30 records that match")
    expect(offer).to_be_hidden()

    page.get_by_role("checkbox", name="Choose every record on this page").focus()
    page.keyboard.press("Space")
    expect(page.get_by_text("All 25 records on this page are chosen.")).to_be_visible()
    offer.focus()
    page.keyboard.press("Enter")

    expect(page.get_by_text("All 30 records that match these filters are chosen.")).to_be_visible()
    expect(page.locator("[data-chosen-count]")).to_have_text("30 chosen")
    expect(page.get_by_role("button", name="Clear the selection")).to_be_focused()
    page.get_by_label("Action").select_option("adjudicate")
    page.get_by_role("button", name="Apply", exact=True).click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Act on all 30 records that match")
    expect(page.get_by_role("status")).to_contain_text("30 records match these filters")
    assert open_requests() == set()
    page.get_by_role("button", name="Apply to all 30 records").click()

    expect(page.get_by_role("status").filter(has_text="sent to adjudication")).to_contain_text(
        "30 records sent to adjudication."
    )
    expect(page).to_have_url(re.compile(r"gold_label=none&per_page=25$"))
    assert open_requests() == {r.pk for r in unlabelled}
    assert page_events.errors == []
    assert page_events.console_errors == []


def test_unticking_a_record_goes_back_to_the_records_ticked(
    cast: Cast, unlabelled: list[Record], page: Page, page_events: PageEvents, log_in
) -> None:
    log_in(cast.manager)
    page.goto(f"/p/{cast.project.slug}/records/?gold_label=none&per_page=25")
    page.get_by_role("checkbox", name="Choose every record on this page").check()
    page.get_by_role("button", name="Choose all 30 records that match").click()
    expect(page.locator("[data-chosen-count]")).to_have_text("30 chosen")

    page.get_by_role("checkbox", name=re.compile(r"^Choose record ")).first.uncheck()

    expect(page.locator("[data-chosen-count]")).to_have_text("24 chosen")
    expect(page.get_by_text("records that match these filters are chosen")).to_be_hidden()
    page.get_by_label("Action").select_option("adjudicate")
    page.get_by_role("button", name="Apply", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="sent to adjudication")).to_contain_text(
        "24 records sent to adjudication."
    )
    assert len(open_requests()) == 24
    assert page_events.errors == []
    assert page_events.console_errors == []


def test_without_javascript_every_match_is_one_button_and_a_confirmation_away(
    cast: Cast, unlabelled: list[Record], browser: Browser, live_server
) -> None:
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto("/login/")
    page.get_by_label("Username").fill(cast.manager.get_username())
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    page.goto(f"/p/{cast.project.slug}/records/?gold_label=none&per_page=25")
    page.get_by_label("Action").select_option("more_labels")
    page.get_by_role("button", name="Apply to all 30 records that match…").click()
    expect(page.get_by_role("status")).to_contain_text("30 records match these filters")
    page.get_by_role("button", name="Apply to all 30 records").click()

    expect(page.get_by_text("30 records will get 1 more label.")).to_be_visible()
    assert Record.objects.filter(project=cast.project, extra_labels=1).count() == 30
    context.close()
