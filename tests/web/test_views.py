"""The HTML pages and forms, through Django's test client (CSRF checks on for forms)."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.templatetags.articles_tags import safe_url
from articles.types import Vote
from tests.actors import staff_actor
from tests.factories import article
from tests.web.forms import login, post, text_of, token

pytestmark = pytest.mark.django_db

WEEK = 604_800


# --- listings --------------------------------------------------------------------------


def test_every_listing_shows_title_domain_poster_counts_score_and_groups(client, make_user):
    ann = make_user("ann")
    services.group_create(name="redis", description="Data structures.", actor=staff_actor())
    a = article(ann, title="Sorted sets", link="https://www.example.org/x", groups=["redis"])
    services.article_vote(article_id=a.id, user_id=99, direction=Vote.DOWN)
    day = datetime.fromtimestamp(a.time, tz=UTC).date().isoformat()
    urls = [
        reverse("articles:top"),
        reverse("articles:top") + "?period=day",
        reverse("articles:new"),
        reverse("articles:group-detail", args=["redis"]),
        reverse("articles:group-detail", args=["redis"]) + "?order=time",
        reverse("articles:user-detail", args=["ann"]),
        reverse("articles:article-detail", args=[a.id]),
    ]
    for url in urls:
        page = text_of(client.get(url))
        assert "Sorted sets" in page, url
        # The site after the title links to its page (issue 24).
        assert '(<a href="/d/example.org/">example.org</a>)' in page, url
        assert 'href="/u/ann/">ann</a>' in page, url
        # Points (up minus down), the counts behind them on hover; no raw score.
        assert 'title="1 up, 1 down"><b data-field="net">0</b>' in page, url
        assert '<span data-field="points">points</span>' in page, url
        assert 'data-field="score"' not in page and "ranks like" not in page, url
        assert 'href="/g/redis/"' in page, url
        assert "<time datetime=" in page, url
    good_day = client.get(reverse("articles:good-day", args=[day]))
    assert good_day.status_code == 200
    assert "Sorted sets" not in text_of(good_day)  # 1 up-vote is not a good article


def test_home_and_day_archive_list_good_articles(client, make_user, settings):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    ann = make_user("ann")
    good = article(ann, title="Good one", link="https://example.org/good")
    article(ann, title="Plain one", link="https://example.org/plain")
    services.article_vote(article_id=good.id, user_id=50, direction=Vote.UP)
    home = text_of(client.get(reverse("articles:home")))
    # The good articles first, under their own heading; then the rest, rising by score.
    good_part, rising = home.split('id="rising-heading"')
    assert "Good one" in good_part and "Plain one" not in good_part
    assert "Plain one" in rising and "Good one" not in rising
    day = datetime.fromtimestamp(good.time, tz=UTC).date().isoformat()
    assert f'href="/good/{day}/"' in home
    archive = client.get(reverse("articles:good-day", args=[day]))
    assert "Good one" in text_of(archive)
    assert 'rel="prev"' in text_of(archive)


def test_the_front_page_shows_a_users_own_new_post_before_any_article_is_good(client, make_user):
    ann = make_user("ann")
    for n in range(30):
        article(ann, title=f"Older {n}", link="", text="t", now=time.time() - 3600 - n)
    mine = article(ann, title="My brand new post", link="", text="t")
    home = text_of(client.get(reverse("articles:home")))
    assert "No good articles yet" in home and home.count('class="item"') == 25
    assert f'id="a{mine.id}"' in home.split('id="rising-heading"')[1]


def test_the_front_page_says_why_rising_is_empty_when_the_good_articles_hold_it(
    client, make_user, settings
):
    """Ensure an empty "Rising now" says that its articles are all shown above, not that
    nothing was posted, when every article its page ranks is a good article listed there."""
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 0  # each request reads the store
    ann = make_user("ann")
    for n in range(3):
        good = article(ann, title=f"Good {n}", link="", text="t")
        services.article_vote(article_id=good.id, user_id=50 + n, direction=Vote.UP)
    rising = text_of(client.get(reverse("articles:home"))).split('id="rising-heading"')[1]
    assert "all among the good articles above" in rising
    assert "Nothing posted yet" not in rising and 'class="item"' not in rising

    get_connection().flushdb()
    rising = text_of(client.get(reverse("articles:home"))).split('id="rising-heading"')[1]
    assert "Nothing posted yet" in rising and "good articles above" not in rising


@pytest.mark.parametrize("url", ["/", "/new/", "/top/", "/top/?period=week", "/g/redis/"])
def test_a_page_past_the_end_says_so_with_a_404_and_links_to_the_last(client, make_user, url):
    services.group_create(name="redis", actor=staff_actor())
    ann = make_user("ann")
    for n in range(30):
        article(ann, title=f"Article {n}", link="", text="t", groups=["redis"])
    sep = "&" if "?" in url else "?"
    response = client.get(f"{url}{sep}page=9")
    page = text_of(response)
    assert response.status_code == 404
    assert "There is no page 9: this list has 2 pages." in page
    assert 'page=2">Go to the last page (page 2)</a>' in page
    assert "page 9 of" not in page and "Nothing posted yet" not in page
    assert client.get(f"{url}{sep}page=2").status_code == 200


def test_top_lists_are_numbered_by_rank(client, make_user):
    ann = make_user("ann")
    for n in range(30):
        article(ann, title=f"Article {n}", link="", text="t")
    first = text_of(client.get("/top/"))
    second = text_of(client.get("/top/?page=2"))
    assert '<span class="rank">1.</span>' in first and '<span class="rank">25.</span>' in first
    assert '<ol class="items ranked" start="26">' in second
    assert '<span class="rank">26.</span>' in second
    assert 'class="rank"' not in text_of(client.get("/new/"))


def test_listings_page_25_articles_with_next_and_previous(client, make_user):
    ann = make_user("ann")
    now = time.time()
    for n in range(30):
        article(ann, title=f"Article number {n:02d}", link="", text="t", now=now - n)
    first = text_of(client.get(reverse("articles:new")))
    assert first.count('class="item"') == 25
    assert 'rel="next" href="/new/?page=2"' in first and 'rel="prev"' not in first
    second = text_of(client.get(reverse("articles:new") + "?page=2"))
    assert second.count('class="item"') == 5
    assert 'rel="prev" href="/new/?page=1"' in second and 'rel="next"' not in second


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/new/?page=0", "page"),
        ("/top/?page=abc", "page"),
        ("/top/?period=decade", "period"),
        ("/g/redis/?order=random", "order"),
        ("/good/2026-02-30/", "day"),
        ("/modlog/?page=-1", "page"),
    ],
)
def test_bad_query_values_answer_400_naming_the_field(client, url, field):
    services.group_create(name="redis", actor=staff_actor())
    response = client.get(url)
    assert response.status_code == 400
    assert f"<strong>{field}</strong>" in text_of(response)


def test_unknown_article_group_and_user_answer_404(client):
    assert client.get("/a/12345/").status_code == 404
    assert client.get("/g/nope/").status_code == 404
    assert client.get("/u/999/").status_code == 404
    assert client.get("/feeds/g/nope/").status_code == 404


def test_article_page_says_when_voting_closes_and_explains_its_ranking_in_words(client, make_user):
    ann = make_user("ann")
    posted = datetime(2026, 1, 1, 12, 0, tzinfo=UTC).timestamp()
    a = article(ann, text="Body <b>text</b>", now=posted)
    # Its window closed long ago by Redis' clock, so no vote can land now: its 11 votes
    # are written as a restore (or the book's code) leaves a closed article.
    conn = get_connection()
    conn.hset(keys.article(a.id), "votes", 11)
    conn.zadd(keys.SCORE, {keys.article(a.id): posted + 11 * 432})
    page = text_of(client.get(reverse("articles:article-detail", args=[a.id])))
    # 11 net votes x 7.2 minutes = 79.2 minutes: said in words, no time in the future.
    assert "Its +11 points rank it as if it had been posted 1\xa0hour, 19\xa0minutes later" in page
    assert "ranks like" not in page and "13:19" not in page
    assert "voting closed" in page
    assert "Body &lt;b&gt;text&lt;/b&gt;" in page

    fresh = article(ann, title="Fresh", link="https://example.org/fresh")
    assert "voting closes in 6\xa0days" in text_of(client.get(f"/a/{fresh.id}/"))


def test_closed_articles_show_no_active_vote_buttons(client, make_user):
    ann = make_user("ann")
    article(ann, now=time.time() - WEEK - 60)
    login(client, ann)
    page = text_of(client.get(reverse("articles:new")))
    assert 'class="arrow up off"' in page
    assert "vote-form" not in page


def test_listings_show_your_own_vote_and_offer_to_withdraw_it(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    services.article_vote(article_id=a.id, user_id=bob.pk, direction=Vote.DOWN)
    login(client, bob)
    page = text_of(client.get(reverse("articles:new")))
    assert "you voted down" in page
    assert 'value="none" aria-pressed="true" title="Withdraw your down-vote"' in page


def test_logged_out_vote_buttons_link_to_log_in(client, make_user):
    article(make_user("ann"))
    page = text_of(client.get(reverse("articles:new")))
    assert 'href="/accounts/login/?next=/new/"' in page
    assert "vote-form" not in page


# --- voting ----------------------------------------------------------------------------


def test_a_vote_is_a_post_that_returns_to_the_same_place(csrf_client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    login(csrf_client, bob)
    url = reverse("articles:article-vote", args=[a.id])
    response = post(
        csrf_client, url, {"direction": "up", "next": "/new/?page=1"}, form_page="/new/"
    )
    assert response.status_code == 302
    assert response["Location"] == f"/new/?page=1#a{a.id}"
    assert selectors.article_get(article_id=a.id).votes == 2
    post(csrf_client, url, {"direction": "down", "next": "/new/"}, form_page="/new/")
    after = selectors.article_get(article_id=a.id, user_id=bob.pk)
    assert (after.votes, after.downvotes, after.my_vote) == (1, 1, Vote.DOWN)
    post(csrf_client, url, {"direction": "none"}, form_page="/new/")
    assert selectors.article_get(article_id=a.id, user_id=bob.pk).my_vote == Vote.NONE


def test_a_vote_never_redirects_off_site(csrf_client, make_user):
    a = article(make_user("ann"))
    login(csrf_client, make_user("bob"))
    url = reverse("articles:article-vote", args=[a.id])
    response = post(
        csrf_client, url, {"direction": "up", "next": "https://evil.example/"}, form_page="/new/"
    )
    assert response["Location"] == f"/a/{a.id}/#a{a.id}"


def test_a_vote_without_csrf_token_or_by_get_changes_nothing(csrf_client, make_user):
    a = article(make_user("ann"))
    login(csrf_client, make_user("bob"))
    url = reverse("articles:article-vote", args=[a.id])
    assert csrf_client.post(url, {"direction": "up"}).status_code == 403
    assert csrf_client.get(url + "?direction=up").status_code == 405
    assert selectors.article_get(article_id=a.id).votes == 1


def test_a_vote_asked_for_json_answers_the_new_counts(csrf_client, make_user):
    a = article(make_user("ann"))
    login(csrf_client, make_user("bob"))
    response = post(
        csrf_client,
        reverse("articles:article-vote", args=[a.id]),
        {"direction": "down"},
        form_page="/new/",
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 200
    assert response.json() == {
        "id": a.id,
        "votes": 1,
        "downvotes": 1,
        "net": 0,
        "score": a.time,
        "my_vote": "down",
    }


def test_logged_out_voters_are_sent_to_log_in_and_back(client, make_user):
    a = article(make_user("ann"))
    response = client.post(f"/a/{a.id}/vote/", {"direction": "up", "next": "/top/"})
    assert response.status_code == 302
    # The login page is told which vote it is for (it signs it as an intent).
    assert response["Location"] == f"/accounts/login/?next=%2Ftop%2F&vote_on={a.id}&direction=up"
    json = client.post(f"/a/{a.id}/vote/", {"direction": "up"}, HTTP_ACCEPT="application/json")
    assert json.status_code == 401


def test_voting_on_a_closed_article_answers_a_clear_409(client, make_user):
    ann = make_user("ann")
    a = article(ann, now=time.time() - WEEK - 5)
    login(client, make_user("bob"))
    response = client.post(f"/a/{a.id}/vote/", {"direction": "up"})
    assert response.status_code == 409
    assert "voting window is over" in text_of(response)


def test_a_bad_vote_direction_answers_400_naming_the_field(client, make_user):
    a = article(make_user("ann"))
    login(client, make_user("bob"))
    response = client.post(f"/a/{a.id}/vote/", {"direction": "sideways"})
    assert response.status_code == 400
    assert "<strong>direction</strong>" in text_of(response)


@pytest.mark.usefixtures("clock")
def test_too_many_votes_answer_429_with_a_clear_page(client, make_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"vote": (2, 60)}
    a = article(make_user("ann"))
    login(client, make_user("bob"))
    for direction in ("up", "down"):
        assert client.post(f"/a/{a.id}/vote/", {"direction": direction}).status_code == 302
    response = client.post(f"/a/{a.id}/vote/", {"direction": "up"})
    assert response.status_code == 429
    assert "Too many votes: at most 2 every minute" in text_of(response)
    assert response["Retry-After"] == "60"


@pytest.mark.usefixtures("clock")
def test_vote_errors_asked_for_json_answer_json_with_the_status(client, make_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"vote": (1, 60)}
    closed = article(make_user("ann"), now=time.time() - WEEK - 5)
    login(client, make_user("bob"))
    json = {"HTTP_ACCEPT": "application/json"}
    response = client.post(f"/a/{closed.id}/vote/", {"direction": "up"}, **json)
    assert response.status_code == 409
    assert response.json()["code"] == "voting_closed"
    response = client.post(f"/a/{closed.id}/vote/", {"direction": "up"}, **json)
    assert response.status_code == 429
    assert "Too many votes" in response.json()["detail"]


# --- submitting ------------------------------------------------------------------------


def test_submit_needs_a_login_and_comes_back_after_it(client):
    response = client.get(reverse("articles:submit"))
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/submit/"


def test_submit_posts_an_article_with_groups(csrf_client, make_user):
    services.group_create(name="redis", actor=staff_actor())
    ann = make_user("ann")
    login(csrf_client, ann)
    response = post(
        csrf_client,
        "/submit/",
        {"title": "My post", "link": "https://example.org/p", "groups": ["redis"]},
    )
    assert response.status_code == 302
    created = selectors.article_list().items[0]
    assert response["Location"] == f"/a/{created.id}/"
    assert (created.title, created.groups, created.poster_name) == ("My post", ("redis",), "ann")


@pytest.mark.parametrize(
    ("data", "label"),
    [
        ({"title": "", "link": "https://example.org"}, "Title"),
        ({"title": "x", "link": "javascript:alert(1)"}, "Link"),
        ({"title": "x", "link": "ftp://example.org/file"}, "Link"),
        ({"title": "x", "link": "", "text": ""}, "Link"),
        ({"title": "x" * 301, "link": "https://example.org"}, "Title"),
    ],
)
def test_submit_errors_name_the_field(csrf_client, make_user, data, label):
    login(csrf_client, make_user("ann"))
    response = post(csrf_client, "/submit/", data)
    assert response.status_code == 400
    text = text_of(response)
    error = re.search(rf'<div id="(id_\w+_error)"><p class="error">{label}: ', text)
    assert error, "the error is not shown by its field"
    # The field points at its error (and any help) by ids that exist on the page.
    field = re.search(rf'<[^>]* aria-describedby="([^"]*{error.group(1)}[^"]*)"[^>]*>', text)
    assert field, "no field is described by the error"
    for described in field.group(1).split():
        assert f'id="{described}"' in text
    assert selectors.article_list().count == 0


def test_submitting_an_open_articles_link_goes_to_that_article(csrf_client, make_user):
    first = article(make_user("ann"), link="https://example.org/same")
    login(csrf_client, make_user("bob"))
    response = post(csrf_client, "/submit/", {"title": "Again", "link": "http://EXAMPLE.org/same/"})
    assert response.status_code == 302
    assert response["Location"] == f"/a/{first.id}/"
    page = text_of(csrf_client.get(response["Location"]))
    assert "already posted and is still open for voting" in page
    assert selectors.article_list().count == 1


def test_a_link_may_be_posted_again_after_voting_on_it_closed(csrf_client, make_user):
    old = article(make_user("ann"), link="https://example.org/same", now=time.time() - WEEK - 9)
    login(csrf_client, make_user("bob"))
    response = post(csrf_client, "/submit/", {"title": "Again", "link": "https://example.org/same"})
    assert response.status_code == 302
    assert response["Location"] != f"/a/{old.id}/"
    assert selectors.article_list().count == 2


@pytest.mark.usefixtures("clock")
def test_too_many_posts_answer_429(client, make_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"post": (1, 3600)}
    login(client, make_user("ann"))
    data = {"title": "One", "text": "body"}
    assert client.post("/submit/", data).status_code == 302
    response = client.post("/submit/", {"title": "Two", "text": "body"})
    assert response.status_code == 429
    assert "Too many posts: at most 1 every hour" in text_of(response)


# --- accounts --------------------------------------------------------------------------


def test_sign_up_logs_in_and_follows_a_local_next(csrf_client):
    data = {"username": "newbie", "password1": "pw-Secret-123", "password2": "pw-Secret-123"}
    response = post(csrf_client, "/signup/", {**data, "next": "/top/"})
    assert response.status_code == 302
    assert response["Location"] == "/top/"
    assert "newbie" in text_of(csrf_client.get("/top/"))


def test_sign_up_ignores_an_off_site_next(csrf_client):
    data = {"username": "newbie", "password1": "pw-Secret-123", "password2": "pw-Secret-123"}
    response = post(csrf_client, "/signup/", {**data, "next": "//evil.example/"})
    assert response["Location"] == "/"


def test_sign_up_errors_name_the_field(csrf_client):
    data = {"username": "newbie", "password1": "pw-Secret-123", "password2": "other-Secret-9"}
    response = post(csrf_client, "/signup/", data)
    assert response.status_code == 400
    assert "Password confirmation: " in text_of(response)


def test_log_in_follows_only_local_next(csrf_client, make_user):
    make_user("ann")
    creds = {"username": "ann", "password": "pw-Secret-123"}
    response = post(csrf_client, "/accounts/login/", {**creds, "next": "https://evil.example/"})
    assert response["Location"] == "/"
    csrf_client.post("/accounts/logout/", {"csrfmiddlewaretoken": token(csrf_client, "/")})
    response = post(csrf_client, "/accounts/login/", {**creds, "next": "/submit/"})
    assert response["Location"] == "/submit/"


def test_password_change_and_log_out(csrf_client, make_user):
    ann = make_user("ann")
    login(csrf_client, ann)
    data = {
        "old_password": "pw-Secret-123",
        "new_password1": "Brand-new-99",
        "new_password2": "Brand-new-99",
    }
    response = post(csrf_client, "/accounts/password/", data)
    assert response["Location"] == "/accounts/password/done/"
    ann.refresh_from_db()
    assert ann.check_password("Brand-new-99")
    response = csrf_client.post(
        "/accounts/logout/", {"csrfmiddlewaretoken": token(csrf_client, "/")}
    )
    assert response.status_code == 302
    assert "Log in" in text_of(csrf_client.get("/"))


# --- escaping and links ----------------------------------------------------------------


def test_titles_texts_and_usernames_are_escaped(client, make_user):
    evil = make_user("<b>x</b>")
    a = article(evil, title="<script>alert(1)</script>", link="", text="<img src=x onerror=1>")
    for url in ("/new/", f"/a/{a.id}/", "/feeds/new/"):
        page = text_of(client.get(url))
        assert "<script>alert(1)" not in page, url
        assert "<img src=x" not in page, url
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text_of(client.get(f"/a/{a.id}/"))


def test_a_link_that_is_not_http_is_never_rendered(client, conn, make_user):
    """Ensure data written by other code (the book's, say) cannot put a javascript: href."""
    a = article(make_user("ann"))
    conn.hset(keys.article(a.id), "link", "javascript:alert(1)")
    for url in ("/new/", f"/a/{a.id}/"):
        assert "javascript:" not in text_of(client.get(url)), url


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ("https://example.org/x", "https://example.org/x"),
        ("http://example.org", "http://example.org"),
        ("javascript:alert(1)", ""),
        ("JAVASCRIPT:alert(1)", ""),
        ("data:text/html,hi", ""),
        ("ftp://example.org", ""),
        ("//example.org", ""),
        ("https://", ""),
        ("https://exa mple.org", ""),
        (None, ""),
    ],
)
def test_safe_url_keeps_only_http_links(link, expected):
    assert safe_url(link) == expected


