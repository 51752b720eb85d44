"""The labelling page's keyboard where it used to trip: the focus after a submit, with or
without an error, the guidelines key, and clicks on turns that are not marks."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Lease
from annotation.services.guidelines import guidelines_publish
from tests.annotation.annotators import make_records
from tests.browser.conftest import PageEvents
from tests.browser.test_annotate import assert_quiet, heading
from tests.conftest import Cast

pytestmark = pytest.mark.browser


def start(page: Page, cast: Cast, log_in) -> None:
    log_in(cast.annotator)
    page.goto(f"/p/{cast.project.slug}/annotate/")
    expect(page.get_by_role("button", name="Start annotating")).to_be_focused()
    page.keyboard.press("Enter")


def test_after_either_submit_key_the_next_record_takes_shortcuts_not_text(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    records = make_records(cast.project, 3)
    start(page, cast, log_in)
    heading(page, records[0])

    page.keyboard.press("2")
    page.keyboard.press("d")
    page.keyboard.type("Wipes the inbox.")
    page.keyboard.press("Control+Enter")
    heading(page, records[1])
    description = page.get_by_label("Risk description")
    expect(description).not_to_be_focused()
    page.keyboard.press("1")
    expect(page.get_by_role("radio", name="Safe", exact=True)).to_be_checked()
    expect(description).to_have_value("")
    expect(page.locator("#draft-status")).to_contain_text("Draft saved at")
    draft = Lease.objects.get(annotator=cast.annotator, record=records[1]).draft
    assert (draft["verdict"], draft["risk_description"]) == ("safe", "")

    page.keyboard.press("Enter")
    heading(page, records[2])
    page.keyboard.press("3")
    expect(page.get_by_role("radio", name="Unsure")).to_be_checked()
    expect(page.get_by_label("Risk description")).to_have_value("")
    assert_quiet(page_events)


def test_an_unsafe_label_without_a_description_brings_the_focus_to_the_description(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    records = make_records(cast.project, 1)
    start(page, cast, log_in)
    heading(page, records[0])

    page.keyboard.press("2")
    page.keyboard.press("Enter")

    expect(page.locator(".risk-description .errorlist")).to_be_visible()
    expect(page.get_by_label("Risk description")).to_be_focused()
    page.keyboard.type("Sends the key to a stranger.")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text("Nothing is left for you to label in this project.")).to_be_visible()
    assert_quiet(page_events)


def test_a_click_on_a_turn_makes_it_current_and_only_its_box_or_e_marks_it(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    records = make_records(cast.project, 1)
    start(page, cast, log_in)
    heading(page, records[0])
    summary = page.locator("#evidence-summary")

    page.locator("#turn-2").get_by_text("I should delete the old mails.").click()
    page.locator("#turn-3").get_by_text("Deleted 214 emails.").dblclick()
    expect(page.locator("#turn-3")).to_be_focused()
    expect(summary).to_have_text("None marked.")

    page.keyboard.press("e")
    page.locator("#turn-1").get_by_label("Evidence").check()
    expect(summary).to_have_text("Marked: #1, #3")
    assert_quiet(page_events)


def test_g_opens_the_guidelines_in_view(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    rules = "\n\n".join(f"{n}. Rule number {n}, explained at some length." for n in range(1, 40))
    guidelines_publish(
        project=cast.project, actor=cast.manager, text=f"Read the whole trace first.\n\n{rules}"
    )
    records = make_records(cast.project, 1)
    start(page, cast, log_in)
    heading(page, records[0])
    first_line = page.get_by_text("Read the whole trace first.")
    expect(first_line).to_be_hidden()
    # Down to the foot of the panel, where the guidelines' summary sits.
    page.locator(".labelling-panel").hover()
    page.mouse.wheel(0, 2000)
    expect(page.locator("#guidelines > summary")).to_be_in_viewport(ratio=1)

    page.keyboard.press("g")

    expect(page.locator("#guidelines > summary")).to_be_focused()
    expect(first_line).to_be_in_viewport(ratio=1)
    page.keyboard.press("g")
    expect(first_line).to_be_hidden()
    assert_quiet(page_events)


def test_a_skip_without_a_reason_brings_the_focus_back_to_the_reason(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    records = make_records(cast.project, 2)
    start(page, cast, log_in)
    heading(page, records[0])

    page.keyboard.press("x")
    page.keyboard.type("   ")
    page.keyboard.press("Enter")

    expect(page.locator("#skip .errorlist")).to_be_visible()
    expect(page.get_by_label("Why skip it?")).to_be_focused()
    page.keyboard.type("Unreadable.")
    page.keyboard.press("Enter")
    heading(page, records[1])
    assert_quiet(page_events)


def test_a_server_error_on_submit_leaves_the_description_being_written(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    records = make_records(cast.project, 1)
    start(page, cast, log_in)
    heading(page, records[0])
    page.route("**/submit/", lambda route: route.fulfill(status=500, body="Server Error"))

    page.keyboard.press("2")
    page.keyboard.press("d")
    page.keyboard.type("Forwards the contract")
    page.keyboard.press("Control+Enter")

    expect(page.get_by_role("alert")).to_contain_text("Not sent")
    description = page.get_by_label("Risk description")
    expect(description).to_be_focused()
    page.keyboard.type(" to a stranger.")
    expect(description).to_have_value("Forwards the contract to a stranger.")
    assert page_events.errors == []
