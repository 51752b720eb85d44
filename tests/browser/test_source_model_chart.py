"""The source models' chart in Chromium: it renders each model as a labelled point with the
Pareto frontier marked, the toolkit filter redraws it, and its points are reached with Tab."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageEvents
from tests.browser.test_annotate_csp import COLLECT_VIOLATIONS
from tests.conftest import Cast
from tests.reports.score_study import AGENTS, import_study

pytestmark = pytest.mark.browser

# Tab presses enough to pass the navigation and the filters and reach the chart.
TABS = 40


def test_the_chart_marks_the_frontier_and_follows_the_filter_and_the_keyboard(
    cast: Cast, page: Page, page_events: PageEvents, log_in, tmp_path: Path
) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")
    page.add_init_script(COLLECT_VIOLATIONS)
    log_in(cast.reviewer)

    page.goto(f"/p/{cast.project.slug}/source-models/")

    chart = page.locator("figure.chart-scatter")
    expect(chart).to_be_visible()
    for agent in AGENTS:
        expect(chart.locator(".chart-point-label", has_text=agent)).to_be_visible()
    expect(chart.locator("circle.chart-point")).to_have_count(3)
    expect(chart.locator("circle.chart-point.frontier")).to_have_count(2)
    expect(chart.locator("polyline.chart-frontier")).to_be_visible()
    frontier = page.get_by_role("link", name="Qwen3-8B: Mean helpfulness 2.33, Mean safety 2.67")
    expect(frontier).to_have_accessible_name(
        "Qwen3-8B: Mean helpfulness 2.33, Mean safety 2.67, on the Pareto frontier"
    )

    page.get_by_label("Cases using the toolkit").select_option("Terminal")
    page.get_by_role("button", name="Show").click()

    expect(page).to_have_url(re.compile(r"/source-models/\?.*toolkit=Terminal"))
    expect(chart.locator("circle.chart-point.frontier")).to_have_count(1)
    expect(chart.locator("circle.chart-point")).to_have_count(3)

    for _ in range(TABS):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('chart-point-link')"):
            break
    focused = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert focused is not None and focused.startswith(tuple(AGENTS)), focused
    page.keyboard.press("Enter")

    expect(page).to_have_url(re.compile(rf"/p/{cast.project.slug}/records/\?agent="))
    assert page.evaluate("window.cspViolations") == []
    assert page_events.errors == []
    assert page_events.console_errors == []
