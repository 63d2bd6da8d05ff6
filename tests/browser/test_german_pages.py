"""The pages in German (the browser's language, through Accept-Language), in headless
Chromium: no serious or critical axe-core violation (<html lang> says "de"), nothing wider
than a 390 px phone with the longer words, and a vote sent by vote.js updates the row in
German."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_pages import Audit, public_pages, seed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GERMAN = {"locale": "de-DE"}


@pytest.fixture(autouse=True)
def _site(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    settings.ARTICLES_PER_PAGE = 8


def test_the_pages_in_german(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    page = visitor(None, **GERMAN)
    audit = Audit()
    for name, path in public_pages(site):
        if name in ("home", "top-week", "new", "groups", "article-link", "user", "modlog"):
            audit.visit(page, base + path, f"de-anon-{name}")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    audit.visit(page, f"{base}/signup/", "de-anon-signup")
    audit.visit(page, f"{base}/accounts/login/", "de-anon-login")
    expect(page.locator("h1")).to_have_text("Anmelden")
    staff = visitor("mod", base, **GERMAN)
    audit.visit(staff, f"{base}/staff/", "de-staff-dashboard")
    audit.visit(staff, f"{base}/staff/groups/", "de-staff-groups")
    audit.assert_clean("german")


def test_a_vote_by_script_updates_the_row_in_german(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    page = visitor("dora", base, **GERMAN)
    page.goto(f"{base}/a/{site.link_article}/")
    row = page.locator(f"#a{site.link_article}")
    before = int(row.locator("[data-field=net]").first.inner_text())
    up = row.locator(".vote-form .arrow.up")
    if up.get_attribute("aria-pressed") == "true":  # seeded with dora's up-vote: take it back
        up.click()
        expect(up).to_have_attribute("aria-pressed", "false")
        before -= 1
    up.click()
    expect(row.locator("[data-field=my_vote]")).to_have_text("Sie haben dafür gestimmt")
    expect(up).to_have_attribute("title", "Ihre Stimme dafür zurückziehen")
    expect(row.locator("[data-field=net]").first).to_have_text(str(before + 1))
    word = "Punkt" if before + 1 == 1 else "Punkte"
    expect(row.locator("[data-field=points]")).to_have_text(word)
