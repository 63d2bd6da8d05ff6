"""Comments in headless Chromium: posting, replying, voting and collapsing with and without
JavaScript, deleting, staff removal, axe-core and the 390 px width on every comment page
(screenshots at 1280 and 390 px in test-artifacts/comments/), and Markdown that tries to
run script never running."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from articles import markdown
from articles.store import selectors, services
from articles.types import NewPost, Vote
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.browser.conftest import ARTIFACTS, PASSWORD
from tests.web.test_markdown import XSS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE, PHONE = 1280, 390
AXE = Axe()
BLOCKING = ("serious", "critical")
SHOTS = ARTIFACTS / "comments"


@pytest.fixture(autouse=True)
def _site(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARTICLES_COMMENT_DISPLAY_DEPTH = 4
    SHOTS.mkdir(parents=True, exist_ok=True)


@dataclass
class Thread:
    article: int
    top: int  # ann's, with bob's reply under it
    reply: int
    deep: int  # the end of a chain deeper than the display depth
    tombstone: int  # deleted by its author, a reply kept under it
    removed: int  # removed by staff, a reply kept under it
    lonely: int  # bob's, no replies: for deleting
    edited: int  # ann's, edited, still in its edit window
    closed_article: int
    ann: int
    bob: int


def comment(user: Any, article_id: int, text: str, parent_id: int | None = None, **kw: Any) -> int:
    return factories.comment(user, article_id, text, parent_id, **kw).id


def seed() -> Thread:
    ann = factories.user("ann", password=PASSWORD)
    bob = factories.user("bob", password=PASSWORD)
    factories.staff("mod", password=PASSWORD)
    now = time.time()
    article = services.article_post(
        NewPost(
            user_id=ann.pk,
            poster_name="ann",
            title="Sorted sets in practice",
            link="https://example.org/zsets",
            now=now - 7200,
        )
    )
    a = article.id
    top = comment(
        ann,
        a,
        "Scores are **floats**; ties break by member.\n\n"
        "```\nZADD scores 1 a\n```\n\n> quoted text\n\n- one\n- two\n\n"
        "See https://redis.io/docs/ for more.",
        now=now - 3600,
    )
    reply = comment(bob, a, "Good point, and `ZRANGE` takes `REV` now.", top, now=now - 3000)
    chain = reply
    for depth in range(2, 7):
        chain = comment(ann if depth % 2 else bob, a, f"Going deeper: level {depth}.", chain)
    tombstone = comment(bob, a, "I will delete this.", now=now - 2500)
    comment(ann, a, "A reply to a comment that goes away.", tombstone)
    services.comment_delete(comment_id=tombstone, actor=member_actor(bob.pk))
    removed = comment(bob, a, "Buy cheap watches!", now=now - 2400)
    comment(ann, a, "Reported.", removed)
    services.comment_remove(comment_id=removed, reason="Spam", actor=staff_actor("mod"))
    lonely = comment(bob, a, "A comment of bob's with no replies.", now=now - 2000)
    edited = comment(ann, a, "First words.", now=now - 1000)
    services.comment_edit(
        comment_id=edited, text="Better words (edited).", actor=member_actor(ann.pk)
    )
    for voter in range(1000, 1004):
        services.comment_vote(comment_id=top, user_id=voter, vote=Vote.UP)
    services.comment_vote(comment_id=lonely, user_id=1000, vote=Vote.DOWN)
    closed = services.article_post(
        NewPost(
            user_id=ann.pk,
            poster_name="ann",
            title="An old one, closed",
            link="https://example.org/old",
            now=now - 8 * 86400,
        )
    )
    return Thread(
        a, top, reply, chain, tombstone, removed, lonely, edited, closed.id, ann.pk, bob.pk
    )


class Audit:
    """axe-core once at 1280 px, the width and a full-page screenshot at 1280 and 390 px."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def check(self, page: Page, name: str) -> None:
        for width in (WIDE, PHONE):
            page.set_viewport_size({"width": width, "height": 900})
            if width == WIDE:
                for violation in AXE.run(page).response["violations"]:
                    if violation["impact"] in BLOCKING:
                        targets = "; ".join(
                            " ".join(map(str, n["target"])) for n in violation["nodes"][:4]
                        )
                        self.problems.append(
                            f"{name}: {violation['impact']} {violation['id']}: "
                            f"{violation['help']} ({targets})"
                        )
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            if scroll_width > width:
                self.problems.append(f"{name} @{width}: {scroll_width} px wide")
            page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)

    def visit(self, page: Page, url: str, name: str) -> None:
        page.set_viewport_size({"width": WIDE, "height": 900})
        response = page.goto(url)
        assert response is not None and response.status < 500, (url, response)
        self.check(page, name)

    def assert_clean(self) -> None:
        assert not self.problems, "\n".join(self.problems)


