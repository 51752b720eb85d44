"""The invitation link a manager passes on: inside its box at a phone's width and a laptop's,
and copied by its button (or selected, where the browser refuses the clipboard)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageEvents
from tests.conftest import Cast

pytestmark = pytest.mark.browser


def invite(cast: Cast, page: Page, log_in) -> str:
    log_in(cast.manager)
    page.goto(f"/p/{cast.project.slug}/members/")
    invite_form = page.locator("#invite form")
    invite_form.get_by_label("Username").fill("newcomer")
    invite_form.get_by_role("button", name="Invite").click()
    link = page.locator("#invitation-link")
    expect(link).to_contain_text("/invitations/")
    return link.inner_text().strip()


def overflow(page: Page) -> dict[str, float]:
    """How far the link passes its box's right edge, and the page its window's (px)."""
    return page.evaluate(
        """() => {
            const link = document.getElementById("invitation-link");
            const box = link.closest(".message");
            return {
                link: link.getBoundingClientRect().right - box.getBoundingClientRect().right,
                page: document.documentElement.scrollWidth - window.innerWidth,
            };
        }"""
    )


@pytest.mark.parametrize("width", [390, 1366])
def test_the_link_stays_inside_its_box(
    cast: Cast, page: Page, page_events: PageEvents, log_in, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    invite(cast, page, log_in)

    passed = overflow(page)

    assert passed["link"] <= 0
    assert passed["page"] <= 0
    assert page_events.errors == []


def test_copy_link_copies_it_and_says_so(
    cast: Cast, page: Page, page_events: PageEvents, log_in, live_server
) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    link = invite(cast, page, log_in)

    page.get_by_role("button", name="Copy link").click()

    expect(page.get_by_text("Copied", exact=True)).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == link
    assert page_events.errors == []
    assert page_events.console_errors == []


def test_a_refused_clipboard_selects_the_link_instead(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    # As a browser that refuses: the permission denied.
    page.add_init_script(
        """Object.defineProperty(navigator, "clipboard", {value: {
            writeText: () => Promise.reject(new DOMException("Denied", "NotAllowedError")),
        }});"""
    )
    link = invite(cast, page, log_in)

    page.get_by_role("button", name="Copy link").click()

    expect(page.get_by_text("Selected: press Ctrl+C")).to_be_visible()
    assert page.evaluate("window.getSelection().toString()").strip() == link
    assert page_events.errors == []
