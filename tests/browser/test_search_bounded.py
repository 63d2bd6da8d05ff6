"""A search that stopped after its bounded work, in headless Chromium: the estimated
count and the "Search further" link pass axe-core and fit a 390 px phone, and following
the link (no JavaScript needed) goes on until the page is whole."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from articles.store import services
from articles.store.selectors import searching
from articles.types import NewPost
from tests.browser.test_pages import Audit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_search_that_stopped_early_says_so_and_goes_on(live_server, visitor, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(searching, "SEARCH_BUILD_MAX", 10)
    monkeypatch.setattr(searching, "SEARCH_STEP", 100)
    monkeypatch.setattr(searching, "SEARCH_STEPS", 2)
    now = time.time()
    for n in range(600):
        title = "east west" if n == 0 else "east filler" if n < 300 else "west filler"
        services.article_post(
            NewPost(
                user_id=1, poster_name="carol", title=title, link="", text="x", now=now - 600 + n
            )
        )
    audit = Audit()
    page = visitor(None)
    page.goto(f"{live_server.url}/search/?q=filler+west&order=newest")
    audit.check(page, "search-estimated")
    page.goto(f"{live_server.url}/search/?q=east+west&order=newest")
    expect(page.get_by_role("link", name="Search further")).to_be_visible()
    audit.check(page, "search-stopped")
    page.get_by_role("link", name="Search further").click()
    page.get_by_role("link", name="Search further").click()
    expect(page.get_by_role("link", name="Search further")).to_have_count(0)
    expect(page.get_by_text("1 article found.")).to_be_visible()
    audit.assert_clean("search-bounded")
