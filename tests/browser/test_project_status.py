"""The project's overview loads how the project stands under the strict CSP, readable at 1366 px
and on a phone without scrolling sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.factories import CategoryFactory, RecordFactory

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("width", "height"), [(1366, 900), (390, 844)])
def test_the_overview_shows_how_the_project_stands(
    cast: Cast, page: Page, page_events: PageEvents, log_in, width: int, height: int
) -> None:
    long_name = "Category-" + "x" * 90
    for name in ("Mail", long_name):
        category = CategoryFactory(project=cast.project, name=name)
        RecordFactory(project=cast.project, category=category)
    page.set_viewport_size({"width": width, "height": height})
    log_in(cast.manager)

    page.goto(f"/p/{cast.project.slug}/")

    status = page.locator("#project-status")
    expect(status).to_contain_text("0 of 2 records have every label they need")
    expect(status.get_by_role("progressbar")).to_be_visible()
    expect(status.get_by_role("link", name="Every run")).to_be_visible()
    page_width = page.evaluate("document.documentElement.scrollWidth")
    assert page_width <= width
    assert page_events.errors == []
