"""Deleting a record from the record list by keyboard, in a real browser: the confirmation
page counts what goes with it, and nothing is deleted before the manager confirms."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from curation.models import Record
from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.releases.helpers import label, record

pytestmark = pytest.mark.browser


def test_a_manager_deletes_a_ticked_record_confirming_by_keyboard(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    kept, doomed = record(cast.project, 1), record(cast.project, 2)
    label(doomed, cast.annotator, "unsafe")
    log_in(cast.manager)
    page.goto(f"/p/{cast.project.slug}/records/?per_page=25")

    page.get_by_role("checkbox", name=f"Choose record {doomed.external_id}").focus()
    page.keyboard.press("Space")
    page.get_by_label("Action").focus()
    page.get_by_label("Action").select_option("delete")
    page.get_by_role("button", name="Apply", exact=True).focus()
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", level=1)).to_have_text("Delete 1 record")
    expect(page.get_by_role("status")).to_contain_text(
        "This deletes 1 record, with 1 label, no verdict, no disagreement and no adjudication."
    )
    assert Record.objects.filter(pk=doomed.pk).exists()
    confirm = page.get_by_role("button", name="Delete 1 record")
    confirm.focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Cancel")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(confirm).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_role("status").filter(has_text="Deleted")).to_contain_text(
        "Deleted 1 record, with 1 label"
    )
    expect(page).to_have_url(re.compile(r"per_page=25$"))
    assert list(Record.objects.filter(project=cast.project)) == [kept]
    assert page_events.errors == []
    assert page_events.console_errors == []