# --- staff -----------------------------------------------------------------------------

STAFF_URLS = ["/staff/", "/staff/groups/", "/staff/groups/redis/", "/staff/a/1/"]


def test_staff_pages_send_visitors_to_log_in_and_refuse_non_staff(client, make_user):
    services.group_create(name="redis", actor=staff_actor())
    article(make_user("ann"))
    for url in STAFF_URLS:
        assert client.get(url)["Location"] == f"/accounts/login/?next={url}"
    login(client, make_user("bob"))
    for url in STAFF_URLS:
        assert client.get(url).status_code == 403, url
    for url in ("/staff/groups/redis/delete/", "/staff/a/1/delete/", "/staff/a/1/groups/"):
        assert client.post(url, {}).status_code == 403, url
    assert selectors.group_list() and selectors.article_list().count == 1


def test_staff_create_describe_and_delete_groups(csrf_client, make_user):
    login(csrf_client, make_user("mod", staff=True))
    response = post(csrf_client, "/staff/groups/", {"name": "cats", "description": "Meow"})
    assert response.status_code == 302
    bad = post(csrf_client, "/staff/groups/", {"name": "Not A Slug"})
    assert "Name: " in text_of(bad)
    post(csrf_client, "/staff/groups/cats/", {"description": "Purr"})
    assert selectors.group_get(name="cats").description == "Purr"
    post(
        csrf_client,
        "/staff/groups/cats/delete/",
        {"reason": "merged"},
        form_page="/staff/groups/cats/",
    )
    assert selectors.group_list() == []


