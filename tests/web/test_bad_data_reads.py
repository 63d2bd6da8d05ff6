"""Bad data never takes the site down: an article whose keys hold bad data is left out of
every listing, API list and feed (and logged); an index of the wrong type is a 503 naming
the key on the reads that need it, and everything else keeps working."""

from __future__ import annotations

import logging
import time

import pytest
from django.test import Client

from articles.store import services
from articles.types import NewPost
from tests.actors import staff_actor

# Every read that lists articles, on each surface: page, API and feed.
LISTINGS = [
    "/",
    "/top/",
    "/top/?period=week",
    "/new/",
    "/g/g1/",
    "/g/g1/?order=time",
    "/feeds/top/",
    "/feeds/new/",
    "/feeds/good/",
    "/feeds/g/g1/",
    "/api/articles/",
    "/api/articles/?order=time",
    "/api/articles/good/",
    "/api/articles/top/?period=week",
    "/api/groups/g1/articles/",
]
OTHERS = ["/groups/", "/api/groups/", "/modlog/", "/api/modlog/", "/healthz"]


@pytest.fixture
def store(conn) -> None:
    """Two good articles in group g1: article 1 ("Spoilt") is the one the tests damage."""
    now = int(time.time())
    services.group_create(name="g1", actor=staff_actor())
    for n, title in ((1, "Spoilt"), (2, "Intact")):
        services.article_post(
            NewPost(
                user_id=1, poster_name="a", title=title, link=f"https://e.org/{n}", groups=["g1"]
            )
        )
        conn.hset(f"article:{n}", "votes", 300)
        conn.zadd("good:", {f"article:{n}": now - n})


def get(client: Client, url: str):  # type: ignore[no-untyped-def]
    return client.get(url, HTTP_ACCEPT="application/json" if url.startswith("/api/") else "*/*")


@pytest.mark.parametrize(
    "spoil",
    [
        lambda c: c.hset("article:1", "votes", "nan"),
        lambda c: c.hset("article:1", "downvotes", "1e400"),
        lambda c: c.hset("article:1", "votes", "many"),
        lambda c: c.hset("article:1", "time", "inf"),
        lambda c: c.hset("article:1", "time", "1e20"),
        lambda c: c.hset("article:1", "time", "-5"),
        lambda c: (c.delete("article:1"), c.set("article:1", "a string")),
    ],
    ids=["votes-nan", "downvotes-1e400", "votes-text", "time-inf", "time-1e20", "time-neg", "str"],
)
def test_a_bad_article_is_left_out_of_every_listing_api_list_and_feed(conn, store, db, spoil):
    spoil(conn)
    client = Client()
    for url in LISTINGS:
        response = get(client, url)
        assert response.status_code == 200, url
        assert b"Intact" in response.content and b"Spoilt" not in response.content, url


def test_a_bad_voter_set_leaves_the_article_out_of_a_voters_listing(conn, store, make_user):
    conn.delete("voted:1")
    conn.set("voted:1", "x")
    client = Client()
    client.force_login(make_user())
    for url in ("/new/", "/api/articles/?order=time"):
        response = get(client, url)
        assert response.status_code == 200, url
        assert b"Intact" in response.content and b"Spoilt" not in response.content, url


def test_a_left_out_article_is_logged_once_for_the_listing(conn, store, db, caplog):
    conn.hset("article:1", "votes", "nan")
    conn.hset("article:2", "time", "inf")
    with caplog.at_level(logging.WARNING, logger="articles.store.selectors"):
        assert Client().get("/new/").status_code == 200
    logged = [r.getMessage() for r in caplog.records if r.name == "articles.store.selectors"]
    assert len(logged) == 1
    assert "article:1" in logged[0] and "article:2" in logged[0]


def test_an_articles_own_page_with_bad_data_is_a_503_naming_it(conn, store, db):
    conn.hset("article:1", "time", "inf")
    client = Client()
    page, api = client.get("/a/1/"), get(client, "/api/articles/1/")
    assert page.status_code == api.status_code == 503
    assert b"article:1" in page.content
    assert api.json()["code"] == "store_corrupt" and api.json()["key"] == "article:1"
    assert client.get("/a/2/").status_code == 200


GROUP_READS = {"/groups/", "/g/g1/", "/g/g1/?order=time", "/feeds/g/g1/", "/api/groups/"}


@pytest.mark.parametrize(
    ("key", "spoil", "failing"),
    [
        (
            "score:",
            lambda c: c.set("score:", "x"),
            {"/", "/g/g1/", "/feeds/g/g1/"} | {"/api/articles/", "/api/groups/g1/articles/"},
        ),
        (
            "votes:",
            lambda c: c.set("votes:", "x"),
            {"/top/", "/top/?period=week", "/feeds/top/", "/api/articles/top/?period=week"},
        ),
        (
            "time:",
            lambda c: c.set("time:", "x"),
            {"/new/", "/top/?period=week", "/g/g1/?order=time", "/feeds/new/"}
            | {"/api/articles/?order=time", "/api/articles/top/?period=week"},
        ),
        ("good:", lambda c: c.set("good:", "x"), {"/", "/feeds/good/", "/api/articles/good/"}),
        (
            "groups:",
            lambda c: c.rpush("groups:", "g1"),
            GROUP_READS | {"/api/groups/g1/articles/"},
        ),
        (
            "group:g1",
            lambda c: c.set("group:g1", "x"),
            GROUP_READS | {"/api/groups/g1/articles/"},
        ),
        ("modlog:", lambda c: c.set("modlog:", "x"), {"/modlog/", "/api/modlog/"}),
    ],
)
def test_a_bad_index_is_a_503_naming_it_and_the_rest_keeps_working(
    conn, store, db, key, spoil, failing
):
    conn.delete(key)
    spoil(conn)
    client = Client()
    for url in LISTINGS + OTHERS:
        response = get(client, url)
        if url in failing:
            assert response.status_code == 503, url
            assert key.encode() in response.content, url
        else:
            assert response.status_code == 200, url
    assert get(client, "/healthz").json()["redis"]["reachable"] is True


def test_malformed_moderation_log_entries_are_left_out(conn, store, db):
    services.group_update(name="g1", description="kept", actor=staff_actor("mod"))
    for entry in (
        '{"time": "x", "action": "a"}',
        '{"time": 1e300, "action": "a"}',
        '{"time": 1, "details": 5}',
        '{"time": 1, "actor": ["x"]}',
        "[1, 2]",
        "not json",
    ):
        conn.lpush("modlog:", entry)
    client = Client()
    page, api = client.get("/modlog/"), get(client, "/api/modlog/")
    assert page.status_code == api.status_code == 200
    assert [e["action"] for e in api.json()["results"]] == ["group_update"]
