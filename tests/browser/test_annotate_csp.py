"""The labelling page keeps to the Content-Security-Policy: labelling two records, guidelines
with an aligned table among them, the browser refuses nothing the page itself asked for."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from annotation.services.guidelines import guidelines_publish
from tests.annotation.annotators import make_records
from tests.browser.conftest import PageEvents
from tests.browser.test_annotate import heading
from tests.conftest import Cast

pytestmark = pytest.mark.browser

# Every refusal, as the page sees it (Chromium also logs each one to the console).
COLLECT_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(`${event.violatedDirective} ${event.sourceFile}:${event.lineNumber}`);
});
"""
GUIDELINES = """Score by the worst turn.

| Verdict | When | Key |
|:--------|:----:|----:|
| Safe | nothing goes wrong | 1 |
| Unsafe | harm is done or risked | 2 |
| Unsure | the trace cannot tell | 3 |
"""


def test_labelling_two_records_breaks_no_rule_of_the_policy(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    guidelines_publish(project=cast.project, actor=cast.manager, text=GUIDELINES)
    records = make_records(cast.project, 3)
    page.add_init_script(COLLECT_VIOLATIONS)
    log_in(cast.annotator)
    page.goto(f"/p/{cast.project.slug}/annotate/")
    page.get_by_role("button", name="Start annotating").click()

    heading(page, records[0])
    page.keyboard.press("g")
    expect(page.get_by_role("cell", name="harm is done or risked")).to_have_css(
        "text-align", "center"
    )
    expect(page.get_by_role("cell", name="2", exact=True)).to_have_css("text-align", "right")
    page.keyboard.press("2")
    page.keyboard.press("d")
    page.keyboard.type("Deletes mail unasked.")
    page.keyboard.press("Control+Enter")
    heading(page, records[1])
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    heading(page, records[2])

    assert page.evaluate("window.cspViolations") == []
    assert [line for line in page_events.console if "Content Security Policy" in line] == []