def test_staff_move_edit_and_delete_an_article_and_the_log_shows_it(csrf_client, make_user):
    services.group_create(name="redis", actor=staff_actor())
    a = article(make_user("ann"))
    login(csrf_client, make_user("mod", staff=True))
    page = f"/staff/a/{a.id}/"
    post(csrf_client, f"{page}groups/", {"add": ["redis"], "reason": "on topic"}, form_page=page)
    assert selectors.article_get(article_id=a.id).groups == ("redis",)
    assert "Sorted" not in text_of(csrf_client.get("/g/redis/"))
    assert "Hello world" in text_of(csrf_client.get("/g/redis/"))
    post(csrf_client, page, {"title": "Better title", "link": "https://example.org/b"})
    assert selectors.article_get(article_id=a.id).title == "Better title"
    bad = post(csrf_client, page, {"title": "x", "link": "javascript:x"})
    assert bad.status_code == 400 and "Link: " in text_of(bad)
    post(csrf_client, f"{page}delete/", {"reason": "spam"}, form_page=page)
    assert selectors.article_list().count == 0
    log = text_of(csrf_client.get("/modlog/"))
    group_link = '+<a href="/g/redis/">redis</a>'
    for bit in ("mod", "groups", group_link, "on topic", "edit", "delete", "spam"):
        assert bit in log, bit


