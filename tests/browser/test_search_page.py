"""The search page with its group list, a typed order word and stemmed results, in
headless Chromium: no serious or critical axe-core violation, nothing wider than a 390 px
phone, and screenshots at 1280 and 390 px in test-artifacts/pages/."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from articles.store import services
from articles.types import NewPost
from tests.actors import staff_actor
from tests.browser.test_pages import Audit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_search_page_with_groups_and_stemmed_results(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    for name in ("redis", "python", "databases"):
        services.group_create(name=name, description="", actor=staff_actor())
    now = time.time()
    for n, title in enumerate(
        ["A tool for Redis streams", "Two tools compared", "Tooling around sorted sets"]
    ):
        services.article_post(
            NewPost(
                user_id=1,
                poster_name="carol",
                title=title,
                link=f"https://example.org/{n}",
                groups=["redis"],
                now=now - 600 * n,
            )
        )
    audit = Audit()
    page = visitor(None)
    page.goto(f"{live_server.url}/search/")
    audit.check(page, "search-empty")
    page.goto(f"{live_server.url}/search/?q=tools&order=time&group=redis")
    expect(page.locator("select[name=group]")).to_have_value("redis")
    expect(page.locator("select[name=order]")).to_have_value("newest")
    expect(page.locator("mark")).to_have_count(3)  # tool, tools, Tooling
    audit.check(page, "search-results")
    # Choosing in the form (no JavaScript needed: a GET form) keeps the choices.
    page.select_option("select[name=group]", "")
    page.click("form.search-form button[type=submit]")
    expect(page.locator("select[name=group]")).to_have_value("")
    audit.assert_clean("search")


def test_the_comments_tab(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    now = time.time()
    article = services.article_post(
        NewPost(
            user_id=1,
            poster_name="carol",
            title="Streams in Redis",
            link="https://example.org/streams",
            now=now - 600,
        )
    )
    long_text = " ".join(["Some words before the point of it all."] * 12)
    for n, text in enumerate(
        [
            "Consumer groups make streams work like Kafka.",
            f"{long_text} Streams keep their history, trimmed by MAXLEN.",
        ]
    ):
        services.comment_post(
            article_id=article.id, user_id=2 + n, author_name=f"reader{n}", text=text, now=now
        )
    audit = Audit()
    page = visitor(None)
    page.goto(f"{live_server.url}/search/?q=stream")
    page.click("nav.tabs a:text('Comments')")  # a link: no JavaScript needed
    expect(page.locator("nav.tabs a[aria-current=page]")).to_have_text("Comments")
    expect(page.locator("article.comment-card")).to_have_count(2)
    expect(page.locator("article.comment-card mark").first).to_have_text(
        re.compile("streams", re.I)
    )
    audit.check(page, "search-comments")
    page.fill("form.search-form input[name=q]", "kafka")
    page.click("form.search-form button[type=submit]")  # the form keeps the tab
    expect(page.locator("article.comment-card")).to_have_count(1)
    audit.assert_clean("search-comments")
