"""`manage.py check_votes` finds every kind of broken invariant and --repair fixes it."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from articles.errors import DuplicateLink
from articles.operations import audit
from articles.operations.audit.indexes import slot_entry
from articles.store import keys, selectors, services
from articles.types import NewPost, Vote
from tests import links
from tests.actors import staff_actor

WEEK = 604_800


def run(*args: str) -> str:
    out = StringIO()
    call_command("check_votes", *args, stdout=out)
    return out.getvalue()


def test_a_clean_store_passes(now):
    services.article_post(
        NewPost(user_id=1, poster_name="a", title="T", link="https://e.org/", now=now)
    )
    assert "0 problem(s)" in run()


def test_each_broken_invariant_is_reported_and_repaired(conn, settings, now):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    services.group_create(name="g", actor=staff_actor())
    for n in range(1, 8):
        services.article_post(
            NewPost(
                user_id=1,
                poster_name="a",
                title=f"T{n}",
                link=f"https://e.org/{n}",
                groups=["g"],
                now=now,
            )
        )
    services.article_vote(article_id=2, user_id=2, direction=Vote.UP, now=now)
    conn.zincrby("score:", 5, "article:1")  # score drifts
    conn.hincrby("article:2", "votes", 3)  # count disagrees with voter set
    conn.sadd("voted_down:3", "user:1")  # user in both sets
    conn.persist("voted:4")  # voter set without its expiry
    conn.zrem("good:", "article:2")  # good index out of step
    conn.sadd("group:g", "article:99")  # grouped article that does not exist
    conn.hset("article:5", "groups", "")  # groups field out of step
    conn.sadd("group:orphan", "article:6")  # group missing from the registry
    conn.zincrby("votes:", 3, "article:7")  # net-vote index out of step
    conn.zadd("votes:", {"article:98": 4})  # net votes of an article that does not exist

    with pytest.raises(CommandError):
        run()
    kinds = {p.kind for p in audit.invariant_audit()}
    assert kinds >= {
        "score",
        "votes",
        "downvotes",
        "both_sets",
        "no_expiry",
        "good",
        "net_votes",
        "missing_hash",
        "groups_field",
        "unregistered_group",
    }
    out = run("--repair")
    assert "Repaired" in out
    assert audit.invariant_audit() == []
    assert selectors.article_get(article_id=2).votes == 2
    assert conn.sismember("group:g", "article:99") == 0
    assert conn.zscore("votes:", "article:7") == 1 and conn.zscore("votes:", "article:98") is None
    assert WEEK - 60 <= conn.ttl("voted:4") <= WEEK  # expires a week after the post again
    assert selectors.article_get(article_id=6).groups == ("g", "orphan")


def test_voter_sets_past_their_window_are_reported_and_removed(conn, now):
    services.article_post(
        NewPost(user_id=1, poster_name="a", title="T", link="https://e.org/", now=now)
    )
    conn.hset("article:1", "time", now - 8 * 86_400)
    conn.zadd("time:", {"article:1": now - 8 * 86_400})
    conn.zadd("score:", {"article:1": now - 8 * 86_400 + 432})
    conn.persist("voted:1")
    # Moved by hand out of the day and the week, it is also still in their kept rankings.
    assert [p.kind for p in audit.invariant_audit()] == ["no_expiry", "top_extra", "top_extra"]
    run("--repair")
    assert conn.exists("voted:1") == 0
    assert audit.invariant_audit() == []


def test_the_link_index_is_checked_both_ways_and_repaired(conn, now):
    """Ensure a lost, a stale and a shared links:<b> entry are each reported and mended."""
    for n in range(1, 5):
        services.article_post(
            NewPost(user_id=1, poster_name="a", title=f"T{n}", link=f"https://e.org/{n}", now=now)
        )
    conn.hdel(*keys.link_slot("http://e.org/1"))  # open article 1 no longer guards its link
    conn.hset(*keys.link_slot("http://e.org/gone"), 2)  # names an article linking elsewhere
    conn.hset(*keys.link_slot("http://e.org/nothing"), 99)  # names no article at all
    conn.hset("article:4", "link", "https://e.org/3")  # two open articles share a link
    with pytest.raises(CommandError):
        run()
    found = {(p.kind, p.article_id, p.entry) for p in audit.invariant_audit()}
    assert found >= {
        ("link_unindexed", 1, "http://e.org/1"),
        ("link_stale", 2, slot_entry(keys.link_slot("http://e.org/gone"))),
        ("link_stale", 99, slot_entry(keys.link_slot("http://e.org/nothing"))),
        ("link_shared", 4, "http://e.org/3"),
        ("link_stale", 4, slot_entry(keys.link_slot("http://e.org/4"))),
    }
    with pytest.raises(CommandError, match="remain after repair"):
        run("--repair")
    assert [p.kind for p in audit.invariant_audit()] == ["link_shared"]
    assert links.entries(conn) == links.index_of(
        {
            "http://e.org/1": "article:1",
            "http://e.org/2": "article:2",
            "http://e.org/3": "article:3",
        }
    )


def test_a_store_with_the_former_link_index_is_moved_by_the_repair(conn, now):
    """A store written before links:<b> keeps one hash of normalised link -> article:<id>:
    the audit names it, --repair indexes the open articles in the buckets and deletes it,
    and a duplicate is refused again."""
    for n in range(1, 4):
        services.article_post(
            NewPost(user_id=1, poster_name="a", title=f"T{n}", link=f"https://e.org/{n}", now=now)
        )
    closed = services.article_post(
        NewPost(user_id=1, poster_name="a", title="Old", link="https://e.org/old", now=now - WEEK)
    ).id
    former = {f"http://e.org/{n}": f"article:{n}" for n in (1, 2, 3)}
    former["http://e.org/old"] = keys.article(closed)
    for bucket, _ in links.entries(conn):
        conn.delete(bucket)
    conn.hset("links:", mapping=former)  # as the former scripts wrote it
    found = {(p.kind, p.article_id) for p in audit.invariant_audit()}
    assert found == {("link_former", None), *(("link_unindexed", n) for n in (1, 2, 3))}
    run("--repair")
    assert audit.invariant_audit() == [] and not conn.exists("links:")
    # the open articles' links are guarded again; a closed article's link is free to post
    assert links.entries(conn) == links.index_of(
        {k: v for k, v in former.items() if "old" not in k}
    )
    assert all(conn.object("encoding", b) == b"listpack" for b, _ in links.entries(conn))
    with pytest.raises(DuplicateLink):
        services.article_post(
            NewPost(user_id=2, poster_name="b", title="Again", link="https://e.org/2", now=now)
        )


def test_a_staff_edit_away_and_back_leaves_the_audit_clean(now):
    services.article_post(
        NewPost(user_id=1, poster_name="a", title="X", link="https://e.org/x", now=now)
    )
    services.article_post(
        NewPost(user_id=2, poster_name="b", title="Y", link="https://e.org/y", now=now)
    )
    services.article_edit(article_id=2, title="Y", link="https://e.org/z", actor=staff_actor("mod"))
    services.article_edit(article_id=2, title="Y", link="https://e.org/y", actor=staff_actor("mod"))
    assert audit.invariant_audit() == []


def test_the_posters_indexes_are_checked_both_ways_and_repaired(conn, now):
    for user_id in (1, 2):
        services.article_post(
            NewPost(
                user_id=user_id,
                poster_name="a",
                title="T",
                link=f"https://e.org/{user_id}",
                now=now,
            )
        )
    conn.zrem("submitted:1", "article:1")  # article 1 missing from its poster's list
    conn.zadd("submitted:2", {"article:7": now})  # a list naming no such article
    conn.zadd("submitted:3", {"article:2": now})  # and one naming another user's article
    kinds = {(p.kind, p.article_id, p.entry) for p in audit.invariant_audit()}
    assert kinds == {
        ("unsubmitted", 1, "submitted:1"),
        ("submitted_stale", 7, "submitted:2"),
        ("submitted_stale", 2, "submitted:3"),
    }
    assert "Repaired" in run("--repair")
    assert conn.zrange("submitted:1", 0, -1) == [b"article:1"]
    assert conn.zrange("submitted:2", 0, -1) == [b"article:2"]
    assert conn.exists("submitted:3") == 0
