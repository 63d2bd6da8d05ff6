"""Editing and deleting in headless Chromium: the poster's own edit and deletion, staff's
text edit and deletion with a reason, the moderation log's tombstones and a rate-limited
post that keeps what was typed. Each page: no serious or critical axe-core violation,
nothing wider than 390 px, and screenshots at 1280 and 390 px in test-artifacts/editing/."""

from __future__ import annotations

import time

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from articles.errors import ArticleNotFound
from articles.store import selectors, services
from articles.types import NewPost
from tests import factories
from tests.actors import staff_actor
from tests.browser.conftest import ARTIFACTS, PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE, PHONE = 1280, 390
AXE = Axe()
BLOCKING = ("serious", "critical")
SHOTS = "editing"


def check(page: Page, shot, name: str) -> None:  # type: ignore[no-untyped-def]
    """axe-core (0 serious or critical), the width at 390 px, and both screenshots."""
    page.set_viewport_size({"width": WIDE, "height": 900})
    violations = [
        f"{v['id']} ({v['impact']}): {v['help']} {[n['target'] for n in v['nodes']]}"
        for v in AXE.run(page).response["violations"]
        if v["impact"] in BLOCKING
    ]
    assert not violations, f"{name}: {violations}"
    shot(page, f"{SHOTS}/{name}-{WIDE}")
    page.set_viewport_size({"width": PHONE, "height": 900})
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE, f"{name} is {width} px wide at {PHONE} px"
    shot(page, f"{SHOTS}/{name}-{PHONE}")
    page.set_viewport_size({"width": WIDE, "height": 900})


def log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("form.panel button[type=submit]")
    expect(page.locator(".account .me")).to_have_text(username)


def make_users() -> tuple[int, int]:
    ann = factories.user("ann", password=PASSWORD)
    mod = factories.staff("mod", password=PASSWORD)
    (ARTIFACTS / SHOTS).mkdir(parents=True, exist_ok=True)
    return ann.pk, mod.pk


def text_post(user_id: int, title: str, **kw):  # type: ignore[no-untyped-def]
    return services.article_post(
        NewPost(
            user_id=user_id,
            poster_name="ann",
            title=title,
            text="A first draft.\n\nWith a second paragraph.",
            **kw,
        )
    )


def test_a_poster_edits_then_deletes_their_own_article(live_server, page, shot) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    ann, _ = make_users()
    article = text_post(ann, "Sorted sets in practice")
    log_in(page, base, "ann")
    page.goto(f"{base}/a/{article.id}/")
    page.get_by_role("link", name="Edit", exact=True).click()
    expect(page.locator("h1")).to_have_text("Edit your article")
    expect(page.locator("#id_text")).to_have_value("A first draft.\n\nWith a second paragraph.")
    check(page, shot, "poster-edit")
    page.fill("#id_title", "Sorted sets in practice, revised")
    page.fill("#id_text", "A better draft.")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator(".detail .title").first).to_contain_text("revised")
    expect(page.locator(".facts")).to_contain_text("Edited")
    expect(page.locator(".detail .text")).to_have_text("A better draft.")
    check(page, shot, "poster-article-edited")

    page.goto(f"{base}/a/{article.id}/edit/")
    page.fill("#id_text", "")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator(".field.has-error")).to_contain_text("Give a link, a text, or both.")
    expect(page.locator("#id_title")).to_have_value("Sorted sets in practice, revised")
    check(page, shot, "poster-edit-errors")

    page.goto(f"{base}/a/{article.id}/")
    page.get_by_role("link", name="Delete", exact=True).click()
    expect(page.locator("h1")).to_have_text("Delete your article?")
    check(page, shot, "poster-delete-confirm")
    page.get_by_role("link", name="Keep it").click()
    expect(page).to_have_url(f"{base}/a/{article.id}/")
    page.get_by_role("link", name="Delete", exact=True).click()
    page.get_by_role("button", name="Delete it").click()
    expect(page.locator(".messages")).to_contain_text("is deleted")
    with pytest.raises(ArticleNotFound):
        selectors.article_get(article_id=article.id)


