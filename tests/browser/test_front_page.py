"""The front page, the top lists and a page past the end, as a first visit sees them, at a
desktop and a phone width (screenshots in test-artifacts/)."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from articles.store import services
from articles.types import NewPost, Vote
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"1280": 1280, "390": 390}


@pytest.fixture(autouse=True)
def _site(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 3


def seed() -> dict[str, int]:
    """Thirty articles over two days: one good, one at +254 two days old, a +2 and a -2."""
    carol = factories.user("carol", password="pw-front-2026")
    now = time.time()

    def post(title: str, age: float) -> int:
        return services.article_post(
            NewPost(
                user_id=carol.pk, poster_name="carol", title=title, link="", text="t", now=now - age
            )
        ).id

    made = {"big": post("Two days old, +254", 2 * 86_400)}
    for voter in range(100, 353):
        services.article_vote(article_id=made["big"], user_id=voter, direction=Vote.UP)
    made["plus"] = post("Fresh, +2", 60)
    services.article_vote(article_id=made["plus"], user_id=2, direction=Vote.UP)
    made["minus"] = post("Fresh, -2", 30)
    for voter in (2, 3, 4):
        services.article_vote(article_id=made["minus"], user_id=voter, direction=Vote.DOWN)
    for n in range(27):
        post(f"Article number {n}", 3600 + n * 600)
    return made


def at(page: Page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})


def test_front_page_top_lists_and_past_the_end_at_desktop_and_phone_widths(live_server, page, shot):
    base = live_server.url
    made = seed()
    for label, width in WIDTHS.items():
        at(page, width)
        page.goto(f"{base}/")
        expect(page.locator("#good-heading")).to_contain_text("Good articles")
        expect(page.locator("#rising-heading")).to_contain_text("Rising now")
        assert page.locator("article.item").count() >= 20
        expect(page.locator(f"#a{made['big']} .points")).to_contain_text("254 points")
        assert "score" not in page.locator("main .meta").first.inner_text()
        shot(page, f"front-{label}")

        page.goto(f"{base}/top/")
        items = page.locator("ol.items > li")
        expect(items.nth(0).locator(".rank")).to_have_text("1.")
        expect(items.nth(0)).to_contain_text("Two days old, +254")
        shot(page, f"top-all-{label}")
        page.goto(f"{base}/top/?period=day")
        expect(page.locator("ol.items > li").nth(0)).to_contain_text("Fresh, +2")
        shot(page, f"top-day-{label}")

        page.goto(f"{base}/a/{made['big']}/")
        expect(page.locator(".facts")).to_contain_text("Its +254 points rank it as if")
        shot(page, f"article-ranking-{label}")

        response = page.goto(f"{base}/new/?page=9")
        assert response is not None and response.status == 404
        expect(page.locator(".past-end")).to_contain_text("There is no page 9")
        page.click("text=Go to the last page (page 2)")
        expect(page.locator(".pager")).to_contain_text("page 2 of 2")
        page.goto(f"{base}/new/?page=9")
        shot(page, f"past-the-end-{label}")
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        assert not overflow, f"/new/?page=9 overflows at {width} px"