# --- every comment page ----------------------------------------------------------------------


@pytest.mark.usefixtures("clock")
def test_every_comment_page_passes_axe_and_fits_a_phone(live_server, visitor, settings) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    t = seed()
    audit = Audit()
    anon = visitor(None)
    audit.visit(anon, f"{base}/a/{t.article}/", "anon-article-thread")
    audit.visit(anon, f"{base}/a/{t.article}/?sort=new", "anon-article-thread-new")
    audit.visit(anon, f"{base}/a/{t.article}/c/{t.reply}/", "anon-permalink")
    audit.visit(anon, f"{base}/a/{t.closed_article}/", "anon-article-closed")
    audit.visit(anon, f"{base}/comments/", "anon-new-comments")
    audit.visit(anon, f"{base}/u/{t.ann}/", "anon-user-comments")
    audit.visit(anon, f"{base}/u/ann/comments/", "anon-user-all-comments")
    audit.visit(anon, f"{base}/new/", "anon-listing-counts")
    expect(anon.locator(f"#a{t.article}")).to_contain_text("11 comments")

    ann = visitor("ann", base)
    audit.visit(ann, f"{base}/a/{t.article}/", "member-article-thread")
    audit.visit(ann, f"{base}/a/{t.article}/c/{t.top}/", "member-permalink")
    audit.visit(ann, f"{base}/c/{t.edited}/edit/", "member-edit")
    ann.fill("#id_text", "")
    ann.click("form.form button[type=submit]")
    audit.check(ann, "member-edit-errors")
    audit.visit(ann, f"{base}/c/{t.top}/delete/", "member-delete-confirm")
    settings.ARTICLES_COMMENT_MAX_LENGTH = 20
    ann.goto(f"{base}/a/{t.article}/")
    ann.evaluate("document.getElementById('id_text').removeAttribute('maxlength')")
    ann.fill("#id_text", "This comment is far too long for the limit.")
    ann.click(".thread > form.comment-form button[type=submit]")
    expect(ann.locator("h1")).to_have_text("Your comment was not posted")
    audit.check(ann, "member-comment-400")
    settings.ARTICLES_COMMENT_MAX_LENGTH = 10_000
    settings.ARTICLES_RATE_LIMITS = {"comment": (0, 600)}
    ann.click("form.comment-form button[type=submit]")
    expect(ann.locator(".errors")).to_contain_text("Too many comments")
    audit.check(ann, "member-comment-429")

    mod = visitor("mod", base)
    audit.visit(mod, f"{base}/a/{t.article}/", "staff-article-thread")
    audit.visit(mod, f"{base}/c/{t.lonely}/remove/", "staff-remove-confirm")
    audit.assert_clean()


# --- posting and replying ---------------------------------------------------------------------