def test_a_closed_article_offers_its_poster_no_edit(live_server, page, shot) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    ann, _ = make_users()
    closed = text_post(ann, "An old one", now=time.time() - 8 * 86400)
    log_in(page, base, "ann")
    page.goto(f"{base}/a/{closed.id}/")
    expect(page.get_by_role("link", name="Edit", exact=True)).to_have_count(0)
    response = page.goto(f"{base}/a/{closed.id}/edit/")
    assert response is not None and response.status == 403
    expect(page.locator(".error-page")).to_contain_text("while voting is open")
    check(page, shot, "poster-edit-403")


def test_staff_edit_a_body_delete_with_a_reason_and_the_log_keeps_a_tombstone(  # type: ignore[no-untyped-def]
    live_server, page, shot
) -> None:
    base = live_server.url
    ann, _ = make_users()
    services.group_create(
        name="redis", description="The data structure server.", actor=staff_actor("mod")
    )
    kept = text_post(ann, "Kept and edited", groups=["redis"])
    doomed = text_post(ann, "Spam that goes")
    services.group_create(name="python", actor=staff_actor("mod"))
    services.article_groups_update(
        article_id=kept.id, add=["python"], reason="Py", actor=staff_actor("mod")
    )
    services.group_delete(name="python", reason="Merged into redis", actor=staff_actor("mod"))
    log_in(page, base, "mod")

    page.goto(f"{base}/staff/a/{kept.id}/")
    page.fill("#id_text", "Edited by staff: the link to spam removed.")
    page.fill("#edit-form #id_reason", "Removed a spam link")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator(".messagelist, .messages").first).to_contain_text("Article updated")
    check(page, shot, "staff-article")
    assert selectors.article_get(article_id=kept.id).text.startswith("Edited by staff")

    page.goto(f"{base}/a/{doomed.id}/")
    page.get_by_role("link", name="Delete (staff)").click()
    expect(page.locator("#delete-form h2")).to_contain_text("Spam that goes")
    check(page, shot, "staff-delete-confirm")
    page.get_by_role("button", name="Delete article").click()  # the browser asks first
    assert page.locator("#id_reason").evaluate("e => e.validity.valueMissing")
    page.fill("#id_reason", "   ")  # past the browser's check; the server refuses it
    page.get_by_role("button", name="Delete article").click()
    expect(page.locator("#delete-form .errorlist")).to_contain_text("required")
    check(page, shot, "staff-delete-needs-reason")
    assert selectors.article_get(article_id=doomed.id).id == doomed.id
    page.fill("#id_reason", "Spam")
    page.get_by_role("button", name="Delete article").click()

    expect(page.locator("h1")).to_have_text("Moderation log")
    tombstone = page.locator("tr", has_text="Spam that goes")
    expect(tombstone).to_contain_text("(deleted)")
    expect(tombstone.locator(f'a[href="/a/{doomed.id}/"]')).to_have_count(0)
    edited = page.locator("tr", has_text="Removed a spam link")
    expect(edited.locator(f'a[href="/a/{kept.id}/"]')).to_have_count(1)
    expect(page.locator('a[href="/g/redis/"]').first).to_be_visible()
    expect(page.locator('a[href="/g/python/"]')).to_have_count(0)
    expect(page.locator("tr", has_text="Merged into redis")).to_contain_text("(deleted)")
    check(page, shot, "modlog-tombstones")


@pytest.mark.usefixtures("clock")
def test_a_rate_limited_post_keeps_what_was_typed(live_server, page, shot, settings) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    make_users()
    log_in(page, base, "ann")
    settings.ARTICLES_RATE_LIMITS = {"post": (0, 3600)}
    page.goto(f"{base}/submit/")
    page.fill("#id_title", "Typed with care")
    page.fill("#id_text", "Three paragraphs I would hate to type again.")
    response_status = []
    page.on("response", lambda r: response_status.append(r.status) if "/submit/" in r.url else None)
    page.get_by_role("button", name="Post").click()
    expect(page.locator("ul.errors")).to_contain_text("Too many posts")
    expect(page.locator("ul.errors")).to_contain_text("minutes")
    expect(page.locator("#id_title")).to_have_value("Typed with care")
    expect(page.locator("#id_text")).to_have_value("Three paragraphs I would hate to type again.")
    assert 429 in response_status
    check(page, shot, "submit-429")
