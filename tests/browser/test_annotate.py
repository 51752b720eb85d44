"""Labelling in a real browser, with the keyboard alone: three labels (a risk description and an
evidence turn among them), a skip, a reload in the middle of a draft, and an edit of an earlier
label; and a second annotator of a k = 1 project who never gets the first one's records."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Annotation, Lease
from annotation.services.queue import lease_next_record
from tests.annotation.annotators import add_annotator, label_next, make_records
from tests.browser.conftest import PageEvents
from tests.browser.test_hostile_record import SCRIPT, assert_nothing_ran, hostile_record
from tests.conftest import Cast

pytestmark = pytest.mark.browser


def heading(page: Page, record) -> None:
    expect(page.get_by_role("heading", name=f"Record {record.external_id}")).to_be_visible()
    # htmx wires a swapped-in record (its draft saving) a moment later, marking it "htmx-added"
    # until then; the test types faster than anyone could.
    expect(page.locator(".htmx-added")).to_have_count(0)


def assert_quiet(page_events: PageEvents) -> None:
    assert page_events.errors == []
    assert page_events.console_errors == []
    assert page_events.dialogs == []


def test_an_annotator_labels_skips_keeps_a_draft_and_edits_with_the_keyboard(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    records = make_records(cast.project, 5)
    log_in(cast.annotator)
    page.goto(f"/p/{cast.project.slug}/annotate/")

    expect(page.get_by_role("button", name="Start annotating")).to_be_focused()
    page.keyboard.press("Enter")
    heading(page, records[0])
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_be_hidden()

    # Unsafe, with a risk type, a description and turn 2 as evidence.
    page.keyboard.press("2")
    page.keyboard.press("r")
    expect(page.locator("#key-pending")).to_contain_text("Risk type")
    page.keyboard.press("6")
    page.keyboard.press("d")
    page.keyboard.type("It deletes 214 mails without asking.")
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.keyboard.press("e")
    expect(page.locator("#evidence-summary")).to_have_text("Marked: #2")
    page.evaluate("window.sameDocument = true")
    page.keyboard.press("Enter")
    heading(page, records[1])
    # The next record was swapped in: the page was not loaded again.
    assert page.evaluate("window.sameDocument") is True
    expect(page.get_by_role("status").first).to_contain_text(
        f"Saved your label of record {records[0].external_id}."
    )

    page.keyboard.press("1")
    page.keyboard.press("Enter")
    heading(page, records[2])
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    heading(page, records[3])

    # Skip, giving a reason.
    page.keyboard.press("x")
    page.keyboard.type("Not in a language I read.")
    page.keyboard.press("Enter")
    heading(page, records[4])

    # A draft survives a reload.
    page.keyboard.press("2")
    page.keyboard.press("d")
    page.keyboard.type("Half a thought")
    expect(page.locator("#draft-status")).to_contain_text("Draft saved at")
    page.reload()
    heading(page, records[4])
    expect(page.get_by_role("radio", name="Unsafe")).to_be_checked()
    expect(page.get_by_label("Risk description")).to_have_value("Half a thought")

    first = Annotation.objects.get(annotator=cast.annotator, record=records[0])
    assert first.verdict == "unsafe"
    assert first.risk_description == "It deletes 214 mails without asking."
    assert first.evidence_turns == [2]
    assert [risk_type.slug for risk_type in first.risk_types.all()] == ["data-loss"]
    verdicts = Annotation.objects.filter(annotator=cast.annotator).values_list("verdict", flat=True)
    assert sorted(verdicts) == ["safe", "unsafe", "unsure"]
    skipped = Lease.objects.get(annotator=cast.annotator, record=records[3])
    assert skipped.skip_reason == "Not in a language I read."

    # An earlier label, edited from My work: safe becomes unsure.
    page.get_by_role("link", name="My work").click()
    page.get_by_role("link", name=f"Edit your label of record {records[1].external_id}").click()
    expect(page.get_by_role("radio", name="Safe", exact=True)).to_be_checked()
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(
        page.get_by_text(f"Updated your label of record {records[1].external_id}.")
    ).to_be_visible()
    edited = Annotation.objects.get(annotator=cast.annotator, record=records[1])
    assert (edited.verdict, edited.version) == ("unsure", 2)
    assert_quiet(page_events)


def test_with_k_1_a_second_annotator_never_gets_the_first_ones_records(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    cast.project.overlap = 1
    cast.project.save()
    records = make_records(cast.project, 4)
    # The first annotator has labelled two records and holds the third.
    label_next(cast.project, cast.annotator, "unsafe", risk_description="FIRST-ANNOTATOR-NOTE")
    label_next(cast.project, cast.annotator)
    lease_next_record(project=cast.project, annotator=cast.annotator)
    second = add_annotator(cast.project, "second")
    log_in(second)

    page.goto(f"/p/{cast.project.slug}/annotate/")
    expect(page.get_by_role("button", name="Start annotating")).to_be_focused()
    page.keyboard.press("Enter")
    heading(page, records[3])
    page.keyboard.press("1")
    page.keyboard.press("Enter")

    expect(page.get_by_text("Nothing is left for you to label in this project.")).to_be_visible()
    expect(page.locator("body")).not_to_contain_text("FIRST-ANNOTATOR-NOTE")
    assert list(second.annotations.values_list("record_id", flat=True)) == [records[3].pk]
    assert_quiet(page_events)


def test_a_hostile_record_on_the_labelling_page_runs_nothing(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    record = hostile_record(cast)
    log_in(cast.annotator)
    page.goto(f"/p/{cast.project.slug}/annotate/")
    page.get_by_role("button", name="Start annotating").click()

    heading(page, record)
    expect(page.locator("#turn-1")).to_contain_text(SCRIPT)
    # Marking every turn as evidence and opening the long output brings nothing to life.
    for _ in range(4):
        page.keyboard.press("e")
        page.keyboard.press("j")
    page.locator("#turn-4 summary").click()
    expect(page.locator("#evidence-summary")).to_have_text("Marked: #1, #2, #3, #4")
    assert_nothing_ran(page, page_events)


def test_a_label_sent_while_the_connection_is_down_stays_and_goes_once_it_is_back(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    records = make_records(cast.project, 2)
    log_in(cast.annotator)
    page.goto(f"/p/{cast.project.slug}/annotate/")
    # The button takes the focus once the page is drawn, which may be after it has loaded.
    expect(page.get_by_role("button", name="Start annotating")).to_be_focused()
    page.keyboard.press("Enter")
    heading(page, records[0])
    page.route("**/submit/", lambda route: route.abort("internetdisconnected"))

    page.keyboard.press("2")
    page.keyboard.press("d")
    page.keyboard.type("Forwards the contract to a stranger.")
    page.keyboard.press("Control+Enter")

    expect(page.get_by_role("alert")).to_contain_text("Not sent: the connection dropped")
    heading(page, records[0])
    expect(page.get_by_label("Risk description")).to_have_value(
        "Forwards the contract to a stranger."
    )
    assert not Annotation.objects.filter(annotator=cast.annotator).exists()

    page.unroute("**/submit/")
    page.keyboard.press("Control+Enter")
    heading(page, records[1])
    label = Annotation.objects.get(annotator=cast.annotator)
    assert (label.record_id, label.risk_description) == (
        records[0].pk,
        "Forwards the contract to a stranger.",
    )
    assert page_events.errors == []
