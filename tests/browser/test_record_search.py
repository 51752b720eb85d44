"""The record list's search box in a real browser: its hint, and a phrase typed into it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record

pytestmark = pytest.mark.browser


def with_message(cast: Cast, record_id: int, message: str) -> None:
    source = rjudge_record(
        record_id, user=message, thought="Thinking.", action="Act: {}", environment="Done."
    )
    RecordFactory(project=cast.project, source=source)


def test_the_hint_shows_and_a_phrase_finds_only_its_records(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    with_message(cast, 1, "Leave the door open for the cat.")
    with_message(cast, 2, "Open door policy.")
    with_message(cast, 3, "Nobody home.")
    log_in(cast.reviewer)

    page.goto(f"/p/{cast.project.slug}/records/")
    box = page.get_by_role("textbox", name="Text")
    expect(page.get_by_text('"quoted words" as a phrase')).to_be_visible()
    expect(box).to_have_accessible_description(
        "Finds records with every word, in any order, and other forms of it (deleting finds "
        'deleted); "quoted words" as a phrase; -word leaves out records with it. Punctuation '
        "only separates words. A record's id finds it."
    )
    rows = page.locator("#record-results tbody tr")
    expect(rows).to_have_count(3)

    box.fill("door open")
    expect(rows).to_have_count(2)
    box.fill('"door open"')
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Leave the door open for the cat.")
    # The search is in the address, to be shared or reloaded.
    assert "q=%22door%20open%22" in page.url

    box.fill("door -cat")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Open door policy.")
    assert page_events.errors == []
    assert page_events.console_errors == []
