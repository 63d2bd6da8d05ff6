"""Searching: AND and NOT, orders, group and period, paging, the cache, the page and the
API, and hostile queries (400 or nothing found, never a 500, never a change)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from articles.errors import EmptySearch, InvalidInput
from articles.store import keys, selectors, services
from articles.types import Period, SearchOrder, Vote
from tests import factories
from tests.actors import staff_actor
from tests.harness import threads_together
from tests.store.search.conftest import builds

DAY = 86_400


def post(now: float, title: str, *, groups=(), user_id: int = 1, text: str = "x") -> int:
    return factories.article(
        user_id, title, "", text=text, groups=groups, now=now, poster_name="u"
    ).id


def ids(**kwargs) -> list[int]:
    return [a.id for a in selectors.article_search(**kwargs).items]


def test_words_are_anded_and_minus_words_excluded(now):
    a = post(now, "Redis streams explained")
    b = post(now + 1, "Redis lists explained")
    post(now + 2, "Python lists")
    assert ids(q="redis") == [b, a]
    assert ids(q="REDIS Lists") == [b]
    assert ids(q="redis -lists") == [a]
    assert ids(q="explained -redis") == []
    assert ids(q="nowhere") == []


def test_orders_score_newest_and_net_votes(now):
    old = post(now - 3 * DAY, "redis old")
    mid = post(now - DAY, "redis middle")
    new = post(now, "redis newest")
    for user in range(2, 12):  # ten up-votes: 10 x 432 s lifts old above nothing, but
        services.article_vote(article_id=old, user_id=user, direction=Vote.UP)
    services.article_vote(article_id=new, user_id=2, direction=Vote.DOWN)
    assert ids(q="redis") == [new, mid, old]  # score: time dominates
    assert ids(q="redis", order=SearchOrder.NEWEST) == [new, mid, old]
    assert ids(q="redis", order=SearchOrder.VOTES) == [old, mid, new]  # 11, 1, 0 net


def test_group_and_period_restrict_the_results(now):
    services.group_create(name="db", actor=staff_actor())
    a = post(now - 10 * DAY, "redis a", groups=["db"])
    b = post(now - 2 * DAY, "redis b")
    c = post(now, "redis c", groups=["db"])
    assert ids(q="redis", group="db") == [c, a]
    assert ids(q="redis", period=Period.WEEK) == [c, b]
    assert ids(q="redis", period=Period.WEEK, group="db") == [c]
    assert ids(q="redis", group="nosuchgroup") == []
    with pytest.raises(InvalidInput) as caught:
        selectors.article_search(q="redis", group="No Such:*")
    assert caught.value.field == "group"


def test_paging_25_a_page_with_exact_edges(now, conn):
    for n in range(51):
        post(now + n, f"redis {n}")
    first = selectors.article_search(q="redis")
    assert first.count == 51 and len(first.items) == 25 and first.has_next
    assert first.items[0].id == 51
    third = selectors.article_search(q="redis", page=3)
    assert [a.id for a in third.items] == [1] and not third.has_next
    assert selectors.article_search(q="redis", page=4).items == []
    seen = {a.id for p in (1, 2, 3) for a in selectors.article_search(q="redis", page=p).items}
    assert seen == set(range(1, 52))
    for bad in ("0", "-1", "x", "1e3"):
        with pytest.raises(InvalidInput):
            selectors.article_search(q="redis", page=bad)


def test_a_search_costs_two_round_trips_and_is_cached_with_bounded_keys(now, conn, settings):
    settings.ARTICLES_SEARCH_CACHE_SLOTS = 4
    for n in range(30):
        post(now + n, f"redis word{n % 7}")
    selectors.article_search(q="word2")  # the script loaded once (no NOSCRIPT below)
    before = conn.info("commandstats")
    selectors.article_search(q="redis word1")
    after = conn.info("commandstats")
    calls = {k: after[k]["calls"] - before.get(k, {"calls": 0})["calls"] for k in after}
    # the search script, then the script that reads the page's articles: 2 round trips
    assert calls.get("cmdstat_evalsha", 0) == 2
    assert calls.get("cmdstat_smembers", 0) == 1  # built: the smaller word's set read once
    built = builds(conn)
    selectors.article_search(q="word1 redis")  # the same search, another spelling: cached
    assert builds(conn) == built
    for n in range(7):
        for order in SearchOrder:
            selectors.article_search(q=f"word{n}", order=order)
    cache_keys = conn.keys("search:*")
    assert 0 < len(cache_keys) <= 3 * 4  # cache, its query and no scratch left, per slot
    assert not [k for k in cache_keys if k.endswith(b":tmp")]
    assert all(0 < conn.ttl(k) <= 30 for k in cache_keys)


def test_many_searches_at_once_compute_the_intersection_once(now, conn):
    for n in range(40):
        post(now + n, f"redis stampede {n}")
    before = builds(conn)
    pages = threads_together(lambda _: selectors.article_search(q="redis stampede"), 32)
    assert builds(conn) - before == 1
    assert {p.count for p in pages} == {40}


def test_a_deleted_article_leaves_the_results_at_once_after_the_cache(now, settings):
    settings.ARTICLES_SEARCH_CACHE_SECONDS = 1
    a = post(now, "redis gone")
    assert ids(q="gone") == [a]
    services.article_delete(article_id=a, actor=staff_actor("s", pk=1))
    assert ids(q="gone") == []  # the cached member has no hash: left out


@pytest.mark.parametrize("q", ["", "   ", "the and of", "*", ":", "{}", "-redis", "\x00\x01"])
def test_nothing_to_look_for_is_a_clear_message(q):
    with pytest.raises(EmptySearch) as caught:
        selectors.article_search(q=q)
    assert caught.value.field == "q" and caught.value.status_code == 400


HOSTILE = [
    "x" * 401,
    "redis " * 80,
    " ".join(f"w{n}x" for n in range(9)),
    "*",
    "idx:*",
    "article:1",
    "{idx}:redis",
    "score: time:",
    "\x00\x07\x1b[2J",
    "redis\r\nFLUSHALL\r\n",
    "' OR 1=1 --",
    "<script>alert(1)</script>",
    "%00%2A",
]


@pytest.mark.parametrize("q", HOSTILE)
def test_hostile_queries_change_nothing_and_answer_400_or_nothing_found(now, conn, client, q):
    post(now, "redis article one")
    before = {
        k: conn.type(k) for k in conn.keys("*") if not k.startswith((b"search:", b"ratelimit:"))
    }
    dumps = {k: conn.dump(k) for k in before}
    response = client.get("/search/", {"q": q})
    assert response.status_code in (200, 400)
    api = APIClient().get("/api/articles/search/", {"q": q})
    assert api.status_code in (200, 400), api.content
    if api.status_code == 200:
        assert isinstance(api.json()["results"], list)
    after = {
        k: conn.type(k) for k in conn.keys("*") if not k.startswith((b"search:", b"ratelimit:"))
    }
    assert after == before and {k: conn.dump(k) for k in after} == dumps
    assert b"<script>alert" not in response.content


def test_a_query_of_bytes_that_are_not_utf8_is_no_500(client):
    assert client.get("/search/?q=%ED%A0%80%FF").status_code in (200, 400)
    assert APIClient().get("/api/articles/search/?q=%ED%A0%80%FF").status_code in (200, 400)


def test_the_page_works_without_javascript_and_highlights_escaped_titles(client, now):
    post(now, "Redis <b>bold</b> & Café")
    post(now, "Python only")
    response = client.get("/search/", {"q": "cafe redis"})
    body = response.content.decode()
    assert response.status_code == 200
    assert "<mark>Redis</mark> &lt;b&gt;bold&lt;/b&gt; &amp; <mark>Café</mark>" in body
    assert "Python only" not in body and "1 article found" in body
    assert 'name="q"' in body and 'action="/search/"' in body


def test_an_empty_search_page_says_what_to_do(client):
    response = client.get("/search/", {"q": "the"})
    assert response.status_code == 200
    assert "Type a word to look for" in response.content.decode()
    assert client.get("/search/").status_code == 200


def test_a_too_long_search_page_is_a_400_naming_q(client):
    response = client.get("/search/", {"q": "x" * 401})
    assert response.status_code == 400
    assert "400 characters" in response.content.decode()


def test_every_page_has_the_search_box(client):
    body = client.get("/top/").content.decode()
    assert 'role="search"' in body and 'action="/search/"' in body


def test_the_api_searches_with_order_group_period_and_paging(now):
    services.group_create(name="db", actor=staff_actor())
    a = post(now - DAY, "redis one", groups=["db"])
    b = post(now, "redis two")
    api = APIClient()
    body = api.get("/api/articles/search/", {"q": "Redis"}).json()
    assert [r["id"] for r in body["results"]] == [b, a]
    assert body["count"] == 2 and body["words"] == ["redis"] and body["excluded"] == []
    body = api.get("/api/articles/search/", {"q": "redis -two", "group": "db"}).json()
    assert [r["id"] for r in body["results"]] == [a] and body["excluded"] == ["two"]
    body = api.get("/api/articles/search/", {"q": "redis", "order": "votes"}).json()
    assert body["count"] == 2
    empty = api.get("/api/articles/search/", {"q": "the"})
    assert empty.status_code == 400 and empty.json()["code"] == "empty_search"
    assert empty.json()["field"] == "q"
    long = api.get("/api/articles/search/", {"q": "x" * 401})
    assert long.status_code == 400 and long.json()["field"] == "q"
    assert api.get("/api/articles/search/").status_code == 400
    assert api.get("/api/articles/search/", {"q": "r", "order": "x"}).status_code == 400


def test_search_keys_are_only_the_named_ones(now, conn):
    post(now, "redis")
    selectors.article_search(q="redis -*")
    assert set(conn.keys("postings:*")) == {keys.postings("redis").encode()}
