"""The record list stays a list once runs exist: at 1366 px its rows are a line or two high and
the page never scrolls sideways; on a phone the table scrolls in its own box, not the page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.releases.toolemu_study import import_scored_study

pytestmark = pytest.mark.browser

SCREENSHOTS = os.environ.get("RECORD_LIST_SCREENSHOTS")


def measure(page: Page) -> dict:
    return page.evaluate(
        """() => {
            const rows = [...document.querySelectorAll("table.records tbody tr")];
            const first = rows[0].getBoundingClientRect();
            const heights = rows.map(row => row.getBoundingClientRect().height);
            const message = document.querySelector("table.records td.first-message");
            const box = document.querySelector(".table-scroll");
            return {
                tableOverflow: box.scrollWidth - box.clientWidth,
                pageWidth: document.documentElement.scrollWidth,
                viewport: window.innerWidth,
                firstRowTop: first.top + window.scrollY,
                tallestRow: Math.max(...heights),
                messageWidth: message.getBoundingClientRect().width,
            };
        }"""
    )


@pytest.mark.parametrize(("width", "height"), [(1366, 900), (390, 844)])
def test_runs_with_long_names_keep_the_list_readable(
    cast: Cast, page: Page, page_events: PageEvents, log_in, tmp_path: Path, width: int, height: int
) -> None:
    import_scored_study(cast.project, cast.manager, tmp_path / "study")
    page.set_viewport_size({"width": width, "height": height})
    log_in(cast.manager)

    page.goto(f"/p/{cast.project.slug}/records/")
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/records-{width}.png", full_page=True)
    shape = measure(page)

    assert shape["pageWidth"] <= shape["viewport"], shape
    if width >= 1366:
        assert shape["tallestRow"] <= 80, shape
        assert shape["firstRowTop"] <= 600, shape
        assert shape["messageWidth"] >= 200, shape
        # Every column on screen: the first user message is not scrolled out of sight.
        assert shape["tableOverflow"] <= 0, shape
    # The actions show once a record is chosen, and go again when none is.
    actions = page.get_by_role("form", name="Act on the chosen records")
    expect(actions).to_be_hidden()
    page.get_by_role("checkbox").nth(1).check()
    expect(actions).to_be_visible()
    page.get_by_role("checkbox").nth(1).uncheck()
    expect(actions).to_be_hidden()
    assert page_events.errors == []
