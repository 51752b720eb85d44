"""A record whose content tries to run script, opened in a real browser: nothing runs."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record

pytestmark = pytest.mark.browser

# Each payload would set the sentinel global and open a dialog if the browser ran it.
SCRIPT = "<script>window.__pwned = 'script'; alert('script')</script>"
IMAGE = "<img src=x onerror=\"window.__pwned = 'img'; alert('img')\">"
LINK = "<a id=\"pwn-link\" href=\"javascript:window.__pwned = 'link'; alert('link')\">click me</a>"
PAYLOADS = f"Hello {SCRIPT} {IMAGE} {LINK}"


def hostile_record(cast: Cast):
    source = rjudge_record(
        666,
        user=f"Please summarise this page. {PAYLOADS}",
        thought=f"The page says {PAYLOADS}",
        action="SendEmail: " + json.dumps({"to": "x@y.com", "body": f"{SCRIPT} {IMAGE}"}),
        environment=json.dumps({"html": IMAGE, "link": LINK}),
        risk_description=f"The agent followed {LINK}",
    )
    source["profile"] = f"You are {SCRIPT}"
    source["goal"] = f"Judge {IMAGE}"
    source["contents"].append([{"role": "environment", "content": f"Output: {PAYLOADS}" * 10}])
    return RecordFactory(
        project=cast.project,
        source=source,
        metadata={"failure_mode": LINK, "risk_type": [SCRIPT, IMAGE], f"{IMAGE}": "key"},
    )


def assert_nothing_ran(page: Page, page_events: PageEvents) -> None:
    assert page_events.dialogs == []
    assert page_events.errors == []
    assert page_events.console_errors == []
    assert page.evaluate("typeof window.__pwned") == "undefined"
    # The payloads are text, not elements.
    assert page.locator("img").count() == 0
    assert page.locator("script:not([src])").count() == 0
    assert page.locator("#pwn-link").count() == 0
    assert page.locator("a[href^='javascript:' i]").count() == 0
    assert page.locator("[onerror], [onclick], [onload]").count() == 0


@pytest.mark.browser
def test_a_hostile_record_shows_its_payloads_as_text_and_runs_none(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    record = hostile_record(cast)
    log_in(cast.reviewer)

    page.goto(f"/p/{cast.project.slug}/records/{record.pk}/")

    expect(page.get_by_role("heading", name="Record 666")).to_be_visible()
    user_turn = page.locator("#turn-1")
    expect(user_turn).to_contain_text(SCRIPT)
    expect(user_turn).to_contain_text(IMAGE)
    expect(user_turn).to_contain_text(LINK)
    expect(page.locator("#turn-2 .thought")).to_contain_text(SCRIPT)
    # Tool calls and JSON outputs are pretty-printed, their strings still only text.
    expect(page.locator("#turn-2 .action pre.json")).to_contain_text(f'"body": "{SCRIPT}')
    expect(page.locator("#turn-3 pre.json")).to_contain_text('"html": "<img src=x onerror=')
    # The record's own facts: the hub's other sections (labels, verdicts) are facts lists too.
    facts = page.get_by_role("region", name="About this record")
    expect(facts).to_contain_text(f"You are {SCRIPT}")
    expect(facts).to_contain_text(f"Judge {IMAGE}")
    expect(facts).to_contain_text(f"The agent followed {LINK}")
    # The long output is collapsed; opening it must not bring the payloads to life either.
    page.locator("#turn-4 summary").click()
    expect(page.locator("#turn-4 details")).to_have_attribute("open", "")
    assert_nothing_ran(page, page_events)


@pytest.mark.browser
def test_the_record_list_shows_a_hostile_first_message_as_text(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    record = hostile_record(cast)
    log_in(cast.reviewer)

    page.goto(f"/p/{cast.project.slug}/records/")
    # Filter with htmx, so that swapped-in content is checked as well as the first render.
    page.get_by_label("Attack type").select_option("unintended")
    page.wait_for_url("**/records/?*attack_type=unintended*")

    row = page.locator("table.records tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Please summarise this page. Hello <script>")
    page.get_by_role("link", name=record.external_id).click()
    expect(page.get_by_role("heading", name="Record 666")).to_be_visible()
    assert_nothing_ran(page, page_events)
