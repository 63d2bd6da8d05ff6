"""Every page of the site, as each kind of visitor sees it, in headless Chromium: no serious
or critical axe-core violation, nothing wider than a 390 px phone, and a screenshot at 1280
and 390 px of each in test-artifacts/pages/ (for looking at, not compared)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from articles.store import selectors, services
from articles.types import NewPost, Vote
from tests import factories
from tests.actors import staff_actor
from tests.browser.conftest import ARTIFACTS, PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE, PHONE = 1280, 390
# axe-core's own JavaScript ships inside the package: nothing is fetched at run time.
AXE = Axe()
BLOCKING = ("serious", "critical")
SHOTS = ARTIFACTS / "pages"


@pytest.fixture(autouse=True)
def _site(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    SHOTS.mkdir(parents=True, exist_ok=True)


@pytest.fixture
def _short_pages(settings) -> None:  # type: ignore[no-untyped-def]
    """Eight articles a page: every part of a listing is there, and axe-core and the
    screenshots take a third of the time of 25."""
    settings.ARTICLES_PER_PAGE = 8


COMMENT_TEXTS = [
    "Comment {n}: see https://example.org/a/long/address/that/has/no/place/to/break/at/all/x",
    # A code line wider than a phone: it scrolls in its own box, the page does not.
    "Comment {n}: scores are *floats*.\n\n```\n"
    "ZADD scores 1 a; while sleep 0.1; do ls -d src/* | entr -d make; done\n```",
    "Comment {n}: ties break by member, so equal scores sort by name.",
]


@dataclass
class Site:
    """What seed() made: the ids the page addresses need."""

    link_article: int
    text_article: int
    closed_article: int
    carol: int
    dora: int
    day: str


def seed() -> Site:
    """Enough of a site for every page to have something on it: 30 articles (so the New
    page scrolls), good ones, groups, a deleted article, moderation entries and two pages
    of one user's comments."""
    carol = factories.user("carol", password=PASSWORD)
    dora = factories.user("dora", password=PASSWORD)
    factories.staff("mod", password=PASSWORD)
    services.group_create(
        name="redis", description="The data structure server.", actor=staff_actor("mod")
    )
    services.group_create(
        name="python", description="The language and its libraries.", actor=staff_actor()
    )
    now = time.time()
    ids = []
    for n in range(30):
        link = f"https://example.org/post-{n}" if n % 3 else ""
        article = services.article_post(
            NewPost(
                user_id=carol.pk,
                poster_name="carol",
                title=f"Article number {n}: sorted sets, scripts and small tools",
                link=link,
                text="" if link else "A text post.\n\nWith two paragraphs.",
                groups=["redis"] if n % 2 else ["python"],
                now=now - 1800 * (n + 1),
            )
        )
        ids.append(article.id)
        for voter in range(1000, 1000 + (5 - n % 5)):
            services.article_vote(article_id=article.id, user_id=voter, direction=Vote.UP)
    services.article_vote(article_id=ids[1], user_id=2000, direction=Vote.DOWN)
    # More than a page (25) of carol's comments, one with a long unbroken address.
    for n in range(27):
        services.comment_post(
            article_id=ids[2],
            user_id=carol.pk,
            author_name="carol",
            text=COMMENT_TEXTS[n % len(COMMENT_TEXTS)].format(n=n),
            now=now - 1700 + n,
        )
    closed = services.article_post(
        NewPost(
            user_id=carol.pk,
            poster_name="carol",
            title="An old one, voting closed",
            link="https://example.org/old",
            now=now - 8 * 86400,
        )
    )
    services.article_groups_update(
        article_id=ids[1], add=["python"], reason="It is about Python too", actor=staff_actor("mod")
    )
    services.article_delete(
        article_id=ids[-1], reason="Spam", actor=staff_actor("mod", pk=carol.pk)
    )
    day = time.strftime("%Y-%m-%d", time.gmtime(now - 1800))
    return Site(ids[1], ids[0], closed.id, carol.pk, dora.pk, day)


