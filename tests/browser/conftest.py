"""Browser tests: Debian's Chromium driven by Playwright against pytest-django's live server.

Every test gets a fresh browser context (no cookies), a `page` whose dialogs, console messages
and uncaught errors are collected in `page_events`, and `log_in` to sign in through the real
login form. Mark browser tests with `@pytest.mark.browser`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import AbstractBaseUser
from playwright.sync_api import Browser, Page, sync_playwright

from tests.factories import PASSWORD

# Playwright's sync API runs an asyncio event loop in the test thread, and Django refuses ORM
# calls from a thread with a running loop. The tests only use the ORM to set up data, between
# browser calls, never from inside the loop, so the check is a false alarm here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Short enough that a missing element fails the test quickly rather than hanging the suite.
TIMEOUT_MS = 10_000


@dataclass
class PageEvents:
    """What the page did that a user may not see: dialogs, console output and uncaught errors."""

    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def console_errors(self) -> list[str]:
        # Chromium asks for /favicon.ico by itself, and the studio has none: not the page's fault.
        return [
            line
            for line in self.console
            if line.startswith("error:") and not line.endswith("/favicon.ico")
        ]


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page_events() -> PageEvents:
    return PageEvents()


@pytest.fixture
def page(browser: Browser, live_server, page_events: PageEvents) -> Iterator[Page]:
    """A page in a fresh context whose relative URLs go to the live server."""
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()

    def on_dialog(dialog) -> None:
        page_events.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on(
        "console",
        lambda message: page_events.console.append(
            f"{message.type}: {message.text} at {message.location['url']}"
        ),
    )
    page.on("pageerror", lambda error: page_events.errors.append(str(error)))
    yield page
    context.close()


@pytest.fixture
def log_in(page: Page) -> Callable[[AbstractBaseUser], None]:
    """Sign a user in through the login form, as a person would; users have the factory password."""

    def log_in(user: AbstractBaseUser) -> None:
        page.goto("/login/")
        page.get_by_label("Username").fill(user.get_username())
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(lambda url: "/login/" not in url)

    return log_in