def test_the_modlog_page_says_in_words_what_was_done_and_links_who_and_to_what(client, make_user):
    """Readers see "removed a comment", not comment_remove; the article, the comment and
    the people link to their pages while they exist. The API keeps the raw fields."""
    ann, mod = make_user("ann"), make_user("mod", staff=True)
    kept, gone = article(ann), article(ann, title="Spam here", link="https://example.org/s")
    note = services.comment_post(
        article_id=kept.id, user_id=ann.pk, author_name="ann", text="Buy now"
    )
    services.comment_post(  # a reply: the removed comment stays, as "[removed]"
        article_id=kept.id, user_id=mod.pk, author_name="mod", text="No.", parent_id=note.id
    )
    services.group_create(name="redis", actor=staff_actor("mod"))
    services.group_update(name="redis", description="Sorted sets.", actor=staff_actor("mod"))
    services.group_create(name="old", actor=staff_actor("ghost"))  # an actor with no account
    services.group_delete(name="old", reason="unused", actor=staff_actor("mod"))
    services.article_groups_update(
        article_id=kept.id, add=["redis"], reason="topic", actor=staff_actor("mod")
    )
    services.article_edit(
        article_id=kept.id,
        title="Hello, world",
        link="https://example.org/a",
        reason="typo",
        actor=staff_actor("mod", pk=mod.pk),
    )
    services.comment_remove(comment_id=note.id, reason="spam", actor=staff_actor("mod"))
    services.article_delete(article_id=gone.id, reason="spam", actor=staff_actor("mod", pk=mod.pk))
    log = text_of(client.get("/modlog/"))
    for words in (
        "created a group",
        "changed the description of a group",
        "deleted a group",
        "changed the groups of an article",
        "edited an article",
        "removed a comment",
        "deleted an article",
    ):
        assert words in log, words
    for raw in ("comment_remove", "group_create", "group_update", "group_delete"):
        assert raw not in log, raw
    assert f"article:{kept.id}" not in log and f"comment:{note.id}" not in log
    assert f'<a href="/a/{kept.id}/">article {kept.id}</a>' in log
    assert f'<a href="/a/{kept.id}/c/{note.id}/">comment {note.id}</a>' in log
    assert '<a href="/u/mod/">mod</a>' in log
    assert 'by <a href="/u/ann/">ann</a>' in log  # the removed comment's author
    assert ">ghost<" in log and 'href="/u/ghost/"' not in log
    api = client.get("/api/modlog/").json()
    assert {"comment_remove", "delete", "edit", "groups"} <= {e["action"] for e in api["results"]}
    assert f"comment:{note.id}" in {e["target"] for e in api["results"]}


