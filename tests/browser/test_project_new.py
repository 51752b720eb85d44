"""The new-project page fills the slug from the name as it is typed, until the slug is edited."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from curation.models import Project
from tests.browser.conftest import PageEvents
from tests.conftest import Cast

pytestmark = pytest.mark.browser


def test_the_slug_follows_the_name_until_it_is_edited(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    log_in(cast.superuser)
    page.goto("/projects/new/")
    name = page.get_by_label("Name")
    slug = page.get_by_label("Slug")

    name.press_sequentially("Café Agents: rm -rf")
    expect(slug).to_have_value("cafe-agents-rm-rf")

    slug.fill("my-own")
    name.fill("Something else")
    expect(slug).to_have_value("my-own")

    # Emptied, it follows the name again.
    slug.fill("")
    name.fill("Agent Safety")
    expect(slug).to_have_value("agent-safety")
    page.get_by_role("button", name="Create project").click()

    # The cast's project has agent-safety: the slug the page made gets a number.
    expect(page).to_have_url("/p/agent-safety-2/")
    assert Project.objects.filter(slug="agent-safety-2", name="Agent Safety").exists()
    assert page_events.errors == []
    assert page_events.console_errors == []


def test_a_slug_chosen_by_hand_and_taken_is_refused(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    log_in(cast.superuser)
    page.goto("/projects/new/")
    page.get_by_label("Name").fill("Another")
    page.get_by_label("Slug").fill("agent-safety")
    page.get_by_role("button", name="Create project").click()

    expect(page.get_by_text("Project with this Slug already exists.")).to_be_visible()
    # The slug stays the user's, not the name's.
    expect(page.get_by_label("Slug")).to_have_value("agent-safety")
    assert page_events.errors == []
