"""No half-applied write: every script checks the types and values it will write before
its first write, and refuses with a named error that changes nothing (Redis does not
roll back a script that fails half-way)."""

from __future__ import annotations

import time

import pytest

from articles.errors import StoreCorrupt
from articles.store import keys, services
from articles.types import Vote
from tests import factories
from tests.actors import staff_actor
from tests.harness import snapshot

LINK_BUCKET = keys.link_slot("http://e.org/second")[0]  # where the second post's link goes


def posted(now: int, **fields) -> int:
    data = {"title": "T", "link": "https://e.org/a", "poster_name": "a"} | fields
    return factories.article(1, now=now, **data).id


@pytest.mark.parametrize(
    ("spoil", "where"),
    [
        (lambda c: c.hset("article:1", "votes", "1.0"), "article:1"),
        (lambda c: c.hset("article:1", "downvotes", "nan"), "article:1"),
        (lambda c: c.hset("article:1", "time", "1e20"), "article:1"),
        (lambda c: c.hset("article:1", "time", "inf"), "article:1"),
        (lambda c: (c.delete("score:"), c.set("score:", "x")), "score:"),
        (lambda c: (c.delete("good:"), c.sadd("good:", "article:1")), "good:"),
        (lambda c: (c.delete("votes:"), c.sadd("votes:", "article:1")), "votes:"),
        (lambda c: (c.delete("voted:1"), c.rpush("voted:1", "user:9")), "voted:1"),
        (lambda c: c.set("stats:votes", "x"), "stats:votes"),
    ],
)
def test_a_vote_on_bad_data_is_refused_by_name_and_changes_nothing(conn, now, spoil, where):
    article_id = posted(now)
    spoil(conn)
    before = snapshot(conn)
    with pytest.raises(StoreCorrupt) as refused:
        services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP)
    assert where in refused.value.message and refused.value.status_code == 503
    assert snapshot(conn) == before


def test_a_bad_daily_count_refuses_the_vote(conn, now):
    article_id = posted(now)
    day = time.strftime("%Y-%m-%d", time.gmtime(float(conn.time()[0])))
    conn.hset("stats:votes", day, "many")
    before = snapshot(conn)
    with pytest.raises(StoreCorrupt):
        services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP)
    assert snapshot(conn) == before


@pytest.mark.parametrize(
    "key",
    ["score:", "time:", "good:", "votes:", "submitted:1", LINK_BUCKET, "stats:posts", "voted:2"],
)
def test_a_post_into_an_index_of_the_wrong_type_writes_nothing(conn, now, key):
    posted(now, link="https://e.org/first")
    conn.delete(key)
    conn.rpush(key, "junk")
    conn.delete("article:")
    conn.set("article:", 1)
    before = snapshot(conn)
    with pytest.raises(StoreCorrupt):
        posted(now, link="https://e.org/second")
    after = snapshot(conn)
    assert after.pop(b"article:") != before.pop(b"article:")  # only the id was taken
    assert after == before


def test_a_move_between_groups_on_a_bad_group_set_writes_nothing(conn, now):
    services.group_create(name="a", actor=staff_actor())
    services.group_create(name="b", actor=staff_actor())
    article_id = posted(now, groups=["a"])
    conn.delete("group:b")
    conn.zadd("group:b", {"article:7": 1})
    before = snapshot(conn)
    with pytest.raises(StoreCorrupt):
        services.article_groups_update(
            article_id=article_id, add=["b"], remove=["a"], actor=staff_actor("mod")
        )
    assert snapshot(conn) == before


@pytest.mark.parametrize("key", ["good:", "votes:"])
def test_a_delete_with_a_bad_index_writes_nothing(conn, now, key):
    article_id = posted(now)
    conn.delete(key)
    conn.set(key, "x")
    before = snapshot(conn)
    with pytest.raises(StoreCorrupt):
        services.article_delete(
            article_id=article_id, reason="spam", actor=staff_actor("mod", pk=9)
        )
    assert snapshot(conn) == before


def test_an_edit_with_a_bad_link_index_writes_nothing(conn, now):
    article_id = posted(now)
    conn.sadd(keys.link_slot("http://e.org/b")[0], "x")
    before = snapshot(conn)
    with pytest.raises(StoreCorrupt):
        services.article_edit(
            article_id=article_id, title="New", link="https://e.org/b", actor=staff_actor("m")
        )
    assert snapshot(conn) == before
