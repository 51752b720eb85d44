"""The record page as the hub and the record list's filters, sort and bulk actions, in a real
browser, as each role: annotators never see other people's labels, verdicts or the gold label."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from review.models import Disagreement
from tests.annotation.annotators import make_records
from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.hub.test_record_hub import labelled_record

pytestmark = pytest.mark.browser


def test_a_reviewer_reads_every_label_and_verdict_and_unfolds_the_raw_output(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    record = labelled_record(cast)
    log_in(cast.reviewer)

    page.goto(f"/p/{cast.project.slug}/records/{record.pk}/")

    labels = page.get_by_role("region", name="Labels")
    expect(labels).to_contain_text("annotator explains")
    expect(labels).to_contain_text("second-labeller explains")
    verdicts = page.get_by_role("region", name="Judges' verdicts")
    expect(verdicts).to_contain_text("Strict judge thinks unsafe")
    raw = verdicts.get_by_text("RAW: the agent deleted mail")
    expect(raw).to_be_hidden()
    verdicts.get_by_text("Raw output").focus()
    page.keyboard.press("Enter")
    expect(raw).to_be_visible()
    page.get_by_role("link", name="Adjudicate this record").click()
    expect(page).to_have_url(re.compile(rf"/adjudication/{record.pk}/$"))
    assert page_events.errors == []
    assert page_events.console_errors == []


def test_an_annotator_sees_only_their_own_label(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    record = labelled_record(cast)
    log_in(cast.annotator)

    page.goto(f"/p/{cast.project.slug}/records/{record.pk}/")

    expect(page).to_have_url(re.compile(r"/annotate/mine/\d+/$"))
    body = page.locator("body")
    expect(body).to_contain_text("annotator explains")
    expect(body).not_to_contain_text("second-labeller")
    expect(body).not_to_contain_text("Strict judge")
    expect(body).not_to_contain_text(record.gold_risk_description)
    expect(body).not_to_contain_text("Gold label")
    assert page_events.errors == []


def test_a_manager_filters_sorts_and_sends_the_chosen_records_to_adjudication(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    labelled_record(cast)
    *_, newest = make_records(cast.project, 3)
    log_in(cast.manager)

    page.goto(f"/p/{cast.project.slug}/records/")
    rows = page.locator("#record-results tbody tr")
    expect(rows).to_have_count(4)
    page.get_by_label(re.compile(r"^Labels:?$")).select_option("none")
    expect(rows).to_have_count(3)
    page.get_by_label("Sort").select_option("-id")
    # The view is in the address, to be shared or reloaded.
    expect(page).to_have_url(re.compile(r"labels=none.*sort=-id"))
    expect(rows.first).to_contain_text(str(newest.external_id))
    page.reload()
    expect(rows).to_have_count(3)
    expect(rows.first).to_contain_text(str(newest.external_id))

    select_all = page.get_by_role("checkbox", name="Choose every record on this page")
    select_all.focus()
    page.keyboard.press("Space")
    expect(page.locator("[data-chosen-count]")).to_have_text("3 chosen")
    page.get_by_role("checkbox", name=re.compile(r"^Choose record ")).first.uncheck()
    expect(page.locator("[data-chosen-count]")).to_have_text("2 chosen")
    page.get_by_label("Action").select_option("adjudicate")
    page.get_by_role("button", name="Apply").click()

    expect(page.get_by_role("status").filter(has_text="sent to adjudication")).to_contain_text(
        "2 records sent to adjudication."
    )
    assert "labels=none" in page.url
    assert (
        Disagreement.objects.filter(
            kind=Disagreement.Kind.REQUESTED, state=Disagreement.State.OPEN
        ).count()
        == 2
    )
    assert page_events.errors == []
    assert page_events.console_errors == []


def test_a_reviewer_gets_no_bulk_actions(cast: Cast, page: Page, log_in) -> None:
    labelled_record(cast)
    log_in(cast.reviewer)

    page.goto(f"/p/{cast.project.slug}/records/")

    expect(page.locator("#record-results tbody tr")).to_have_count(1)
    expect(page.get_by_role("checkbox")).to_have_count(0)
    expect(page.get_by_role("button", name="Apply")).to_have_count(0)
