"""One clock decides the voting window: Redis' own, the clock the voter sets expire by.

The web server's clock is put behind Redis' for real with ARTICLES_CLOCK_OFFSET (the
app's clock hook, articles/store/clock.py); Redis keeps its own time.
"""

from __future__ import annotations

import time

import pytest

from articles.errors import VotingClosed
from articles.operations import audit
from articles.store import keys, selectors, services
from articles.types import NewPost, Vote

WEEK = 604_800


def redis_now(conn) -> float:
    seconds, micros = conn.time()
    return seconds + micros / 1e6


def post_closing_in(conn, seconds: float) -> int:
    """An article whose window closes `seconds` from now by Redis' clock."""
    posted = redis_now(conn) - WEEK + seconds
    return services.article_post(
        NewPost(user_id=1, poster_name="a", title="Closing", link="https://e.org/c", now=posted)
    ).id


def wait_for_redis_time(conn, moment: float) -> None:
    while redis_now(conn) < moment:
        time.sleep(0.05)


def test_with_the_web_clock_behind_redis_votes_after_the_sets_expired_are_refused(conn, settings):
    """Ensure a user's repeated up-votes after the voter sets expired count for nothing."""
    settings.ARTICLES_CLOCK_OFFSET = -3  # this process's clock 3 s behind Redis'
    article_id = post_closing_in(conn, 1.5)
    closes = float(conn.hget(keys.article(article_id), "time")) + WEEK
    wait_for_redis_time(conn, closes + 0.1)
    assert not conn.exists(keys.voted(article_id))  # Redis dropped the voter set
    for _ in range(10):
        with pytest.raises(VotingClosed):
            services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP)
    article = selectors.article_get(article_id=article_id)
    assert (article.votes, article.score) == (1, article.time + 432)
    assert not conn.exists(keys.voted(article_id))


def test_with_the_web_clock_ahead_of_redis_a_vote_before_the_close_counts(conn, settings):
    settings.ARTICLES_CLOCK_OFFSET = 3  # this process's clock 3 s ahead of Redis'
    article_id = post_closing_in(conn, 2)
    article = services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP)
    assert article.votes == 2
    assert conn.sismember(keys.voted(article_id), "user:2")


def test_a_post_takes_its_time_from_redis(conn, settings):
    settings.ARTICLES_CLOCK_OFFSET = -3600
    before = redis_now(conn)
    article = services.article_post(NewPost(user_id=1, poster_name="a", title="T", text="x"))
    assert int(before) <= article.time <= redis_now(conn)
    assert float(conn.hget(keys.article(article.id), "time")) == article.time


def test_a_given_time_never_lands_a_vote_in_a_set_redis_has_dropped(conn):
    """Ensure a caller's own `now` (tests, tools) cannot reopen a window Redis closed."""
    article_id = post_closing_in(conn, 1)
    closes = float(conn.hget(keys.article(article_id), "time")) + WEEK
    wait_for_redis_time(conn, closes + 0.1)
    with pytest.raises(VotingClosed):
        services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP, now=closes - 100)
    assert selectors.article_get(article_id=article_id).votes == 1


def test_the_audit_reports_a_vote_counted_after_the_window(conn):
    """Ensure check_votes sees votes counted past the window (the sets are gone by then)."""
    article_id = post_closing_in(conn, 60)
    services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP)
    member = keys.article(article_id)
    posted = float(conn.hget(member, "time"))
    # What a writer with a clock behind Redis' left: a vote counted after the close.
    conn.hset(member, "last_vote", posted + WEEK + 2)
    kinds = [p.kind for p in audit.invariant_audit(now=posted + WEEK + 5)]
    assert kinds == ["vote_after_close"]
