"""Hide and save on the pages: plain POST forms with CSRF that redirect back, the
reader's private lists under /u/<name>/, and listings without the reader's hidden articles."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from articles.web import pagecache
from tests.factories import article, comment
from tests.harness import redis_down
from tests.web.forms import login, post

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<article class="item" id="a(\d+)"')


def rows(response) -> list[int]:  # type: ignore[no-untyped-def]
    return [int(i) for i in ROW.findall(response.content.decode())]


def test_a_hidden_article_leaves_my_listings_and_comes_back_when_unhidden(csrf_client, make_user):
    ann = make_user("ann")
    kept, gone = (
        article(ann, "Kept", "https://example.org/k"),
        article(ann, "Gone", "https://e.org/g"),
    )
    login(csrf_client, ann)
    response = post(
        csrf_client,
        reverse("articles:article-hide", args=[gone.id]),
        {"next": "/new/"},
        form_page="/new/",
    )
    assert response.status_code == 302 and response["Location"] == "/new/"
    for page in ("/", "/new/", "/top/", "/top/?period=week", "/u/ann/"):
        assert rows(csrf_client.get(page)) == [kept.id], page
    hidden = csrf_client.get("/u/ann/hidden/")
    assert hidden.status_code == 200 and rows(hidden) == [gone.id]
    assert reverse("articles:article-unhide", args=[gone.id]) in hidden.content.decode()
    post(
        csrf_client,
        reverse("articles:article-unhide", args=[gone.id]),
        {"next": "/u/ann/hidden/"},
        form_page="/u/ann/hidden/",
    )
    assert rows(csrf_client.get("/new/")) == [gone.id, kept.id]
    assert rows(csrf_client.get("/u/ann/hidden/")) == []


def test_saved_articles_and_comments_are_listed_and_can_be_unsaved(csrf_client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(bob, "Worth keeping")
    c = comment(bob, a.id, "A comment worth keeping")
    login(csrf_client, ann)
    page = f"/a/{a.id}/"
    body = csrf_client.get(page).content.decode()
    assert reverse("articles:article-save", args=[a.id]) in body
    assert reverse("articles:comment-save", args=[c.id]) in body
    response = post(
        csrf_client, reverse("articles:article-save", args=[a.id]), {"next": page}, form_page=page
    )
    assert response.status_code == 302 and response["Location"] == f"{page}#a{a.id}"
    response = post(
        csrf_client, reverse("articles:comment-save", args=[c.id]), {"next": page}, form_page=page
    )
    assert response["Location"] == f"{page}#c{c.id}"
    assert rows(csrf_client.get("/u/ann/saved/")) == [a.id]
    saved = csrf_client.get("/u/ann/saved/comments/").content.decode()
    assert "A comment worth keeping" in saved
    post(
        csrf_client,
        reverse("articles:article-unsave", args=[a.id]),
        {"next": "/u/ann/saved/"},
        form_page="/u/ann/saved/",
    )
    post(
        csrf_client,
        reverse("articles:comment-unsave", args=[c.id]),
        {},
        form_page="/u/ann/saved/comments/",
    )
    assert rows(csrf_client.get("/u/ann/saved/")) == []
    assert (
        "A comment worth keeping" not in csrf_client.get("/u/ann/saved/comments/").content.decode()
    )


def test_the_upvoted_list_shows_my_up_votes(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(bob, "Liked")
    login(client, ann)
    client.post(reverse("articles:article-vote", args=[a.id]), {"direction": "up"})
    assert rows(client.get("/u/ann/upvoted/")) == [a.id]


@pytest.mark.parametrize("kind", ["saved", "hidden", "upvoted", "saved/comments"])
def test_my_lists_are_private(client, make_user, kind):
    make_user("ann")
    bob = make_user("bob")
    assert client.get(f"/u/ann/{kind}/").status_code == 302  # log in first
    login(client, bob)
    assert client.get(f"/u/ann/{kind}/").status_code == 404
    assert client.get(f"/u/bob/{kind}/").status_code == 200
    assert client.get(f"/u/nobody/{kind}/").status_code == 404


def test_an_account_named_with_a_slash_keeps_its_user_page(client, make_user):
    make_user("ann")
    make_user("ann/saved")
    response = client.get("/u/ann/saved/")
    assert response.status_code == 200 and b"ann/saved" in response.content


def test_only_the_owner_sees_the_tabs_of_their_lists(client, make_user):
    make_user("ann")
    bob = make_user("bob")
    login(client, bob)
    assert b"/u/ann/saved/" not in client.get("/u/ann/").content
    assert b"/u/bob/saved/" in client.get("/u/bob/").content


def test_hide_and_save_need_a_login_csrf_and_an_article(csrf_client, make_user):
    ann = make_user("ann")
    a = article(ann)
    url = reverse("articles:article-hide", args=[a.id])
    assert csrf_client.post(url).status_code == 403  # no CSRF token
    response = post(csrf_client, url, {}, form_page=reverse("articles:login"))
    assert response.status_code == 302 and "login" in response["Location"]
    login(csrf_client, ann)
    assert (
        post(
            csrf_client, reverse("articles:article-hide", args=[99]), {}, form_page="/new/"
        ).status_code
        == 404
    )
    assert (
        post(
            csrf_client, reverse("articles:comment-save", args=[99]), {}, form_page="/new/"
        ).status_code
        == 404
    )
    assert csrf_client.get(url).status_code == 405
    assert rows(csrf_client.get("/u/ann/hidden/")) == []


def test_a_page_filtered_for_a_reader_is_never_served_to_anyone_else(client, make_user, settings):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    ann = make_user("ann")
    a = article(ann)
    pagecache.clear()
    login(client, ann)
    post(client, reverse("articles:article-hide", args=[a.id]), {}, form_page="/new/")
    assert rows(client.get("/new/")) == []
    assert rows(Client().get("/new/")) == [a.id]  # anonymous: from the store, then kept
    assert rows(client.get("/new/")) == []  # the reader's page is never the kept one


def test_with_redis_down_hiding_is_a_503(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    login(client, ann)
    with redis_down():
        assert client.post(reverse("articles:article-hide", args=[a.id])).status_code == 503
        assert client.get("/u/ann/saved/").status_code == 503
