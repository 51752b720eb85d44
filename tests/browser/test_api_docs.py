"""The API docs page in a real browser, under the studio's strict Content-Security-Policy."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageEvents
from tests.conftest import Cast

pytestmark = pytest.mark.browser

# Collects what the CSP blocks, from before the page's own scripts run.
RECORD_CSP_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`);
});
"""


def test_the_docs_list_every_operation_and_the_csp_blocks_nothing(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    log_in(cast.annotator)
    page.add_init_script(RECORD_CSP_VIOLATIONS)

    page.goto("/api/docs/")

    operations = page.locator(".opblock-summary-path")
    expect(operations.first).to_be_visible()
    # Every operation of the schema the server serves is listed, none more. (Asked once the
    # page has its copy: drf-spectacular does not generate two schemas at once safely.)
    schema = page.request.get("/api/schema/?format=json").json()
    operations_in_schema = [
        path
        for path, item in schema["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    ]
    assert "/api/projects/{slug}/records/{record_id}/" in operations_in_schema
    expect(operations).to_have_count(len(operations_in_schema))
    assert set(operations.all_inner_texts()) == set(operations_in_schema)
    assert page.evaluate("window.__cspViolations") == []
    assert page_events.console_errors == []
    assert page_events.errors == []


def test_try_it_out_calls_the_api_with_the_session(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    log_in(cast.annotator)
    page.add_init_script(RECORD_CSP_VIOLATIONS)
    page.goto("/api/docs/")

    page.locator("#operations-projects-projects_list .opblock-summary").click()
    page.get_by_role("button", name="Try it out").click()
    page.get_by_role("button", name="Execute").click()

    response = page.locator(".live-responses-table .response")
    expect(response.locator(".response-col_status")).to_have_text("200")
    expect(response.locator(".highlight-code")).to_contain_text('"slug": "agent-safety"')
    assert page.evaluate("window.__cspViolations") == []
    assert page_events.console_errors == []
