"""The search page and API as people use them: the words they type for an order, a list
of the groups to choose from, and every form of a word found (issue 24)."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from articles.store import selectors, services
from articles.types import SearchOrder, Vote
from tests import factories
from tests.actors import staff_actor


def post(now: float, title: str, groups=()) -> int:  # type: ignore[no-untyped-def]
    return factories.article(1, title, "", text="x", groups=groups, now=now, poster_name="u").id


def found(html: str) -> list[int]:
    return list(dict.fromkeys(int(n) for n in re.findall(r'href="/a/(\d+)/"', html)))


@pytest.fixture
def three(now):  # type: ignore[no-untyped-def]
    old = post(now - 200_000, "redis old")
    voted = post(now - 1_000, "redis voted")  # 3 votes x 432 s lift it above new
    new = post(now, "redis new")
    for user in range(2, 5):
        services.article_vote(article_id=voted, user_id=user, direction=Vote.UP)
    return old, voted, new


@pytest.mark.parametrize(
    ("word", "order"),
    [
        ("time", SearchOrder.NEWEST),
        ("new", SearchOrder.NEWEST),
        ("Newest", SearchOrder.NEWEST),
        (" date ", SearchOrder.NEWEST),
        ("latest", SearchOrder.NEWEST),
        ("top", SearchOrder.VOTES),
        ("points", SearchOrder.VOTES),
        ("votes", SearchOrder.VOTES),
        ("score", SearchOrder.SCORE),
        ("hot", SearchOrder.SCORE),
        ("", SearchOrder.SCORE),
    ],
)
def test_the_page_takes_the_words_people_type_for_an_order(client, three, word, order):
    old, voted, new = three
    response = client.get("/search/", {"q": "redis", "order": word})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<option value="{order.value}" selected>' in html
    expected = {
        SearchOrder.NEWEST: [new, voted, old],
        SearchOrder.VOTES: [voted, new, old],
        SearchOrder.SCORE: [voted, new, old],
    }[order]
    assert [i for i in found(html) if i in three] == expected


@pytest.mark.parametrize("word", ["random", "timely", "score;", "x" * 300])
def test_a_word_that_names_no_order_is_a_400_naming_order(client, word):
    response = client.get("/search/", {"q": "redis", "order": word})
    assert response.status_code == 400
    assert "order" in response.content.decode()


def test_the_group_filter_is_a_list_of_the_groups(client, now):
    for name in ("db", "ai", "web"):
        services.group_create(name=name, actor=staff_actor())
    inside = post(now, "redis inside", groups=["db"])
    post(now + 1, "redis outside")
    html = client.get("/search/", {"q": "redis", "group": "db"}).content.decode()
    select = re.search(r'<select name="group">(.*?)</select>', html, re.S)
    assert select, "no group list"
    options = re.findall(r'<option value="([^"]*)"( selected)?>', select.group(1))
    assert options == [("", ""), ("ai", ""), ("db", " selected"), ("web", "")]
    assert found(html) == [inside]
    assert 'type="text" name="group"' not in html
    # A name typed in the address stays chosen (it finds nothing if no such group).
    html = client.get("/search/", {"q": "redis", "group": "gone"}).content.decode()
    assert '<option value="gone" selected>gone</option>' in html
    # The API keeps taking a group's name.
    api = APIClient().get("/api/articles/search/", {"q": "redis", "group": "db"}).json()
    assert [a["id"] for a in api["results"]] == [inside]


def test_the_group_list_is_a_bounded_read(now):
    for n in range(5):
        services.group_create(name=f"g{n}", actor=staff_actor())
    assert selectors.group_names(limit=5) == ["g0", "g1", "g2", "g3", "g4"]
    assert selectors.group_names(limit=4) is None  # too many to list: a text box instead


def test_page_and_api_find_every_form_of_a_word(client, now):
    one = post(now, "A tool for Redis")
    two = post(now + 1, "Two tools compared")
    assert sorted(found(client.get("/search/", {"q": "tools"}).content.decode())) == [one, two]
    api = APIClient().get("/api/articles/search/", {"q": "tool"}).json()
    assert sorted(a["id"] for a in api["results"]) == [one, two]


def test_the_form_alone_answers_while_redis_is_stopped(own_redis, settings, client):  # type: ignore[no-untyped-def]
    settings.ARTICLES_REDIS_URL = own_redis.url
    services.group_create(name="db", actor=staff_actor())
    assert '<select name="group">' in client.get("/search/").content.decode()
    own_redis.stop()
    try:
        response = client.get("/search/")
        assert response.status_code == 200
        assert 'type="text" name="group"' in response.content.decode()  # no list to read
        assert client.get("/search/", {"q": "redis"}).status_code == 503
    finally:
        own_redis.start()
