"""The account journeys in headless Chromium: voting while logged out (then logging in or
signing up), the login lock, a password reset by e-mail, the account page, user pages and
deleting an account. Every page passes axe-core (no serious or critical violation), fits
390 px, and is shot at 1280 and 390 px into test-artifacts/pages/accounts-*.png."""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from playwright.sync_api import Page, expect

from articles.store import selectors, services
from articles.types import NewPost
from tests import factories
from tests.browser import test_pages
from tests.browser.test_pages import PASSWORD, Audit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _site(settings) -> None:  # type: ignore[no-untyped-def]
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    test_pages.SHOTS.mkdir(parents=True, exist_ok=True)  # Audit's screenshots go there


def seed() -> tuple[int, int]:
    """carol with two articles; returns their ids."""
    carol = factories.user("carol", password=PASSWORD)
    now = time.time()
    ids = [
        services.article_post(
            NewPost(
                user_id=carol.pk,
                poster_name="carol",
                title=f"Sorted sets, part {n}",
                link=f"https://example.org/sets-{n}",
                now=now - 600 * (n + 1),
            )
        ).id
        for n in range(2)
    ]
    return ids[0], ids[1]


def log_in(page: Page, base: str, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form.panel button[type=submit]")


def test_a_logged_out_vote_is_cast_after_signing_up(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    first, _ = seed()
    page = visitor(None)
    audit = Audit()
    page.goto(f"{base}/new/")
    page.locator(f"#a{first} a.arrow.up").click()
    expect(page.locator(".notice")).to_contain_text("Log in to vote.")
    expect(page.locator(".notice")).to_contain_text("Sorted sets, part 0")
    audit.check(page, "accounts-login-to-vote")
    page.locator("main").get_by_role("link", name="Sign up").click()
    expect(page.locator(".notice")).to_contain_text("Sign up to vote. Your up-vote on")
    audit.check(page, "accounts-signup-to-vote")
    page.fill("#id_username", "newbie")
    page.fill("#id_password1", "A-good-pass-2026")
    page.fill("#id_password2", "A-good-pass-2026")
    page.click("form.panel button[type=submit]")
    expect(page).to_have_url(f"{base}/new/#a{first}")
    expect(page.locator(".messages")).to_contain_text("Your up-vote on “Sorted sets, part 0”")
    expect(page.locator(".messages")).not_to_contain_text("You are logged in")
    expect(page.locator(f"#a{first} [data-field=my_vote]")).to_have_text("you voted up")
    audit.check(page, "accounts-vote-counted")
    assert selectors.article_get(article_id=first).votes == 2
    audit.assert_clean("accounts-vote-signup")


def test_a_logged_out_vote_is_cast_after_logging_in_without_javascript(
    live_server, visitor
) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    _, second = seed()
    factories.user("dora", password=PASSWORD)
    page = visitor(None, java_script_enabled=False)
    page.goto(f"{base}/")
    page.locator(f"#a{second} a.arrow.down").click()
    expect(page.locator(".notice")).to_contain_text("down-vote")
    page.fill("#id_username", "dora")
    page.fill("#id_password", PASSWORD)
    page.click("form.panel button[type=submit]")
    expect(page).to_have_url(f"{base}/#a{second}")
    expect(page.locator(f"#a{second} [data-field=my_vote]")).to_have_text("you voted down")
    # Back to the login page afterwards: nothing is cast again.
    assert selectors.article_get(article_id=second).downvotes == 1


@pytest.mark.usefixtures("clock")
def test_the_login_lock_says_when_to_try_again(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    factories.user("dave", password=PASSWORD)
    page = visitor(None)
    audit = Audit()
    for n in range(5):
        log_in(page, base, "dave", f"wrong-{n}")
    audit.check(page, "accounts-login-wrong")
    log_in(page, base, "dave")  # the right password, while locked
    errors = page.locator("form.panel .errors")
    expect(errors).to_contain_text("Too many failed logins for this account")
    expect(errors).to_contain_text("Try again in")
    expect(errors).not_to_contain_text("correct username and password")
    expect(errors.get_by_role("link", name="reset your password")).to_have_attribute(
        "href", "/accounts/password/reset/"
    )
    expect(page.locator(".account .me")).to_have_count(0)
    audit.check(page, "accounts-login-locked")
    audit.assert_clean("accounts-lock")


def test_a_password_reset_by_email(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    factories.user("erin", email="erin@example.org", password=PASSWORD)
    page = visitor(None)
    audit = Audit()
    page.goto(f"{base}/accounts/login/")
    page.locator("main").get_by_role("link", name="Reset it by e-mail").click()
    audit.check(page, "accounts-reset-ask")
    page.fill("#id_email", "erin@example.org")
    page.click("form.panel button[type=submit]")
    expect(page.locator("h1")).to_have_text("Check your e-mail")
    audit.check(page, "accounts-reset-sent")
    (message,) = mail.outbox
    link = re.search(r"https?://\S+", message.body).group(0)  # type: ignore[union-attr]
    page.goto(link)
    expect(page.locator("h1")).to_have_text("Choose a new password")
    audit.check(page, "accounts-reset-choose")
    page.fill("#id_new_password1", "Fresh-pass-2026")
    page.fill("#id_new_password2", "Fresh-pass-2026")
    page.click("form.panel button[type=submit]")
    expect(page.locator("h1")).to_have_text("Password set")
    audit.check(page, "accounts-reset-done")
    page.goto(link)
    expect(page.locator("h1")).to_have_text("This link does not work")
    audit.check(page, "accounts-reset-used")
    log_in(page, base, "erin", "Fresh-pass-2026")
    expect(page.locator(".account .me")).to_have_text("erin")
    audit.assert_clean("accounts-reset")


def test_the_account_page_user_pages_and_deleting_an_account(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    first, _ = seed()
    factories.user("dave", password=PASSWORD)
    dave = visitor("dave", base)
    dave_post = services.article_post(
        NewPost(
            user_id=get_user_model().objects.get(username="dave").pk,
            poster_name="dave",
            title="Dave writes about streams",
            link="https://example.org/streams",
        )
    )
    audit = Audit()
    dave.get_by_role("link", name="Account").click()
    audit.check(dave, "accounts-settings")
    dave.fill("#id_email", "dave@example.org")
    dave.fill("#id_about", "I write about Redis streams.\nAnd <b>tags</b> stay text.")
    dave.click("form.panel button:has-text('Save')")
    expect(dave.locator(".messages")).to_contain_text("Your account is saved.")
    dave.locator(".account .me").click()
    expect(dave).to_have_url(f"{base}/u/dave/")
    expect(dave.locator(".about")).to_contain_text("<b>tags</b> stay text.")
    expect(dave.locator(".lead")).to_contain_text("1 karma")
    audit.check(dave, "accounts-user-own")
    carol = get_user_model().objects.get(username="carol")
    dave.goto(f"{base}/u/{carol.pk}/")  # the id URL redirects to the name
    expect(dave).to_have_url(f"{base}/u/carol/")
    audit.check(dave, "accounts-user-other")
    # Deleting: a wrong password keeps the account, the right one deletes it.
    dave.goto(f"{base}/accounts/settings/")
    dave.fill("form.danger #id_password", "wrong")
    dave.click("form.danger button[type=submit]")
    expect(dave.locator("form.danger")).to_contain_text("That is not your password.")
    audit.check(dave, "accounts-delete-refused")
    dave.fill("form.danger #id_password", PASSWORD)
    dave.click("form.danger button[type=submit]")
    expect(dave.locator(".messages")).to_contain_text("Your account is deleted.")
    # A new "dave" is not shown as the poster of the old dave's article.
    newcomer = visitor(None)
    newcomer.goto(f"{base}/signup/")
    newcomer.fill("#id_username", "dave")
    newcomer.fill("#id_password1", "A-good-pass-2026")
    newcomer.fill("#id_password2", "A-good-pass-2026")
    newcomer.click("form.panel button[type=submit]")
    newcomer.goto(f"{base}/new/")
    row = newcomer.locator(f"#a{dave_post.id}")
    expect(row).to_contain_text("by [deleted]")
    expect(row.get_by_role("link", name="dave", exact=True)).to_have_count(0)
    audit.check(newcomer, "accounts-deleted-poster")
    newcomer.goto(f"{base}/u/dave/")
    expect(newcomer.locator("main")).not_to_contain_text("Dave writes about streams")
    expect(newcomer.locator("main")).to_contain_text("No submissions yet.")
    assert first  # carol's articles are untouched
    audit.assert_clean("accounts-settings")


def test_a_lookalike_name_is_refused_at_sign_up(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    factories.user("alice", password=PASSWORD)
    page = visitor(None)
    audit = Audit()
    page.goto(f"{base}/signup/")
    page.fill("#id_username", "\u0430lice")  # a Cyrillic a
    page.fill("#id_password1", "A-good-pass-2026")
    page.fill("#id_password2", "A-good-pass-2026")
    page.click("form.panel button[type=submit]")
    expect(page.locator("form.panel")).to_contain_text("looks like another account")
    audit.check(page, "accounts-signup-lookalike")
    assert get_user_model().objects.filter(username="alice").count() == 1
    audit.assert_clean("accounts-lookalike")
