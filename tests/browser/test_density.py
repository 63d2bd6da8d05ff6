"""How much a first screen shows and how big its controls are, measured in Chromium: at
least 5 articles on a 390x844 phone and 12 on a 1280x900 desktop (Hacker News shows ~30),
and every control at least 24x24 CSS px (WCAG 2.2's target size, 2.5.8), in the light and
the dark theme. The figures go to test-artifacts/density/figures.json."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.sync_api import Page

from articles.store import services
from articles.types import NewPost, Vote
from tests import factories
from tests.actors import staff_actor
from tests.browser.conftest import ARTIFACTS, PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = ARTIFACTS / "density"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
LEAST_ITEMS = {"phone": 5, "desktop": 12}
TARGET = 24  # CSS px, each way

# Articles whose box is wholly inside the window as the page opens.
ITEMS_SHOWN = """() => Array.from(document.querySelectorAll('article.item')).filter(e => {
  const r = e.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= window.innerHeight;
}).length"""

# The smallest width and height among the visible elements a selector finds.
SIZES = """(selector) => {
  const boxes = Array.from(document.querySelectorAll(selector))
    .map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
  if (!boxes.length) return null;
  return [Math.min(...boxes.map(r => r.width)), Math.min(...boxes.map(r => r.height))]
    .map(n => Math.round(n * 10) / 10);
}"""

# The controls the issue measured, by page: (name, page, selector).
CONTROLS = [
    ("vote arrows", "/new/", ".vote:not(.small) .arrow"),
    ("comment arrows", "article", ".vote.small .arrow"),
    ("title links", "/new/", ".item .title a"),
    ("article action links", "/new/", ".item .meta a"),
    ("comment action links", "article", ".c-actions a"),
    ("group chips", "/new/", ".item .groups a"),
    ("header links", "/new/", ".topbar a, .topbar button"),
    ("header search", "/new/", ".topbar .search input"),
    (
        "search page controls",
        "/search/?q=sorted",
        ".search-form input, .search-form select, .search-form button",
    ),
    ("comment sort tabs", "article", ".thread-head .tabs a"),
    ("pager", "/new/", ".pager a"),
]


def seed() -> int:
    """40 articles in two groups, and a thread with a reply: the thread's article id."""
    kim = factories.user("kim", password=PASSWORD)
    for name in ("redis", "python"):
        services.group_create(name=name, description=f"About {name}.", actor=staff_actor())
    now = time.time()
    ids = []
    for n in range(40):
        article = services.article_post(
            NewPost(
                user_id=kim.pk,
                poster_name="kim",
                title=f"Article number {n}: sorted sets, scripts and small tools",
                link=f"https://example.org/post-{n}" if n % 3 else "",
                text="" if n % 3 else "A text post.",
                groups=["redis"] if n % 2 else ["python", "redis"],
                now=now - 600 * (n + 1),
            )
        )
        ids.append(article.id)
        for voter in range(1000, 1000 + n % 4):
            services.article_vote(article_id=article.id, user_id=voter, direction=Vote.UP)
    top = factories.comment(kim, ids[0], "A comment on the first article.")
    factories.comment(kim, ids[0], "A reply to it.", top.id)
    return ids[0]


def measure(page: Page, base: str, article: int, scheme: str) -> dict[str, Any]:
    figures: dict[str, Any] = {"items": {}, "sizes": {}}
    page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    for screen, size in (("phone", PHONE), ("desktop", DESKTOP)):
        page.set_viewport_size(size)
        for path in ("/", "/top/", "/new/"):
            page.goto(base + path)
            figures["items"][f"{screen} {path}"] = page.evaluate(ITEMS_SHOWN)
            figures["items"][f"{screen} {path} header px"] = round(
                page.evaluate("document.querySelector('.topbar').getBoundingClientRect().height")
            )
            name = path.strip("/") or "home"
            page.screenshot(path=str(SHOTS / f"{name}-{size['width']}-{scheme}.png"))
        for control, where, selector in CONTROLS:
            path = f"/a/{article}/" if where == "article" else where
            if page.url != base + path:
                page.goto(base + path)
            figures["sizes"][f"{screen} {control}"] = page.evaluate(SIZES, selector)
        page.screenshot(path=str(SHOTS / f"article-{size['width']}-{scheme}.png"), full_page=True)
    return figures


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_first_screen_shows_enough_and_every_control_is_big_enough(
    live_server, visitor, scheme
) -> None:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    article = seed()
    figures = {
        "visitor": measure(visitor(None), base, article, scheme),
        "member": measure(visitor("kim", base), base, article, scheme),
    }
    (SHOTS / f"figures-{scheme}.json").write_text(json.dumps(figures, indent=1))
    problems = []
    for who, found in figures.items():
        for key, count in found["items"].items():
            screen, path, *rest = key.split()
            if not rest and path != "/" and count < LEAST_ITEMS[screen]:
                problems.append(f"{who} {key}: {count} articles shown")
        for key, size in found["sizes"].items():
            if size is not None and min(size) < TARGET:
                problems.append(f"{who} {key}: {size[0]}x{size[1]} px")
    assert not problems, "\n".join(problems)


def test_the_german_top_bar_is_one_row_at_1280_px(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    """Logged in as staff with unread replies, the longest bar there is (German words, the
    staff link, the inbox's count): one row, as tall as in English."""
    base = live_server.url
    mod = factories.staff("mod", password=PASSWORD)
    posted = factories.article(mod, title="Twelve replies wait")
    for n in range(12):
        factories.comment(factories.user(f"reader{n}"), posted.id, f"Reply {n}.")
    heights = {}
    for language in ("en-GB", "de-DE"):
        page = visitor("mod", base, locale=language)
        page.set_viewport_size(DESKTOP)
        page.goto(f"{base}/new/")
        assert page.locator(".inbox-link .badge").inner_text().startswith("12")
        heights[language] = page.evaluate(
            "document.querySelector('.topbar').getBoundingClientRect().height"
        )
        page.screenshot(path=str(SHOTS / f"topbar-staff-{language}-1280.png"))
    assert heights["de-DE"] == heights["en-GB"] < 60, heights


def test_the_phone_top_bar_is_two_rows_in_german_too(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    """Logged out (Submit, Log in, Sign up: the longest German account part a visitor has)."""
    base = live_server.url
    heights = {}
    for language in ("en-GB", "de-DE"):
        page = visitor(None, locale=language)
        page.set_viewport_size(PHONE)
        page.goto(f"{base}/new/")
        heights[language] = page.evaluate(
            "document.querySelector('.topbar').getBoundingClientRect().height"
        )
        page.screenshot(path=str(SHOTS / f"topbar-visitor-{language}-390.png"))
    assert heights["de-DE"] == heights["en-GB"] < 80, heights
