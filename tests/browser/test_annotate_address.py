"""The labelling page's address follows the record being labelled, so that it can be linked
and reloaded, though each next record comes in place."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Lease
from tests.annotation.annotators import make_records
from tests.browser.conftest import PageEvents
from tests.browser.test_annotate import assert_quiet, heading
from tests.conftest import Cast

pytestmark = pytest.mark.browser


def test_the_address_names_the_record_being_labelled(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    records = make_records(cast.project, 2)
    start = f"/p/{cast.project.slug}/annotate/"
    log_in(cast.annotator)
    page.goto(start)
    page.get_by_role("button", name="Start annotating").click()
    heading(page, records[0])
    first = Lease.objects.get(annotator=cast.annotator, record=records[0])
    expect(page).to_have_url(f"{start}{first.pk}/")

    page.evaluate("window.sameDocument = true")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    heading(page, records[1])
    second = Lease.objects.get(annotator=cast.annotator, record=records[1])
    expect(page).to_have_url(f"{start}{second.pk}/")
    assert page.evaluate("window.sameDocument") is True
    page.reload()
    heading(page, records[1])

    page.keyboard.press("3")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Nothing is left for you to label in this project.")).to_be_visible()
    expect(page).to_have_url(start)
    page.goto(f"{start}{first.pk}/")
    expect(page).to_have_url(start)
    expect(page.get_by_text("That record is no longer yours to label")).to_be_visible()
    assert_quiet(page_events)