def test_a_staff_edit_onto_an_open_articles_link_is_refused_on_the_form(csrf_client, make_user):
    ann = make_user("ann")
    x = article(ann, link="https://example.org/x")
    y = article(ann, title="Other", link="https://example.org/y")
    login(csrf_client, make_user("mod", staff=True))
    refused = post(
        csrf_client, f"/staff/a/{y.id}/", {"title": "Y", "link": "https://example.org/x"}
    )
    assert refused.status_code == 400 and f"already posted as article {x.id}" in text_of(refused)
    assert selectors.article_get(article_id=y.id).link == "https://example.org/y"


def test_staff_dashboard_draws_posts_and_votes_as_svg(client, make_user):
    article(make_user("ann"))
    login(client, make_user("mod", staff=True))
    page = text_of(client.get("/staff/"))
    assert page.count('<svg class="bar-chart') == 2
    assert "Articles posted per day" in page and "Votes cast per day" in page
    assert "<rect" in page


# --- feeds and health ------------------------------------------------------------------


def test_feeds_are_atom_and_linked_from_the_pages(client, make_user, settings):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 1
    services.group_create(name="redis", actor=staff_actor())
    article(make_user("ann"), title="Feed me", groups=["redis"])
    for url in ("/feeds/top/", "/feeds/new/", "/feeds/good/", "/feeds/g/redis/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith("application/atom+xml")
        assert "Feed me" in text_of(response)
    assert 'href="/feeds/g/redis/"' in text_of(client.get("/g/redis/"))
    assert 'href="/feeds/top/"' in text_of(client.get("/top/"))


def test_each_top_period_has_its_own_feed_and_entries_carry_updated_and_a_link(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    old = article(
        ann, title="Old news", link="https://example.org/old", now=time.time() - 3 * 86_400
    )
    services.article_vote(article_id=old.id, user_id=bob.pk, direction=Vote.UP)
    article(ann, title="Today's", link="https://example.org/today")
    titles = {}
    for period in ("day", "week", "month", "year"):
        response = client.get(f"/feeds/top/{period}/")
        assert response.status_code == 200, period
        assert f"top articles of the last {period}" in text_of(response)
        titles[period] = re.findall(r"<entry><title>(.*?)</title>", text_of(response))
        assert f'href="/feeds/top/{period}/"' in text_of(client.get(f"/top/?period={period}"))
    assert titles["day"] == ["Today's"] and titles["week"] == ["Old news", "Today's"]
    assert client.get("/feeds/top/all/").status_code == 404
    assert client.get("/feeds/top/decade/").status_code == 404
    feed = text_of(client.get("/feeds/top/"))
    entry = feed.split("<entry>")[1]
    # <updated> is the last vote (bob's), after <published>, the posting.
    published = re.search(r"<published>(.*?)</published>", entry).group(1)
    updated = re.search(r"<updated>(.*?)</updated>", entry).group(1)
    assert updated > published
    assert '&lt;a href="https://example.org/old"&gt;https://example.org/old&lt;/a&gt;' in entry
    assert "2 points (2 up, 0 down)" in entry


def test_group_list_shows_descriptions_and_sizes(client, make_user):
    services.group_create(name="redis", description="Data structures.", actor=staff_actor())
    article(make_user("ann"), groups=["redis"])
    page = text_of(client.get("/groups/"))
    assert "Data structures." in page and "1 article" in page


def test_healthz_still_answers(client):
    assert client.get("/healthz").json()["status"] == "ok"


@pytest.mark.usefixtures("clock")
def test_sign_ups_behind_a_trusted_proxy_are_limited_per_client_not_per_proxy(client, db, settings):
    """Ensure the pages read the client address as the API does (ARTICLES_NUM_PROXIES):
    behind a load balancer every sign-up would otherwise share one window."""
    settings.ARTICLES_RATE_LIMITS = {**settings.ARTICLES_RATE_LIMITS, "signup": (1, 3600)}
    settings.ARTICLES_NUM_PROXIES = 1

    def sign_up(name: str, address: str) -> int:
        data = {"username": name, "password1": "pw-Secret-123", "password2": "pw-Secret-123"}
        response = client.post(
            "/signup/", data, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=address
        )
        client.logout()
        return response.status_code

    assert sign_up("first", "203.0.113.7") == 302
    assert sign_up("second", "198.51.100.9") == 302
    assert sign_up("third", "203.0.113.7") == 429
