"""In headless Chromium: voting with the keyboard (j/k, then u/d), the dark theme
(prefers-color-scheme: dark) passing axe-core on every kind of page, a comment vote asked
for while logged out cast after the login and back at the comment, a refused vote said at
its item, and a top-level comment staying in the thread's sort. Screenshots at 1280 and
390 px, light and dark, in test-artifacts/themes/."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from articles.store import selectors, services
from articles.types import NewPost, Vote
from tests import factories
from tests.actors import staff_actor
from tests.browser.conftest import ARTIFACTS, PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Axe()
BLOCKING = ("serious", "critical")
SHOTS = ARTIFACTS / "themes"
WIDTHS = (1280, 390)


def seed() -> dict[str, Any]:
    """Twelve articles (two groups, one closed), a thread with a reply and a removed
    comment, a member (ann) and staff (mod)."""
    ann = factories.user("ann", password=PASSWORD)
    factories.staff("mod", password=PASSWORD)
    services.group_create(name="redis", description="The server.", actor=staff_actor("mod"))
    now = time.time()
    ids = []
    for n in range(12):
        article = services.article_post(
            NewPost(
                user_id=ann.pk,
                poster_name="ann",
                title=f"Article {n}: sorted sets and scripts",
                link=f"https://example.org/{n}" if n % 2 else "",
                text="" if n % 2 else "A text post with `code` and a [link](https://example.org).",
                groups=["redis"] if n % 3 else [],
                now=now - 900 * (n + 1),
            )
        )
        ids.append(article.id)
        for voter in range(1000, 1000 + n % 4):
            services.article_vote(article_id=article.id, user_id=voter, direction=Vote.UP)
    closed = services.article_post(
        NewPost(
            user_id=ann.pk,
            poster_name="ann",
            title="An old one",
            link="https://example.org/old",
            now=now - 8 * 86400,
        )
    )
    top = factories.comment(
        ann, ids[0], "Scores are **floats**.\n\n> quoted\n\n```\nZADD k 1 a\n```"
    )
    reply = factories.comment(ann, ids[0], "A reply.", top.id)
    spam = factories.comment(ann, ids[0], "Spam.")
    services.comment_remove(comment_id=spam.id, reason="Spam", actor=staff_actor("mod"))
    return {"ids": ids, "closed": closed.id, "top": top.id, "reply": reply.id, "ann": ann.pk}


def axe_problems(page: Page, name: str) -> list[str]:
    found = []
    for violation in AXE.run(page).response["violations"]:
        if violation["impact"] in BLOCKING:
            targets = "; ".join(" ".join(map(str, n["target"])) for n in violation["nodes"][:4])
            found.append(f"{name}: {violation['impact']} {violation['id']} ({targets})")
    return found


def look(page: Page, url: str, name: str, scheme: str) -> list[str]:
    """axe-core at 1280 px, and a screenshot at 1280 and 390 px, in `scheme`."""
    page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    page.set_viewport_size({"width": 1280, "height": 900})
    response = page.goto(url)
    assert response is not None and response.status < 500, url
    problems = axe_problems(page, f"{name} ({scheme})")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}-{width}-{scheme}.png"), full_page=True)
    return problems


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_every_kind_of_page_passes_axe_in_both_themes(live_server, visitor, scheme) -> None:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    site = seed()
    a, top = site["ids"][0], site["top"]
    problems: list[str] = []
    anon = visitor(None)
    for name, path in [
        ("home", "/"),
        ("top", "/top/?period=week"),
        ("new", "/new/"),
        ("search", "/search/?q=sorted"),
        ("groups", "/groups/"),
        ("group", "/g/redis/"),
        ("article", f"/a/{a}/"),
        ("article-closed", f"/a/{site['closed']}/"),
        ("permalink", f"/a/{a}/c/{top}/"),
        ("comments", "/comments/"),
        ("user", f"/u/{site['ann']}/"),
        ("modlog", "/modlog/"),
        ("login-for-a-comment-vote", f"/c/{top}/vote/offer/?direction=up&next=/a/{a}/"),
        ("signup", "/signup/"),
        ("not-found", "/a/99999/"),
    ]:
        problems += look(anon, base + path, f"anon-{name}", scheme)
    ann = visitor("ann", base)
    for name, path in [
        ("article", f"/a/{a}/"),
        ("submit", "/submit/"),
        ("comment-vote-offer", f"/c/{top}/vote/offer/?direction=down&next=/a/{a}/"),
        ("settings", "/accounts/settings/"),
    ]:
        problems += look(ann, base + path, f"member-{name}", scheme)
    # The submit page's preview (a POST: filled in and sent as a reader would).
    ann.set_viewport_size({"width": 1280, "height": 900})
    ann.goto(f"{base}/submit/")
    ann.fill("#id_title", "Sorted sets, previewed")
    ann.fill("#id_text", "Scores are **floats**.\n\n- one\n- two")
    ann.click("button[name=preview]")
    expect(ann.locator("section.preview strong")).to_have_text("floats")
    problems += axe_problems(ann, f"member-submit-preview ({scheme})")
    for width in WIDTHS:
        ann.set_viewport_size({"width": width, "height": 900})
        ann.screenshot(
            path=str(SHOTS / f"member-submit-preview-{width}-{scheme}.png"), full_page=True
        )
    # The keyboard's item, and the list of shortcuts open over the page.
    ann.set_viewport_size({"width": 1280, "height": 900})
    ann.goto(f"{base}/new/")
    ann.keyboard.press("j")
    ann.keyboard.press("?")
    expect(ann.locator("dialog.keys-help")).to_be_visible()
    problems += axe_problems(ann, f"member-shortcuts ({scheme})")
    ann.screenshot(path=str(SHOTS / f"member-shortcuts-1280-{scheme}.png"))
    mod = visitor("mod", base)
    problems += look(mod, f"{base}/a/{a}/", "staff-article", scheme)
    assert not problems, "\n".join(problems)


def test_j_k_then_u_votes_the_item_the_keyboard_is_on(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    page = visitor("mod", base)
    page.goto(f"{base}/new/")
    rows = page.locator("article.item")
    for key in ("j", "j", "j", "k"):  # the first, second, third, back to the second
        page.keyboard.press(key)
    second = rows.nth(1)
    expect(second).to_have_class(re.compile(r"\bkb-current\b"))
    expect(second).to_be_focused()
    article_id = int(second.get_attribute("data-article") or 0)
    before = selectors.article_get(article_id=article_id).votes
    page.keyboard.press("u")
    expect(second.locator(".arrow.up")).to_have_attribute("aria-pressed", "true")
    expect(second.locator("[data-field=my_vote]")).to_have_text("you voted up")
    assert selectors.article_get(article_id=article_id).votes == before + 1
    expect(page).to_have_url(f"{base}/new/")  # in place, by the script
    page.keyboard.press("z")  # down, the other pair of keys
    expect(second.locator(".arrow.down")).to_have_attribute("aria-pressed", "true")
    assert selectors.article_get(article_id=article_id).downvotes == 1
    expect(rows.nth(0).locator(".arrow.down")).to_have_attribute("aria-pressed", "false")
    # Typing in a field is typing, not a shortcut.
    page.fill(".topbar .search input", "")
    page.press(".topbar .search input", "u")
    expect(second.locator(".arrow.up")).to_have_attribute("aria-pressed", "false")
    # In a thread: j reaches the comments after the article; d votes the comment down.
    page.goto(f"{base}/a/{site['ids'][0]}/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    top = page.locator(f"#c{site['top']}")
    expect(top).to_have_class(re.compile(r"\bkb-current\b"))
    page.keyboard.press("d")
    own = top.locator("> details > .c-main .arrow.down")
    expect(own).to_have_attribute("aria-pressed", "true")
    assert selectors.comment_get(comment_id=site["top"]).downvotes == 1
    assert selectors.comment_get(comment_id=site["reply"]).downvotes == 0
    # ? lists the shortcuts; Escape closes the list; o opens the item.
    page.keyboard.press("?")
    expect(page.locator("dialog.keys-help")).to_contain_text("Keyboard shortcuts")
    page.keyboard.press("Escape")
    expect(page.locator("dialog.keys-help")).to_be_hidden()
    page.keyboard.press("o")
    expect(page).to_have_url(re.compile(rf"/a/{site['ids'][0]}/c/{site['top']}/"))


def test_a_comment_vote_asked_for_logged_out_is_cast_after_the_login(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    factories.user("bob", password=PASSWORD)
    a, top = site["ids"][0], site["top"]
    page = visitor(None)
    page.goto(f"{base}/a/{a}/?sort=new")
    page.locator(f"#c{top} > details > .c-main a.arrow.up").click()
    expect(page.locator(".notice")).to_contain_text("Your up-vote on the comment is offered")
    page.fill("#id_username", "bob")
    page.fill("#id_password", PASSWORD)
    page.click("form.panel button[type=submit]")
    expect(page.locator("h1")).to_have_text("Vote up this comment?")
    expect(page.locator(".comment-card")).to_contain_text("Scores are floats.")
    page.click("form.confirm button[name=direction]")
    expect(page).to_have_url(f"{base}/a/{a}/?sort=new#c{top}")
    expect(page.locator(f"#c{top} > details > .c-main [data-field=my_vote]")).to_have_text(
        "you voted up"
    )
    expect(page.locator(f"#c{top}")).to_be_in_viewport()
    assert selectors.comment_get(comment_id=top).votes == 1


def test_a_refused_vote_is_said_at_the_item(live_server, visitor, settings) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    seed()
    settings.ARTICLES_RATE_LIMITS = {"vote": (0, 600)}
    page = visitor("mod", base)
    page.goto(f"{base}/new/")
    row = page.locator("article.item").nth(9)
    row.scroll_into_view_if_needed()
    arrow = row.locator(".arrow.up")
    arrow.click()
    note = row.locator(".vote-note")
    expect(note).to_be_visible()
    expect(note).to_have_attribute("role", "alert")
    expect(note).to_be_in_viewport()
    expect(page.locator("main .messages")).to_have_count(0)
    said, pressed = note.bounding_box(), arrow.bounding_box()
    assert said and pressed and abs(said["y"] - pressed["y"]) < 120, (said, pressed)
    page.screenshot(path=str(SHOTS.parent / "themes-refused-vote-1280.png"))


def test_a_new_comment_stays_in_the_threads_sort_at_the_comment(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    site = seed()
    a = site["ids"][0]
    page = visitor("ann", base)
    page.goto(f"{base}/a/{a}/?sort=best")
    page.fill("#id_text", "A new top-level comment.")
    page.click(".thread > form.comment-form button[type=submit]")
    expect(page).to_have_url(re.compile(rf"/a/{a}/\?sort=best#c[0-9]+$"))
    new = page.locator(f"#c{page.url.split('#c')[-1]}")
    expect(new).to_contain_text("A new top-level comment.")
    expect(new).to_be_in_viewport()
    expect(page.locator(".thread-head .tabs a[aria-current=page]")).to_have_text("Best")