@dataclass
class Audit:
    """Findings of all the visits, reported together at the end of a test."""

    problems: list[str] = field(default_factory=list)
    # page -> {impact: nodes}, and the rules broken, for the figures (pages/axe-*.json)
    counts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def check(self, page: Page, name: str, *, ready: str | None = None, full: bool = True) -> None:
        """axe-core, the width and a screenshot at 1280 px, then the width and a screenshot
        at 390 (axe runs once: its rules read the markup and the colours, which the width
        does not change, and a run costs 1-2 s)."""
        started = time.monotonic()
        for width in (WIDE, PHONE):
            page.set_viewport_size({"width": width, "height": 900})
            if ready:
                page.locator(ready).first.wait_for()
            if width == WIDE:
                self.axe(page, name)
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            if scroll_width > width:
                self.problems.append(f"{name} @{width}: {scroll_width} px wide")
            page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=full)
        self.counts[name]["seconds"] = round(time.monotonic() - started, 1)

    def axe(self, page: Page, name: str) -> None:
        results = AXE.run(page).response
        impacts: dict[str, Any] = {"rules": []}
        for violation in results["violations"]:
            impact = violation["impact"] or "minor"
            impacts[impact] = impacts.get(impact, 0) + len(violation["nodes"])
            impacts["rules"].append(f"{violation['id']} ({impact})")
            if impact in BLOCKING:
                targets = "; ".join(
                    " ".join(map(str, node["target"])) for node in violation["nodes"][:4]
                )
                self.problems.append(
                    f"{name}: {impact} {violation['id']}: {violation['help']} "
                    f"({len(violation['nodes'])}: {targets})"
                )
        self.counts[name] = impacts

    def visit(self, page: Page, url: str, name: str, **options: Any) -> None:
        page.set_viewport_size({"width": WIDE, "height": 900})
        page.goto(url)
        self.check(page, name, **options)

    def assert_clean(self, label: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"axe-{label}.json").write_text(json.dumps(self.counts, indent=1))
        assert not self.problems, "\n".join(self.problems)


def public_pages(site: Site) -> list[tuple[str, str]]:
    """(name, path) of the pages anyone can see."""
    return [
        ("home", "/"),
        *((f"top-{p}", f"/top/?period={p}") for p in ("day", "week", "month", "year", "all")),
        ("new", "/new/"),
        ("new-page-2", "/new/?page=2"),
        ("groups", "/groups/"),
        ("group", "/g/redis/"),
        ("good-day", f"/good/{site.day}/"),
        ("article-link", f"/a/{site.link_article}/"),
        ("article-text", f"/a/{site.text_article}/"),
        ("article-closed", f"/a/{site.closed_article}/"),
        ("user", f"/u/{site.carol}/"),
        ("user-comments", "/u/carol/comments/"),
        ("user-comments-page-2", "/u/carol/comments/?page=2"),
        ("site", "/d/example.org/"),
        ("site-page-2", "/d/example.org/?page=2"),
        ("comments", "/comments/"),
        ("modlog", "/modlog/"),
    ]


