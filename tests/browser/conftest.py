"""Headless Chromium (Debian's, through Playwright) against pytest-django's live server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
# Without the networking flags Chromium tries to reach the internet at start (FACTS.md).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PASSWORD = "Browser-pw-2026"  # the browser tests' users log in with it
WIDE = 1280


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Fails (never skips) when Chromium is missing: `make browser` installs it."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"The browser tests need Debian's chromium at {CHROMIUM}: run `make browser` "
            "or `sudo apt-get install chromium`."
        )
    # Playwright's sync API runs an event loop in this thread; Django refuses ORM calls
    # from such a thread unless told it is safe (it is: nothing here is async).
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield launched
            launched.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture
def shot() -> object:
    """shot(page, name): a full-page screenshot saved as test-artifacts/<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page: Page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def visitor(browser: Browser) -> Iterator[Callable[..., Page]]:
    """visitor(username, base, **context options): a page in a fresh browser context,
    logged in as that user (with PASSWORD) unless username is None."""
    contexts: list[BrowserContext] = []

    def open_as(username: str | None, base: str = "", **options: Any) -> Page:
        context = browser.new_context(viewport={"width": WIDE, "height": 900}, **options)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        if username:
            page.goto(f"{base}/accounts/login/")
            page.fill("#id_username", username)
            page.fill("#id_password", PASSWORD)
            page.click("form.panel button[type=submit]")
            expect(page.locator(".account .me")).to_have_text(username)
        return page

    yield open_as
    for context in contexts:
        context.close()
