"""Hide and save in headless Chromium without JavaScript: hide an article and find it in
the hidden list, unhide it; save an article and a comment, find them in the saved lists,
unsave them. Every new or changed page passes axe-core (nothing serious or critical) and
fits 390 px; screenshots at 1280 and 390 px in /tmp/shots-personal/ (SHOTS)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from articles.store import services
from articles.types import NewPost, Vote
from tests import factories
from tests.browser import test_pages
from tests.browser.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path("/tmp/shots-personal")


@pytest.fixture(autouse=True)
def _shots(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(test_pages, "SHOTS", SHOTS)


def seed() -> tuple[int, int, int]:
    """ann and bob; bob's two articles (the newer with a comment of his) and ann's up-vote
    on the older. Returns (older, newer, comment)."""
    factories.user("ann", password=PASSWORD)
    bob = factories.user("bob", password=PASSWORD)
    now = time.time()
    older, newer = (
        services.article_post(
            NewPost(bob.pk, "bob", title, f"https://example.org/{n}", now=now - 3600 * (2 - n))
        ).id
        for n, title in enumerate(("Sorted sets, older", "Streams in practice, newer"))
    )
    c = factories.comment(bob, newer, "A comment worth **keeping**.").id
    return older, newer, c


def row(page: Page, article_id: int):  # type: ignore[no-untyped-def]
    return page.locator(f"#a{article_id}")


def test_hide_then_unhide_without_javascript(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    older, newer, _ = seed()
    ann = visitor("ann", base, java_script_enabled=False)
    ann.goto(f"{base}/new/")
    row(ann, newer).get_by_role("button", name="hide").click()
    expect(ann).to_have_url(f"{base}/new/")
    expect(ann.locator(".messages, .message").first).to_contain_text("Hidden from your listings")
    expect(row(ann, newer)).to_have_count(0)
    expect(row(ann, older)).to_have_count(1)
    ann.goto(f"{base}/")
    expect(row(ann, newer)).to_have_count(0)
    ann.goto(f"{base}/u/ann/")
    ann.get_by_role("link", name="Hidden").click()
    expect(ann).to_have_url(f"{base}/u/ann/hidden/")
    expect(row(ann, newer)).to_have_count(1)
    ann.get_by_role("button", name="unhide").click()
    expect(ann).to_have_url(f"{base}/u/ann/hidden/")
    expect(ann.locator(".empty")).to_have_text("Nothing hidden.")
    ann.goto(f"{base}/new/")
    expect(row(ann, newer)).to_have_count(1)


def test_save_an_article_and_a_comment_then_unsave_without_javascript(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    _, newer, c = seed()
    ann = visitor("ann", base, java_script_enabled=False)
    ann.goto(f"{base}/a/{newer}/")
    row(ann, newer).get_by_role("button", name="save").click()
    expect(ann).to_have_url(f"{base}/a/{newer}/#a{newer}")
    ann.locator(f"#c{c}").get_by_role("button", name="save").click()
    expect(ann).to_have_url(f"{base}/a/{newer}/#c{c}")
    ann.goto(f"{base}/u/ann/")
    ann.get_by_role("link", name="Saved").click()
    expect(row(ann, newer)).to_have_count(1)
    ann.get_by_role("link", name="Comments", exact=True).last.click()
    expect(ann).to_have_url(f"{base}/u/ann/saved/comments/")
    expect(ann.locator(f"#c{c}")).to_contain_text("A comment worth keeping.")
    ann.get_by_role("button", name="unsave").click()
    expect(ann.locator(".empty")).to_contain_text("No saved comments yet")
    ann.goto(f"{base}/u/ann/saved/")
    ann.get_by_role("button", name="unsave").click()
    expect(ann.locator(".empty")).to_contain_text("Nothing saved yet")


def test_the_new_pages_pass_axe_and_fit_a_phone(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    older, newer, c = seed()
    audit = test_pages.Audit()
    ann = visitor("ann", base)
    audit.visit(ann, f"{base}/u/ann/upvoted/", "upvoted-empty")
    audit.visit(ann, f"{base}/u/ann/saved/", "saved-empty")
    audit.visit(ann, f"{base}/u/ann/saved/comments/", "saved-comments-empty")
    audit.visit(ann, f"{base}/u/ann/hidden/", "hidden-empty")
    pk = get_user_model().objects.get(username="ann").pk  # ann's lists, as the pages fill them
    services.article_vote(article_id=older, user_id=pk, direction=Vote.UP)
    services.article_save(article_id=newer, user_id=pk)
    services.comment_save(comment_id=c, user_id=pk)
    services.article_hide(article_id=older, user_id=pk)
    audit.visit(ann, f"{base}/new/", "member-new-rows")
    audit.visit(ann, f"{base}/a/{newer}/", "member-article-save")
    audit.visit(ann, f"{base}/u/ann/", "member-own-user-tabs")
    audit.visit(ann, f"{base}/u/ann/upvoted/", "upvoted")
    audit.visit(ann, f"{base}/u/ann/saved/", "saved")
    audit.visit(ann, f"{base}/u/ann/saved/comments/", "saved-comments")
    audit.visit(ann, f"{base}/u/ann/hidden/", "hidden")
    audit.assert_clean("personal")
