"""The live element of the pages (articles.web.livepage): the address of the page's live
stream with the right query on every page that shows rows with points, for every viewer,
kept rows and kept anonymous pages among them; nothing where there is nothing to follow."""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from articles.store import services
from articles.types import Vote
from articles.web import livepage
from tests import factories
from tests.web.test_pagecache import another_process

pytestmark = pytest.mark.django_db

_ELEMENT = re.compile(
    r'<div class="live-source" hidden data-live="([^"]*)" data-live-since="(\d+)"></div>'
)


def live_of(page: str) -> tuple[str, dict[str, str], int] | None:
    """The page's live address (path, query) and since, or None when it has none."""
    found = _ELEMENT.findall(page)
    assert len(found) <= 1, "one live element a page"
    if not found:
        return None
    address, since = found[0]
    parts = urlsplit(address.replace("&amp;", "&"))
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    return parts.path, query, int(since)


def rows_of(page: str) -> list[int]:
    return [int(i) for i in re.findall(r'<article class="item" id="a(\d+)"', page)]


def get(client: Client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, path
    return response.content.decode()


def test_the_article_page_follows_its_article_and_says_when_it_was_made():
    article = factories.article(1, "followed")
    before = int(time.time() * 1000)
    made = live_of(get(Client(), f"/a/{article.id}/"))
    after = int(time.time() * 1000)
    assert made is not None
    path, query, since = made
    assert path == reverse("articles:live")
    assert query == {"article": str(article.id)}
    # The render time less the margin: nothing written since the page's reads is missed.
    assert before - livepage.SINCE_MARGIN_MS <= since <= after - livepage.SINCE_MARGIN_MS


def test_new_names_its_rows_and_asks_for_new_posts_on_its_first_page_only(settings):
    settings.ARTICLES_PER_PAGE = 2
    ids = [factories.article(1, f"post {n}", f"https://e.org/{n}").id for n in range(3)]
    first = get(Client(), "/new/")
    _, query, _ = live_of(first)  # type: ignore[misc]
    assert query == {"articles": f"{ids[2]},{ids[1]}", "new": "1"}
    assert rows_of(first) == [ids[2], ids[1]]
    _, query, _ = live_of(get(Client(), "/new/?page=2"))  # type: ignore[misc]
    assert query == {"articles": str(ids[0])}


def test_every_listing_names_the_rows_it_shows(make_user):
    group = factories.group("redis")
    user = make_user()
    ids = [
        factories.article(user, f"listed {n}", f"https://listed.org/{n}", groups=[group]).id
        for n in range(3)
    ]
    for voter in range(10, 14):
        services.article_vote(article_id=ids[0], user_id=voter, direction=Vote.UP)
    pages = [
        "/",
        "/top/",
        f"/g/{group}/",
        "/d/listed.org/",
        f"/u/{user.get_username()}/",
        "/search/?q=listed",
    ]
    for path in pages:
        page = get(Client(), path)
        made = live_of(page)
        assert made is not None, path
        _, query, _ = made
        shown = rows_of(page)
        assert sorted(shown) == sorted(ids), path
        assert query == {"articles": ",".join(map(str, shown))}, path


def test_a_page_without_rows_has_no_stream_for_a_visitor_and_the_inbox_for_a_user(make_user):
    assert live_of(get(Client(), "/comments/")) is None
    client = Client()
    client.force_login(make_user())
    path, query, _ = live_of(get(client, "/comments/"))  # type: ignore[misc]
    assert (path, query) == (reverse("articles:live"), {})


def test_an_error_page_has_none(make_user):
    client = Client()
    client.force_login(make_user())
    response = client.get("/a/999999/")
    assert response.status_code == 404
    assert live_of(response.content.decode()) is None


def test_kept_rows_are_named_as_rendered_ones(settings):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 0  # every page rendered, its rows kept
    ids = [factories.article(1, f"kept {n}", f"https://e.org/k{n}").id for n in range(2)]
    first = live_of(get(Client(), "/new/"))
    again = live_of(get(Client(), "/new/"))  # every row from the row cache
    assert first is not None and again is not None
    assert first[1] == again[1] == {"articles": f"{ids[1]},{ids[0]}", "new": "1"}


def test_a_kept_anonymous_page_is_right_for_every_visitor_it_is_served_to(settings, make_user):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    first_id = factories.article(1, "first", "https://e.org/first").id
    kept = get(Client(), "/new/")
    with another_process():
        second_id = factories.article(1, "second", "https://e.org/second").id
    served = get(Client(), "/new/")
    assert served == kept  # the same page, its since among it
    _, query, _ = live_of(served)  # type: ignore[misc]
    # It names the rows it shows; the post it does not show comes as a post event after
    # its since, and shows the "1 new article" notice.
    assert query == {"articles": str(first_id), "new": "1"}
    # A logged-in reader is never served it, and gets their own.
    client = Client()
    client.force_login(make_user())
    _, query, _ = live_of(get(client, "/new/"))  # type: ignore[misc]
    assert query == {"articles": f"{second_id},{first_id}", "new": "1"}


def test_the_article_page_does_not_name_its_own_row_twice():
    article = factories.article(1, "alone")
    page = get(Client(), f"/a/{article.id}/")
    _, query, _ = live_of(page)  # type: ignore[misc]
    assert "articles" not in query


def test_at_most_a_hundred_rows_are_named():
    live = livepage.Gathered()
    for n in range(1, 130):
        live.rows[n] = None
    live.article = 5
    query = livepage._query(live)
    ids = query["articles"].split(",")
    assert len(ids) == livepage.MAX_ROWS and "5" not in ids and query["article"] == "5"


def test_the_live_script_gets_its_words_in_the_page_language():
    factories.article(1, "worded")
    english = get(Client(), "/new/")
    assert 'live.js" defer></script>' in english  # its own English words serve
    german = Client().get("/new/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert 'data-new-comment="{n} neuer Kommentar"' in german
    assert 'data-new-articles="{n} neue Artikel"' in german
    assert 'data-reload="Neu laden"' in german


def test_no_page_names_a_stream_when_live_is_off(settings, make_user):
    settings.ARTICLES_LIVE_EVENTS = 0
    article = factories.article(1, "quiet")
    client = Client()
    client.force_login(make_user())
    for path in ("/new/", f"/a/{article.id}/", "/comments/"):
        assert live_of(get(client, path)) is None, path
