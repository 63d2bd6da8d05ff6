"""Comment search (issue 24) on the search page and in the API: the Articles | Comments
tabs, each found comment with its excerpt marked, author, points, age and links, the
setting that turns it off, and the API's /api/comments/search/."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from articles.store import services
from tests import factories
from tests.actors import member_actor


@pytest.fixture
def found_two(now):  # type: ignore[no-untyped-def]
    article = factories.article(1, "Streams in Redis", "https://example.org/s", now=now).id
    first = factories.comment(2, article, "Consumer groups make **streams** work", now=now)
    second = factories.comment(3, article, "Streams keep history; trim by MAXLEN", now=now + 1)
    factories.comment(4, article, "Nothing to see here", now=now + 2)
    return article, first.id, second.id


def test_the_comments_tab_lists_the_comments_found_newest_first(client, found_two):  # type: ignore[no-untyped-def]
    article, first, second = found_two
    response = client.get("/search/", {"q": "stream", "kind": "comments"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'aria-current="page">Comments</a>' in html
    assert '<input type="hidden" name="kind" value="comments">' in html
    assert 'name="order"' not in html and 'name="group"' not in html
    assert "2 comments found, newest first." in html
    assert html.index(f"/c/{second}/") < html.index(f"/c/{first}/")
    assert f'href="/a/{article}/c/{first}/#c{first}"' in html  # into its thread
    assert "<mark>streams</mark>" in html and "<mark>Streams</mark>" in html
    assert "**" in html  # the excerpt is the text as written, escaped, not rendered
    assert ">u2</a>" in html and "<b>0</b> points" in html
    assert "Nothing to see" not in html


def test_the_articles_tab_is_the_default_and_links_to_comments(client, found_two):  # type: ignore[no-untyped-def]
    html = client.get("/search/", {"q": "redis stream"}).content.decode()
    assert 'aria-current="page">Articles</a>' in html
    assert 'href="/search/?q=redis%20stream&amp;period=all&amp;kind=comments"' in html


def test_a_deleted_comment_is_not_found(client, found_two):  # type: ignore[no-untyped-def]
    _, first, _ = found_two
    services.comment_delete(comment_id=first, actor=member_actor(2))
    html = client.get("/search/", {"q": "consumer", "kind": "comments"}).content.decode()
    assert "No comment has all these words." in html


def test_a_bad_kind_is_a_400_and_zero_words_hides_the_tab(client, settings):  # type: ignore[no-untyped-def]
    response = client.get("/search/", {"q": "redis", "kind": "users"})
    assert response.status_code == 400 and "kind" in response.content.decode()
    settings.ARTICLES_SEARCH_COMMENT_WORDS = 0
    assert 'aria-label="What to search"' not in client.get("/search/").content.decode()
    assert client.get("/search/", {"q": "redis", "kind": "comments"}).status_code == 400


def test_the_api_searches_comments(found_two):  # type: ignore[no-untyped-def]
    _, first, _ = found_two
    api = APIClient()
    response = api.get("/api/comments/search/", {"q": "streams -maxlen"})
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1 and body["words"] == ["stream"] and body["excluded"] == ["maxlen"]
    (only,) = body["results"]
    assert only["id"] == first and only["article_title"] == "Streams in Redis"
    assert api.get("/api/comments/search/", {"q": "the"}).json()["code"] == "empty_search"
    bad = api.get("/api/comments/search/", {"q": "streams", "period": "decade"})
    assert bad.status_code == 400 and bad.json()["field"] == "period"


def test_the_api_answers_404_when_comments_are_not_searched(settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_SEARCH_COMMENT_WORDS = 0
    assert APIClient().get("/api/comments/search/", {"q": "redis"}).status_code == 404


def test_redis_down_is_a_503(own_redis, settings, client):  # type: ignore[no-untyped-def]
    settings.ARTICLES_REDIS_URL = own_redis.url
    own_redis.stop()
    try:
        assert client.get("/search/", {"q": "redis", "kind": "comments"}).status_code == 503
        assert APIClient().get("/api/comments/search/", {"q": "redis"}).status_code == 503
    finally:
        own_redis.start()
