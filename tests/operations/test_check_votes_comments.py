"""check_votes audits the comments (orderings, counts, voter sets, parent links, the
article's count, the site-wide and users' lists) and --repair mends each."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from articles.operations import audit
from articles.operations.audit import comment_repairs
from articles.store import keys, scripts, services
from articles.store.connection import get_connection
from articles.types import NewPost, Status, Vote, comment_best
from tests import factories
from tests.actors import member_actor
from tests.operations.test_check_votes import run


def say(article_id: int, user_id: int = 2, parent: int | None = None) -> int:
    return factories.comment(user_id, article_id, "hi", parent).id


@pytest.fixture
def thread(now) -> dict[str, int]:
    """Article 1 with comments 1 (top) -> 2 -> 3, 4 (top), 5 (top), each voted on."""
    article = services.article_post(
        NewPost(user_id=1, poster_name="p", title="T", link="https://e.org/1", now=now)
    ).id
    one = say(article)
    two = say(article, 3, one)
    three = say(article, 4, two)
    four, five = say(article), say(article, 5)
    for cid in (one, two, three, four, five):
        services.comment_vote(comment_id=cid, user_id=9, vote=Vote.UP)
    return {"article": article, "one": one, "two": two, "three": three, "four": four}


def comment_kinds() -> set[str]:
    return {p.kind for p in audit.invariant_audit() if p.kind in audit.COMMENT_KINDS}


def test_a_clean_thread_passes(thread):
    assert "0 problem(s)" in run()


CORRUPTIONS = {
    "comment_index": lambda c: c.zincrby("comments:1", 2**38, "comment:1"),
    "comment_index ": lambda c: c.zrem("replies_new:1", "comment:2"),
    "comment_stale": lambda c: c.zadd("replies:4", {"comment:5": 1}),
    "comment_stale ": lambda c: c.zadd("user_comments:7", {"comment:1": 1}),
    "comment_votes": lambda c: c.hincrby("comment:4", "votes", 2),
    "comment_votes ": lambda c: c.sadd("comment_voted_down:4", "user:9"),
    "comment_votes  ": lambda c: c.persist("comment_voted:5"),
    "comment_replies": lambda c: c.hset("comment:1", "replies", 5),
    "comment_count": lambda c: c.hincrby("article:1", "comments", -2),
    "comment_parent": lambda c: c.hset("comment:3", "depth", 7),
    "comment_stale_voters": lambda c: c.sadd("comment_voted:77", "user:1"),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_each_corruption_is_reported_then_repaired(conn, thread, kind):
    CORRUPTIONS[kind](conn)
    assert kind.strip() in comment_kinds()
    with pytest.raises(CommandError):
        run()
    assert "Repaired" in run("--repair")
    assert not comment_kinds() and "0 problem(s)" in run()
    # the repair restored what the scripts keep, not some other consistent state
    assert conn.zscore("comments:1", "comment:1") == comment_best(1, 1, 0)
    assert int(conn.hget("article:1", "comments")) == 5
    assert int(conn.hget("comment:1", "replies")) == 1


def test_a_count_is_confirmed_against_the_visible_comments_listed(conn, thread):
    """The re-read of a count (comment_tally.lua) counts what comments_all: and comments:
    both list, so a tombstone is not counted; it stops one past the count."""
    services.comment_delete(
        comment_id=thread["one"], actor=member_actor(2)
    )  # a tombstone: 4 visible

    def counts() -> list[str]:
        return [p.detail for p in audit.invariant_audit() if p.kind == "comment_count"]

    assert counts() == []
    conn.hincrby("article:1", "comments", 1)
    assert counts() == ["comments is '5', it has 4 visible comments"]
    conn.hincrby("article:1", "comments", -3)
    assert counts() == ["comments is '2', it has at least 3 visible comments"]


def test_a_count_is_repaired_a_step_of_the_thread_at_a_time(conn, thread, monkeypatch):
    """The repair walks comments_all:<aid> in bounded steps (comment_repair.lua "count"),
    so a thread of any length holds Redis for a step, and counts it whole."""
    monkeypatch.setattr(comment_repairs, "COUNT_STEP", 2)  # 5 comments: 3 steps
    services.comment_delete(comment_id=thread["four"], actor=member_actor(2))
    conn.hset("article:1", "comments", 9)
    assert run("--repair") and int(conn.hget("article:1", "comments")) == 4


def count_step(conn, key: str, args: list[object]) -> list:
    """One call of comment_repair.lua's "count" walk."""
    return list(scripts.COMMENT_REPAIR(keys=[key], args=["count", *args], client=conn))