def test_posting_and_replying_in_place_with_javascript(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    t = seed()
    page = visitor("bob", base)
    page.goto(f"{base}/a/{t.article}/")
    page.fill("#id_text", "A *new* top-level comment.")
    page.click(".thread > form.comment-form button[type=submit]")
    new = page.locator(".comment", has_text="A new top-level comment.").first
    expect(new.locator("em")).to_have_text("new")
    expect(page.locator(".messages")).to_contain_text("Your comment is posted.")
    # The reply link opens a form under the comment, without leaving the page.
    page.goto(f"{base}/a/{t.article}/")
    top = page.locator(f"#c{t.top}")
    top.locator(".c-actions a.reply-link").first.click()
    form = top.locator(".reply-form").first
    expect(form).to_be_visible()
    expect(page).to_have_url(f"{base}/a/{t.article}/")
    form.locator("textarea").fill("Replying in place.")
    form.locator("button[type=submit]").click()
    # Back on the thread it was written in, at the reply (not off to the parent's page).
    expect(page).to_have_url(re.compile(rf"/a/{t.article}/#c[0-9]+$"))
    reply = page.locator(".comment", has_text="Replying in place.").first
    expect(reply).to_be_visible()
    assert selectors.comment_get(comment_id=int(page.url.split("#c")[-1])).parent_id == t.top


def test_replying_without_javascript_goes_through_the_permalink_page(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    """The permalink page has the form; sent, the reply is shown on the thread the reader
    came from, in its sort."""
    base = live_server.url
    t = seed()
    page = visitor("bob", base, java_script_enabled=False)
    page.goto(f"{base}/a/{t.article}/?sort=best")
    page.locator(f"#c{t.top} .c-actions a.reply-link").first.click()
    expect(page).to_have_url(
        f"{base}/a/{t.article}/c/{t.top}/?next=/a/{t.article}/%3Fsort%3Dbest#reply"
    )
    page.fill("#id_text", "A reply with no script.")
    page.click("#reply button[type=submit]")
    expect(page.locator(".comment", has_text="A reply with no script.").first).to_be_visible()
    assert re.fullmatch(rf"{base}/a/{t.article}/\?sort=best#c[0-9]+", page.url), page.url
    reply = int(page.url.split("#c")[-1])
    assert selectors.comment_get(comment_id=reply).parent_id == t.top
    expect(page.locator(f"#c{reply}")).to_be_in_viewport()


# --- voting -----------------------------------------------------------------------------------


def test_voting_on_a_comment_with_javascript_updates_it_in_place(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    t = seed()
    page = visitor("bob", base)
    page.goto(f"{base}/a/{t.article}/")
    top = page.locator(f"#c{t.top}")
    own = top.locator("> details > .c-main [data-field=net]").first
    reply = page.locator(f"#c{t.reply} > details > .c-main [data-field=net]")
    expect(own).to_have_text("4")
    top.locator("> details > .c-main button.arrow.up").click()
    expect(own).to_have_text("5")
    expect(top.locator("> details > .c-main [data-field=my_vote]")).to_have_text("you voted up")
    expect(reply).to_have_text("0")  # the reply inside it keeps its own count
    expect(page).to_have_url(f"{base}/a/{t.article}/")
    assert selectors.comment_get(comment_id=t.top).votes == 5
    top.locator("> details > .c-main button.arrow.up").click()  # withdraw
    expect(own).to_have_text("4")


@pytest.mark.parametrize("width", [WIDE, PHONE])
def test_voting_without_javascript_returns_to_the_comment_below_the_top_bar(
    live_server, visitor, width
) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    t = seed()
    page = visitor("bob", base, java_script_enabled=False)
    page.set_viewport_size({"width": width, "height": 700})
    page.goto(f"{base}/a/{t.article}/")
    page.locator(f"#c{t.lonely} > details > .c-main button.arrow.up").click()
    expect(page).to_have_url(f"{base}/a/{t.article}/#c{t.lonely}")
    expect(page.locator(f"#c{t.lonely} > details > .c-main [data-field=my_vote]")).to_have_text(
        "you voted up"
    )
    bar = page.locator(".topbar").bounding_box()
    box = page.locator(f"#c{t.lonely}").bounding_box()
    assert bar and box
    assert page.evaluate("window.scrollY") > 0
    assert box["y"] >= bar["y"] + bar["height"], f"the top bar covers the comment: {bar} {box}"
    page.screenshot(path=str(SHOTS / f"no-script-comment-vote-{width}.png"))


# --- collapsing -------------------------------------------------------------------------------


def test_a_comment_collapses_with_its_replies_without_javascript(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    t = seed()
    page = visitor(None, java_script_enabled=False)
    page.goto(f"{base}/a/{t.article}/")
    top = page.locator(f"#c{t.top}")
    reply_text = page.locator(f"#c{t.reply} .markdown").first
    expect(reply_text).to_be_visible()
    top.locator("> details > summary .toggle").click()
    expect(reply_text).to_be_hidden()
    expect(top.locator("> details > summary .folded")).to_be_visible()
    expect(top.locator("> details > summary .folded")).to_contain_text("(1 reply hidden)")
    top.locator("> details > summary .toggle").click()
    expect(reply_text).to_be_visible()
    # Past the display depth: a link to the rest of the thread.
    more = page.locator("p.more a").first
    expect(more).to_have_text("continue this thread →")
    more.click()
    expect(page.locator(".comment", has_text="level 6").first).to_be_visible()


# --- deleting and removing ------------------------------------------------------------------


def test_the_author_deletes_after_confirming(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    t = seed()
    page = visitor("ann", base)
    page.goto(f"{base}/a/{t.article}/")
    page.locator(f"#c{t.top} > details > .c-main .c-actions a", has_text="delete").click()
    expect(page.locator("h1")).to_have_text("Delete your comment?")
    page.click("form.form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("Your comment is deleted.")
    top = page.locator(f"#c{t.top}")
    expect(top.locator("> details > .c-main .tombstone")).to_have_text("[deleted]")
    expect(page.locator(f"#c{t.reply}")).to_be_visible()  # its reply stays


def test_staff_remove_with_a_reason_and_the_log_shows_it(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    t = seed()
    page = visitor("mod", base)
    page.goto(f"{base}/a/{t.article}/")
    page.locator(f"#c{t.lonely} .c-actions a", has_text="remove").click()
    expect(page.locator("h1")).to_have_text("Remove this comment?")
    page.eval_on_selector("#id_reason", "el => el.removeAttribute('required')")
    page.click("form.form button[type=submit]")  # no reason: refused, it says why
    expect(page.locator(".field.has-error")).to_be_visible()
    page.fill("#id_reason", "Off topic")
    page.click("form.form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text(f"Comment {t.lonely} removed.")
    expect(page.locator(f"#c{t.lonely}")).to_have_count(0)  # no replies: gone entirely
    page.goto(f"{base}/modlog/")
    expect(page.locator("main")).to_contain_text("Off topic")


# --- script never runs ------------------------------------------------------------------------

FLAG = "window.__xss"


def _payloads() -> list[str]:
    """The Markdown XSS list, each made to set a flag instead of alerting."""
    return [
        p.replace("alert(1)", "window.__xss=1").replace("msgbox(1)", "window.__xss=1") for p in XSS
    ]


def _assert_nothing_ran(page: Page, dialogs: list[str]) -> None:
    # Hover and focus everything: an on* handler that slipped through would fire.
    page.evaluate(
        """() => { for (const el of document.querySelectorAll('main *, body *')) {
            for (const type of ['mouseover', 'mouseenter', 'focus', 'toggle', 'animationstart'])
                el.dispatchEvent(new Event(type));
        } }"""
    )
    page.wait_for_timeout(200)
    assert page.evaluate(f"typeof {FLAG}") == "undefined"
    assert dialogs == []
    hrefs = page.eval_on_selector_all(".markdown a", "els => els.map(e => e.href)")
    assert all(h.startswith(("http://", "https://", "mailto:")) for h in hrefs), hrefs


def test_markdown_payloads_never_run_even_without_the_sites_csp(browser: Browser) -> None:
    """Ensure render()'s HTML itself is inert: put in a bare page, with no CSP to help."""
    context = browser.new_context()
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    body = "".join(f'<div class="markdown">{markdown.render(p)}</div>' for p in _payloads())
    page.set_content(f"<!doctype html><html><body><main>{body}</main></body></html>")
    _assert_nothing_ran(page, dialogs)
    context.close()


def test_payloads_in_comments_and_text_posts_never_run(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    eve = factories.user("eve", password=PASSWORD)
    payloads = _payloads()
    post = services.article_post(
        NewPost(
            user_id=eve.pk,
            poster_name="eve",
            title="A text post",
            link="",
            text="\n\n".join(payloads),
        )
    )
    for payload in payloads:
        comment(eve, post.id, payload)
    page = visitor("eve", base)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for url in (f"/a/{post.id}/", "/comments/", f"/u/{eve.pk}/"):
        page.goto(base + url)
        _assert_nothing_ran(page, dialogs)
    # One typed in through the form, too.
    page.goto(f"{base}/a/{post.id}/")
    page.fill("#id_text", '<img src=x onerror="window.__xss=1"> [x](javascript:window.__xss=1)')
    page.click(".thread > form.comment-form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("Your comment is posted.")
    _assert_nothing_ran(page, dialogs)
