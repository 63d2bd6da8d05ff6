"""What a process keeps of its pages: links made for the script prefix of the request at
hand, anonymous listings the same whether kept or not, and every write dropping them."""

from __future__ import annotations

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.test import Client, RequestFactory
from django.urls import get_script_prefix, reverse, set_script_prefix
from rest_framework.test import APIClient

from articles.store import services, tokens
from articles.types import NewPost
from articles.urlcache import url_for

pytestmark = pytest.mark.django_db


def post(title: str, user_id: int = 999) -> int:
    return services.article_post(
        NewPost(
            user_id=user_id, poster_name=f"u{user_id}", title=title, link=f"https://e.org/{title}"
        )
    ).id


def test_links_follow_the_script_prefix_of_each_request():
    before = get_script_prefix()
    try:
        set_script_prefix("/")
        assert url_for("articles:article-detail", 5) == "/a/5/"
        set_script_prefix("/mounted/")
        assert url_for("articles:article-detail", 5) == "/mounted/a/5/"
        assert url_for("articles:article-detail", 5) == reverse("articles:article-detail", args=[5])
        set_script_prefix("/")
        assert url_for("articles:article-detail", 6) == "/a/6/"
    finally:
        set_script_prefix(before)


def served(path: str, script_name: str) -> str:
    """`path` through Django's own WSGI handler (which sets the script prefix from
    SCRIPT_NAME, as a host's server does; the test client does not)."""
    environ = RequestFactory().get(path).environ
    environ["SCRIPT_NAME"] = script_name
    environ["PATH_INFO"] = path
    answer: list[str] = []
    body = WSGIHandler()(environ, lambda status, headers, *rest: answer.append(status))
    assert answer[0].startswith("200")
    return b"".join(body).decode()


def test_a_host_under_a_script_name_gets_its_own_links(settings):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 0
    article_id = post("prefixed")
    before = get_script_prefix()
    try:
        assert f'href="/a/{article_id}/"' in served("/new/", "")
        assert f'href="/mounted/a/{article_id}/"' in served("/new/", "/mounted")
        assert f'href="/a/{article_id}/"' in served("/new/", "")
    finally:
        set_script_prefix(before)


def test_an_anonymous_listing_sets_no_csrf_cookie_kept_or_not(settings):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    post("no-token")
    first = Client().get("/new/")
    kept = Client().get("/new/")
    assert first.content == kept.content
    assert "csrftoken" not in first.cookies and "csrftoken" not in kept.cookies
    assert b"csrfmiddlewaretoken" not in first.content


def test_an_api_write_drops_the_kept_pages_at_once(settings, make_user):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    post("before")
    assert "before" in Client().get("/new/").content.decode()  # kept now
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {tokens.token_create(user=make_user())}")
    made = api.post(
        "/api/articles/", {"title": "From-the-API", "link": "https://e.org/api"}, format="json"
    )
    assert made.status_code == 201
    assert "From-the-API" in Client().get("/new/").content.decode()


def test_a_staff_write_drops_the_kept_pages_at_once(settings, make_user):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    article_id = post("Doomed-article")
    assert "Doomed-article" in Client().get("/new/").content.decode()  # kept now
    staff = Client()
    staff.force_login(make_user(staff=True))
    done = staff.post(f"/staff/a/{article_id}/delete/", {"reason": "spam"})
    assert done.status_code == 302
    assert "Doomed-article" not in Client().get("/new/").content.decode()
