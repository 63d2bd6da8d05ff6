"""End to end in headless Chromium: sign up, submit, vote in the page, moderate, browse."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page, expect

from articles.store import services
from articles.types import NewPost, Vote
from tests import factories
from tests.actors import staff_actor
from tests.browser.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _site(settings) -> None:  # type: ignore[no-untyped-def]
    # Two up-votes make a good article here, so the flow can reach the home page.
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2


def seed() -> None:
    """A few articles by someone else, so the pages look like a site in use."""
    carol = factories.user("carol", password=PASSWORD)
    services.group_create(
        name="redis", description="The data structure server.", actor=staff_actor()
    )
    services.group_create(
        name="python", description="The language and its libraries.", actor=staff_actor()
    )
    now = time.time()
    titles = [
        ("Sorted sets are underrated", "https://example.org/zsets", ["redis"]),
        ("Type hints, two years later", "https://www.example.com/hints", ["python"]),
        ("Ask: your favourite small tool?", "", []),
        ("Lua scripts for atomic updates", "https://redis.io/docs/", ["redis", "python"]),
    ]
    for n, (title, link, groups) in enumerate(titles):
        article = services.article_post(
            NewPost(
                user_id=carol.pk,
                poster_name="carol",
                title=title,
                link=link,
                text="" if link else "Tell us below.",
                groups=groups,
                now=now - 3600 * (n + 1) * 5,
            )
        )
        for voter in range(1000, 1000 + 3 * (4 - n)):
            services.article_vote(article_id=article.id, user_id=voter, direction=Vote.UP)


def sign_up(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/signup/")
    page.fill("#id_username", username)
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("form.panel button[type=submit]")
    expect(page.locator(".account .me")).to_have_text(username)


def log_out(page: Page) -> None:
    page.click("text=Log out")
    expect(page.locator(".account")).to_contain_text("Log in")


def test_sign_up_submit_vote_in_page_moderate_and_see_it_on_the_group_and_home_pages(
    live_server, page, shot
):
    base = live_server.url
    seed()
    staff = factories.staff("mod", password=PASSWORD)
    assert staff.is_staff

    page.goto(f"{base}/new/")
    shot(page, "new-logged-out")

    # Sign up, and post an article.
    sign_up(page, base, "dora")
    page.goto(f"{base}/submit/")
    page.fill("#id_title", "My first post from a real browser")
    page.fill("#id_link", "https://example.org/browser")
    page.fill("#id_text", "Posted by Playwright.")
    shot(page, "submit")
    page.click("form.panel button[type=submit]")
    expect(page.locator("h1.title")).to_contain_text("My first post from a real browser")
    article_url = page.url
    article_id = int(re.search(r"/a/(\d+)/", article_url).group(1))
    item = page.locator(f"#a{article_id}")
    expect(item.locator(".meta [data-field=net]")).to_have_text("1")
    expect(item.locator("[data-field=points]")).to_have_text("point")
    expect(item.locator("[data-field=my_vote]")).to_have_text("you voted up")
    shot(page, "article")
    log_out(page)

    # Someone else votes it up, then switches to down: counts change with no reload.
    sign_up(page, base, "eve")
    page.goto(f"{base}/new/")
    item = page.locator(f"#a{article_id}")
    page.evaluate("window.__sameDocument = true")
    item.locator("button.arrow.up").click()
    expect(item.locator("[data-field=counts]")).to_have_attribute("title", "2 up, 0 down")
    expect(item.locator("[data-field=net]")).to_have_text(["2", "2"])
    expect(item.locator("[data-field=points]")).to_have_text("points")
    expect(item.locator("[data-field=my_vote]")).to_have_text("you voted up")
    expect(item.locator("button.arrow.up")).to_have_attribute("aria-pressed", "true")
    item.locator("button.arrow.down").click()
    expect(item.locator("[data-field=counts]")).to_have_attribute("title", "1 up, 1 down")
    expect(item.locator("[data-field=net]")).to_have_text(["0", "0"])
    expect(item.locator("[data-field=my_vote]")).to_have_text("you voted down")
    assert page.evaluate("window.__sameDocument === true"), "the page reloaded"
    shot(page, "new-after-votes")
    page.reload()
    expect(page.locator(f"#a{article_id} [data-field=my_vote]")).to_have_text("you voted down")
    log_out(page)

    # Staff put the article in a group; the group page shows it.
    page.goto(f"{base}/accounts/login/?next=/staff/a/{article_id}/")
    page.fill("#id_username", "mod")
    page.fill("#id_password", PASSWORD)
    page.click("form.panel button[type=submit]")
    expect(page).to_have_url(f"{base}/staff/a/{article_id}/")
    groups_form = page.locator("#groups-form")
    groups_form.get_by_label("redis").check()
    groups_form.locator("input[name=reason]").fill("It is about Redis")
    shot(page, "staff-article")
    groups_form.locator("input[type=submit]").click()
    expect(page.locator(".messagelist, .messages")).to_contain_text("Groups updated")
    page.goto(f"{base}/g/redis/")
    item = page.locator(f"#a{article_id}")
    expect(item).to_contain_text("My first post from a real browser")
    expect(item.locator("a.chip")).to_have_text(["redis"])

    # Staff's up-vote makes it a good article (2 up-votes here): the home page lists it.
    item.locator("button.arrow.up").click()
    expect(item.locator("[data-field=counts]")).to_have_attribute("title", "2 up, 1 down")
    shot(page, "group")
    page.goto(f"{base}/")
    expect(page.locator(f"#a{article_id}")).to_contain_text("My first post from a real browser")
    shot(page, "home")
    page.goto(f"{base}/modlog/")
    expect(page.locator("table")).to_contain_text("It is about Redis")
    shot(page, "modlog")
    page.goto(f"{base}/staff/")
    expect(page.locator("svg.bar-chart")).to_have_count(2)
    shot(page, "staff-dashboard")
    page.goto(f"{base}/top/?period=week")
    shot(page, "top")
    page.goto(f"{base}/a/{article_id}/")
    shot(page, "article-staff-view")


def test_a_logged_out_vote_goes_to_log_in_and_comes_back(live_server, page, shot):
    base = live_server.url
    seed()
    page.goto(f"{base}/top/")
    page.locator("article.item").first.locator("a.arrow.up").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/top/&vote_on=\d+&direction=up$"))
    shot(page, "login")
    page.fill("#id_username", "carol")
    page.fill("#id_password", PASSWORD)
    page.click("form.panel button[type=submit]")
    # Back at the item voted on (the vote is cast: tests/browser/test_accounts.py).
    expect(page).to_have_url(re.compile(re.escape(f"{base}/top/#a") + r"\d+$"))
    expect(page.locator(".account .me")).to_have_text("carol")
