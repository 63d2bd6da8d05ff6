"""The replies inbox in headless Chromium: the journey reply -> unread in the header and
the inbox -> read, without JavaScript; axe-core (0 serious or critical) and the widths of
1280 and 390 px on every inbox page (screenshots in test-artifacts/inbox/)."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from articles.store import services
from articles.types import NewPost
from tests import factories
from tests.browser.conftest import ARTIFACTS, PASSWORD
from tests.browser.test_comments import Audit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = ARTIFACTS / "inbox"


class InboxAudit(Audit):
    def check(self, page, name):  # type: ignore[no-untyped-def]
        import tests.browser.test_comments as comments

        saved, comments.SHOTS = comments.SHOTS, SHOTS
        try:
            super().check(page, name)
        finally:
            comments.SHOTS = saved


def seed() -> tuple[int, int]:
    """ann's article with her comment on it; bob answers later, in the browser."""
    ann = factories.user("ann", password=PASSWORD)
    factories.user("bob", password=PASSWORD)
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
    top = factories.comment(ann, article.id, "Scores are **floats**.", now=now - 3600).id
    return article.id, top


def test_reply_then_unread_in_the_header_and_inbox_then_read_without_javascript(
    live_server, visitor
) -> None:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    article, top = seed()
    audit = InboxAudit()
    # The journey runs with no script; axe-core needs it, so a second tab of ann's looks.
    ann = visitor("ann", base, java_script_enabled=False)
    looker = visitor("ann", base)
    ann.goto(f"{base}/inbox/")
    expect(ann.locator(".empty")).to_contain_text("No replies yet.")
    looker.goto(f"{base}/inbox/")
    audit.check(looker, "inbox-empty")

    bob = visitor("bob", base, java_script_enabled=False)
    bob.goto(f"{base}/a/{article}/c/{top}/#reply")
    bob.fill("#id_text", "Ties break by member, *lexically*.")
    bob.click("#reply button[type=submit]")
    expect(bob.locator(".comment", has_text="Ties break by member").first).to_be_visible()
    expect(bob.locator(".inbox-link .badge")).to_have_count(0)  # no inbox entry for oneself

    ann.goto(f"{base}/")
    expect(ann.locator(".account .inbox-link .badge")).to_have_text("1 unread reply")
    looker.goto(f"{base}/")
    audit.check(looker, "header-unread")
    ann.click(".account .inbox-link")
    expect(ann).to_have_url(f"{base}/inbox/")
    unread = ann.locator(".inbox-item.unread")
    expect(unread).to_have_count(1)
    expect(unread).to_contain_text("Ties break by member")
    expect(unread).to_contain_text("Sorted sets in practice")
    looker.goto(f"{base}/inbox/")
    audit.check(looker, "inbox-unread")

    ann.reload()  # looking marks nothing read
    expect(ann.locator(".inbox-item.unread")).to_have_count(1)
    ann.click("text=Mark all read")
    expect(ann).to_have_url(f"{base}/inbox/")
    expect(ann.locator(".messages")).to_contain_text("Your replies are marked read.")
    expect(ann.locator(".inbox-item.unread")).to_have_count(0)
    expect(ann.locator(".inbox-item")).to_have_count(1)
    expect(ann.locator(".account .inbox-link .badge")).to_have_count(0)
    looker.goto(f"{base}/inbox/")
    audit.check(looker, "inbox-read")

    ann.click(".inbox-item .c-actions >> text=permalink")
    expect(ann.locator(".comment", has_text="Ties break by member").first).to_be_visible()

    ann.goto(f"{base}/accounts/settings/")
    expect(ann.locator("#id_inbox_digest")).not_to_be_checked()
    looker.goto(f"{base}/accounts/settings/")
    audit.check(looker, "account-settings")
    audit.assert_clean()


def test_the_header_and_inbox_in_german_fit_a_phone(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    article, top = seed()
    bob = factories.user("carl", password=PASSWORD)
    factories.comment(bob, article, "Antwort.", top)
    audit = InboxAudit()
    ann = visitor("ann", base, locale="de-DE", extra_http_headers={"Accept-Language": "de"})
    ann.goto(f"{base}/inbox/")
    expect(ann.locator("h1")).to_have_text("Ihr Posteingang")
    expect(ann.locator(".account .inbox-link")).to_contain_text("Posteingang")
    audit.check(ann, "inbox-de")
    audit.assert_clean()