@pytest.mark.usefixtures("_short_pages")
def test_every_page_for_an_anonymous_visitor(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    page = visitor(None)
    audit = Audit()
    for name, path in public_pages(site):
        audit.visit(page, base + path, f"anon-{name}")
    audit.visit(page, f"{base}/signup/", "anon-signup")
    audit.visit(page, f"{base}/accounts/login/", "anon-login")
    page.click("form.panel button[type=submit]")  # empty: the form comes back with errors
    audit.check(page, "anon-login-errors")
    audit.visit(page, f"{base}/no/such/page/", "anon-404-django")
    audit.visit(page, f"{base}/a/999999/", "anon-404")
    audit.visit(page, f"{base}/good/2026-99-99/", "anon-400")
    audit.assert_clean("anonymous")


@pytest.mark.usefixtures("_short_pages")
def test_the_browsable_api_and_the_api_docs(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    page = visitor(None)
    audit = Audit()
    audit.visit(page, f"{base}/api/", "anon-api-root")
    audit.visit(page, f"{base}/api/articles/", "anon-api-articles")
    audit.visit(page, f"{base}/api/docs/", "anon-api-docs", ready=".swagger-ui .opblock")
    # ReDoc's page is tens of thousands of pixels tall: its first screen is shot.
    audit.visit(page, f"{base}/api/redoc/", "anon-api-redoc", ready="h1", full=False)
    page = visitor("dora", base)
    audit.visit(page, f"{base}/api/", "member-api-root")
    audit.visit(page, f"{base}/api/articles/{site.link_article}/", "member-api-article")
    audit.assert_clean("api")


@pytest.mark.usefixtures("_short_pages")
@pytest.mark.usefixtures("clock")
def test_every_page_for_a_member(live_server, visitor, settings) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    page = visitor("dora", base)
    audit = Audit()
    # The listings and article pages again, with vote forms and the account's links.
    for name, path in public_pages(site):
        if name in (
            *("home", "top-week", "new", "group", "article-link", "article-closed", "user"),
            "site",
        ):
            audit.visit(page, base + path, f"member-{name}")
    audit.visit(page, f"{base}/u/{site.dora}/", "member-own-user")
    audit.visit(page, f"{base}/submit/", "member-submit")
    page.fill("#id_title", "x" * 3)
    page.click("form.panel button[type=submit]")  # refused: the errors are described
    audit.check(page, "member-submit-errors")
    audit.visit(page, f"{base}/accounts/password/", "member-password")
    audit.visit(page, f"{base}/accounts/password/done/", "member-password-done")
    audit.visit(page, f"{base}/staff/", "member-403")
    settings.ARTICLES_RATE_LIMITS = {"post": (0, 3600)}
    page.goto(f"{base}/submit/")
    page.fill("#id_title", "One post too many")
    page.fill("#id_text", "Refused.")
    page.click("form.panel button[type=submit]")
    audit.check(page, "member-429")
    audit.assert_clean("member")


@pytest.mark.usefixtures("_short_pages")
def test_every_page_for_staff(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    page = visitor("mod", base)
    audit = Audit()
    for name, path in [
        ("home", "/"),
        ("new", "/new/"),
        ("article", f"/a/{site.link_article}/"),
        ("modlog", "/modlog/"),
        ("dashboard", "/staff/"),
        ("groups", "/staff/groups/"),
        ("group-edit", "/staff/groups/redis/"),
        ("article-moderate", f"/staff/a/{site.link_article}/"),
        ("article-moderate-text", f"/staff/a/{site.text_article}/"),
    ]:
        audit.visit(page, base + path, f"staff-{name}")
    page.goto(f"{base}/staff/groups/")
    page.click("#content form input[type=submit], #content form button[type=submit]")
    audit.check(page, "staff-groups-errors")
    audit.assert_clean("staff")


def test_the_unavailable_page(live_server, visitor, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Ensure the 503 page (Redis down) passes too: the live server runs in this process."""

    def down(**kwargs: Any) -> None:
        raise redis.ConnectionError("Redis is down (test)")

    monkeypatch.setattr(selectors, "article_list", down)
    page = visitor(None)
    audit = Audit()
    audit.visit(page, f"{live_server.url}/new/", "anon-503")
    assert "Temporarily unavailable" in page.content()
    audit.assert_clean("unavailable")


@pytest.mark.parametrize("width", [WIDE, PHONE])
def test_a_vote_without_javascript_comes_back_to_the_item_below_the_top_bar(
    live_server, visitor, width
) -> None:  # type: ignore[no-untyped-def]
    """Ensure the item a no-script vote returns to (/new/#a12) is not under the sticky bar."""
    base = live_server.url
    seed()
    page = visitor("dora", base, java_script_enabled=False)
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(f"{base}/new/")
    item = page.locator("article.item").nth(15)
    anchor = item.get_attribute("id")
    item.locator("button.arrow.up").click()
    expect(page).to_have_url(f"{base}/new/#{anchor}")
    expect(page.locator(f"#{anchor} [data-field=my_vote]")).to_have_text("you voted up")
    bar = page.locator(".topbar").bounding_box()
    box = page.locator(f"#{anchor}").bounding_box()
    assert bar and box
    assert page.evaluate("window.scrollY") > 0, "the page did not go to the item"
    assert box["y"] >= bar["y"] + bar["height"], f"the top bar covers the item: {bar} {box}"
    page.screenshot(path=str(SHOTS / f"no-script-vote-{width}.png"))


# A title of one 135-character word (a pasted address, a long identifier): no page may
# grow wider than a phone for it, and it wraps whole, not clipped.
UNBROKEN_TITLE = "Unbroken" + "x" * 120 + "-ending"


def test_an_unbroken_title_fits_a_phone_and_wraps(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    erin = factories.user("erin", password=PASSWORD)
    article = services.article_post(
        NewPost(
            user_id=erin.pk, poster_name="erin", title=UNBROKEN_TITLE, link="https://example.org/w"
        )
    )
    assert len(UNBROKEN_TITLE) == 135
    services.comment_post(
        article_id=article.id, user_id=erin.pk, author_name="erin", text="About that title."
    )
    page = visitor(None)
    page.set_viewport_size({"width": PHONE, "height": 900})
    problems = []
    for name, path in [
        ("article", f"/a/{article.id}/"),
        ("comments", "/comments/"),
        ("user", f"/u/{erin.pk}/"),
        ("user-comments", "/u/erin/comments/"),
        ("new", "/new/"),
    ]:
        page.goto(base + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE:
            problems.append(f"{name}: {width} px wide")
        title = page.get_by_text(UNBROKEN_TITLE, exact=True).first
        expect(title).to_be_visible()
        # Wrapped over lines, each inside the window (none clipped by a box it overflows).
        lines = title.evaluate(
            "e => Array.from(e.getClientRects(), r => [Math.round(r.left), Math.round(r.right)])"
        )
        if len(lines) < 2 or any(left < 0 or right > PHONE for left, right in lines):
            problems.append(f"{name}: the title is not wrapped inside the window: {lines}")
        page.screenshot(path=str(SHOTS / f"unbroken-title-{name}-{PHONE}.png"), full_page=True)
    assert not problems, "\n".join(problems)
