"""`manage.py check_votes` finds every kind of broken invariant and --repair fixes it."""

from __future__ import annotations

import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from articles import audit, selectors, services
from articles.types import Vote


@pytest.fixture
def now() -> int:
    return int(time.time())


def run(*args: str) -> str:
    out = StringIO()
    call_command("check_votes", *args, stdout=out)
    return out.getvalue()


def test_a_clean_store_passes(now):
    services.article_post(user_id=1, poster_name="a", title="T", link="https://e.org/", now=now)
    assert "0 problem(s)" in run()


def test_each_broken_invariant_is_reported_and_repaired(conn, settings, now):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    services.group_create(name="g")
    for n in range(1, 8):
        services.article_post(
            user_id=1,
            poster_name="a",
            title=f"T{n}",
            link=f"https://e.org/{n}",
            groups=["g"],
            now=now,
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
        "missing_hash",
        "groups_field",
        "unregistered_group",
    }
    out = run("--repair")
    assert "Repaired" in out
    assert audit.invariant_audit() == []
    assert selectors.article_get(article_id=2).votes == 2
    assert conn.sismember("group:g", "article:99") == 0
    assert conn.ttl("voted:4") > 0
    assert selectors.article_get(article_id=6).groups == ("g", "orphan")


def test_voter_sets_past_their_window_are_reported_and_removed(conn, now):
    services.article_post(user_id=1, poster_name="a", title="T", link="https://e.org/", now=now)
    conn.hset("article:1", "time", now - 8 * 86_400)
    conn.zadd("time:", {"article:1": now - 8 * 86_400})
    conn.zadd("score:", {"article:1": now - 8 * 86_400 + 432})
    conn.persist("voted:1")
    assert [p.kind for p in audit.invariant_audit()] == ["no_expiry"]
    run("--repair")
    assert conn.exists("voted:1") == 0
    assert audit.invariant_audit() == []