def test_a_count_walk_starts_again_after_a_post_or_delete_between_steps(conn, thread):
    """Earlier steps' tally is stale once a post or delete lands between two steps: the
    next step refuses (RETRY) and writes nothing."""
    conn.hset("article:1", "comments", 9)
    first = count_step(conn, "article:1", [0, 0, "", "", 2])
    assert first[:2] == [Status.OK, 0] and first[2:4] == [2, 2]
    say(thread["article"])
    assert count_step(conn, "article:1", [*first[2:], 2]) == [Status.RETRY]
    services.comment_delete(comment_id=thread["four"], actor=member_actor(2))
    again = count_step(conn, "article:1", [0, 0, "", "", 2])
    assert count_step(conn, "article:1", [*again[2:], 2])[0] == Status.OK
    conn.hincrby("article:1", "comments", -1)  # as a delete would
    assert count_step(conn, "article:1", [4, 4, *again[4:], 2]) == [Status.RETRY]
    assert int(conn.hget("article:1", "comments")) == 8  # nothing written by the walk


def test_a_count_missing_from_an_article_without_visible_comments_is_left_missing(conn, now):
    """A hash without `comments` has none (the book's hashes, a post's): nothing to write."""
    article = services.article_post(
        NewPost(user_id=1, poster_name="p", title="T", link="https://e.org/2", now=now)
    ).id
    key = f"article:{article}"
    conn.hdel(key, "comments")
    assert count_step(conn, key, [0, 0, "", "", 2]) == [Status.OK, 0]
    assert not conn.hexists(key, "comments")


def test_a_missing_parent_makes_the_reply_top_level(conn, thread):
    conn.delete("comment:1")  # by hand, behind the scripts' back
    assert {"comment_parent", "comment_count"} <= comment_kinds()
    run("--repair")
    assert not comment_kinds()
    assert conn.hget("comment:2", "parent") == b"" and conn.hget("comment:2", "depth") == b"0"
    assert conn.hget("comment:3", "depth") == b"1"
    assert conn.zscore("comments_new:1", "comment:2") == 2
    assert int(conn.hget("article:1", "comments")) == 4


def test_comments_of_a_vanished_article_are_removed(conn, thread):
    conn.delete("article:1")
    assert "comment_orphan" in comment_kinds()
    call_command("check_votes", "--repair", stdout=StringIO())
    assert not comment_kinds()
    assert not any(conn.exists(keys.comment(i)) for i in range(1, 6))
    assert conn.zcard("comments:") == 0 and conn.zcard("user_comments:2") == 0


def test_a_tombstone_left_without_replies_is_removed(conn, thread):
    services.comment_delete(
        comment_id=thread["one"], actor=member_actor(2)
    )  # has a reply: tombstone
    conn.hset("comment:2", mapping={"parent": "", "depth": 0})  # its reply moved by hand
    assert {"comment_tombstone", "comment_replies", "comment_index"} <= comment_kinds()
    run("--repair")
    assert not comment_kinds() and not conn.exists("comment:1", "replies_new:1")
    assert conn.zscore("comments:1", "comment:2") == comment_best(2, 1, 0)


def test_a_comment_hash_no_script_can_use_is_reported_and_left(conn, thread):
    conn.hset("comment:4", "votes", "many")
    problems = [p for p in audit.invariant_audit() if p.kind == "comment_bad"]
    assert problems and problems[0].entry == "comment:4"
    conn.set("replies:9", "not a zset")
    assert any(p.kind == "wrong_type" and p.entry == "replies:9" for p in audit.invariant_audit())
    with pytest.raises(CommandError):
        run("--repair")
    assert conn.hget("comment:4", "votes") == b"many"  # a person decides
    assert get_connection().zscore("comments:1", "comment:4") is not None
