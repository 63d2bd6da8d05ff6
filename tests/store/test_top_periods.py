"""The top of each period, kept by the writes (votes:<period>): always what the former
rebuild gave (the articles posted in the period, ranked by net votes), after posts,
votes, deletes and aging, on a store backfilled from old data, under concurrent votes;
and the audit finds and repairs a period zset gone wrong."""

from __future__ import annotations

import random
import threading
import time

import pytest

from articles.operations.audit import top_audit, top_backfill, top_repair
from articles.store import keys, selectors, services
from articles.store.selectors import rankings
from articles.types import Period, Vote
from tests import factories
from tests.actors import staff_actor

DAY = 86_400
PERIODS = [p for p in Period if p.seconds]


@pytest.fixture
def now() -> int:
    return int(time.time())


def post(at: float, n: int, user_id: int = 1) -> int:
    return factories.article(user_id, f"Article {n}", f"https://example.org/{n}", now=at).id


def vote(article_id: int, user_id: int, direction: Vote, at: float) -> None:
    services.article_vote(article_id=article_id, user_id=user_id, direction=direction, now=at)


def old_definition(conn, period: Period, at: float) -> list[tuple[str, float]]:
    """The former rebuild: votes: restricted to time: >= at - period, by ZREVRANGE order."""
    cutoff = at - period.seconds
    scratch = "test:scratch"
    conn.zrangestore(scratch, keys.TIME, cutoff, "+inf", byscore=True)
    conn.zinterstore(scratch, [scratch, keys.VOTES], aggregate=None)
    conn.zinterstore(scratch, {scratch: 0, keys.VOTES: 1})
    rows = conn.zrevrange(scratch, 0, -1, withscores=True)
    conn.delete(scratch)
    return [(m.decode(), s) for m, s in rows]


def kept(period: Period, at: float) -> list[tuple[str, float]]:
    reply = rankings.top_page(period.value, 0, -1, now=at)
    assert int(reply[1]) == len(reply[2:]) // 2
    return [(m.decode(), float(s)) for m, s in zip(reply[2::2], reply[3::2], strict=True)]


def assert_every_period_right(conn, at: float) -> None:
    for period in PERIODS:
        assert kept(period, at) == old_definition(conn, period, at), period
    assert top_audit() == []


def test_posts_votes_deletes_and_aging_keep_every_period_exact(conn, now):
    start = now - 400 * DAY
    made = [post(start + n * 37 * DAY // 10, n) for n in range(110)]  # one every 3.7 days
    made += [post(now - n * 3_600, 200 + n) for n in range(30)]  # 30 in the last day or so
    assert conn.hget(keys.PERIOD_STATE, "day") is not None  # kept from the first post on
    assert_every_period_right(conn, now)
    recent = made[-30:]
    for n, article in enumerate(recent):
        for voter in range(2, 2 + n % 7):
            vote(article, voter, Vote.UP if n % 3 else Vote.DOWN, now)
    vote(recent[0], 2, Vote.DOWN, now)  # changed
    vote(recent[1], 2, Vote.NONE, now)  # withdrawn
    assert_every_period_right(conn, now)
    actor = {"actor": staff_actor("u1"), "reason": "test"}
    for article in (recent[3], made[100], made[5]):
        services.article_delete(article_id=article, now=now, **actor)
    assert_every_period_right(conn, now)
    for later in (now + 3_600, now + 2 * DAY, now + 9 * DAY, now + 45 * DAY, now + 800 * DAY):
        assert_every_period_right(conn, later)
    # posts after the aging go in; the aged ones stay out
    fresh = post(now + 800 * DAY, 999)
    assert kept(Period.DAY, now + 800 * DAY) == [(keys.article(fresh), 1.0)]


def test_a_read_past_a_backlog_is_exact_in_bounded_calls(conn, now, monkeypatch):
    monkeypatch.setattr(rankings, "TRIM_BATCH", 7)
    for n in range(60):  # 60 articles at the same second, then 5 later
        post(now - 3 * DAY, n)
    late = [post(now - DAY // 2 + n, 100 + n) for n in range(5)]
    calls = []
    real = rankings.scripts.TOP_PAGE

    def counted(**kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(**kwargs)

    monkeypatch.setattr(rankings.scripts, "TOP_PAGE", counted)
    page = selectors.top_article_list(period=Period.DAY, now=now)
    assert sorted(a.id for a in page.items) == sorted(late) and page.count == 5
    assert len(calls) >= (60 - 5 * 4) // 7  # each late post trimmed 4, each read 7
    assert conn.zcard(keys.period_votes("day")) == 5
    assert_every_period_right(conn, now)


def test_a_read_of_a_moment_the_frontier_passed_rebuilds_exactly(conn, now):
    a, b = post(now - 2 * DAY, 1), post(now, 2)
    assert [m for m, _ in kept(Period.DAY, now + DAY // 2)] == [keys.article(b)]
    # the frontier has passed `a`; a read of an earlier moment still counts it
    earlier = now - 2 * DAY + 60
    assert keys.article(a) in dict(kept(Period.DAY, earlier))
    assert kept(Period.DAY, earlier) == old_definition(conn, Period.DAY, earlier)
    assert kept(Period.WEEK, now) == old_definition(conn, Period.WEEK, now)


def book_store(conn, now: int, count: int) -> None:
    """What the book's code (and this site before the periods were kept) leaves: article
    hashes, score:, time:, voted: and (this site) votes:; no period zset, no frontier."""
    rng = random.Random(3)
    pipe = conn.pipeline(transaction=False)
    for n in range(1, count + 1):
        posted = now - rng.randrange(0, 500 * DAY)
        up = rng.randrange(1, 9)
        member = keys.article(n)
        pipe.hset(
            member,
            mapping={"title": f"t{n}", "link": "", "poster": "user:1", "time": posted, "votes": up},
        )
        pipe.zadd(keys.SCORE, {member: posted + 432 * up})
        pipe.zadd(keys.TIME, {member: posted})
        if n % 10:  # the book's code writes no votes: (those are left out, as before)
            pipe.zadd(keys.VOTES, {member: up})
    pipe.set(keys.ARTICLE_IDS, count)
    pipe.execute()


def test_an_old_store_is_read_as_before_then_backfilled_in_steps(conn, now):
    book_store(conn, now, 400)
    for period in PERIODS:  # not kept: the former rebuild answers
        assert kept(period, now) == old_definition(conn, period, now)
    assert conn.exists(keys.period_votes("year")) == 0
    # a backfill in small steps, with writes in between
    for period in ("day", "year"):
        for _ in range(3):
            rankings.scripts.TOP_FILL(
                keys=[keys.TIME, keys.VOTES, keys.period_votes(period), keys.PERIOD_STATE],
                args=[period, now, 5],
                client=conn,
            )
    assert conn.hget(keys.PERIOD_STATE, "year:fill") is not None  # still building
    new = post(now, 1000)
    vote(new, 7, Vote.UP, now)
    services.article_delete(article_id=399, actor=staff_actor("u1"), reason="x", now=now)
    assert top_backfill(now=now, step=17) > 0
    assert conn.hgetall(keys.PERIOD_STATE).keys() == {b"day", b"week", b"month", b"year"}
    assert_every_period_right(conn, now)
    assert_every_period_right(conn, now + 40 * DAY)


def test_concurrent_votes_leave_every_period_score_exact(conn, now):
    articles = [post(now - n, n) for n in range(3)]

    def voter(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(150):
            vote(rng.choice(articles), rng.randint(2, 30), rng.choice(list(Vote)), now)

    threads = [threading.Thread(target=voter, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for article in articles:
        member = keys.article(article)
        up = conn.scard(keys.voted(article))
        down = conn.scard(keys.voted_down(article))
        for period in keys.PERIODS:
            assert conn.zscore(keys.period_votes(period), member) == up - down
    assert_every_period_right(conn, now)


def test_the_audit_finds_and_repairs_a_wrong_period_zset(conn, now):
    a, b, c = post(now - 2 * DAY, 1), post(now - 60, 2), post(now, 3)
    week = keys.period_votes("week")
    conn.zincrby(week, 5, keys.article(a))  # wrong score
    conn.zrem(week, keys.article(b))  # missing
    conn.zadd(week, {keys.article(98): 4})  # an article that does not exist
    conn.zadd(keys.period_votes("day"), {keys.article(a): 1})  # posted before the day
    found = {(p.kind, p.entry, p.article_id) for p in top_audit()}
    assert found == {
        ("top_wrong", week, a),
        ("top_missing", week, b),
        ("top_extra", week, 98),
        ("top_extra", keys.period_votes("day"), a),
    }
    assert top_repair() == 4
    assert_every_period_right(conn, now)
    assert conn.zscore(week, keys.article(c)) == 1


def test_a_forgotten_accounts_votes_leave_every_period(conn):
    at = time.time()
    a, b = post(at, 1), post(at - 2 * DAY, 2)
    for article in (a, b):
        vote(article, 5, Vote.UP, at)
    vote(a, 6, Vote.DOWN, at)
    services.user_forget(user_id=5, name="five")
    assert conn.zscore(keys.period_votes("week"), keys.article(b)) == 1
    assert conn.zscore(keys.period_votes("day"), keys.article(a)) == 0
    assert_every_period_right(conn, time.time())


def test_a_backup_restored_into_a_store_only_read_so_far_is_ranked(conn, now):
    from articles.operations.backup import store_export, store_restore

    made = [post(now - n * DAY // 3, n) for n in range(9)]
    vote(made[2], 4, Vote.UP, now)
    records = list(store_export())
    conn.flushall()
    assert kept(Period.WEEK, now) == []  # a read of the empty store starts nothing
    store_restore(records=enumerate(records, 1), replace=False)
    assert_every_period_right(conn, now)
    assert len(kept(Period.WEEK, now)) == 9


def test_the_period_keys_are_named_here_once():
    assert keys.PERIOD_KEYS == (
        "votes:day",
        "votes:week",
        "votes:month",
        "votes:year",
        "votes:periods",
    )
    assert tuple(p.value for p in PERIODS) == keys.PERIODS
    with pytest.raises(ValueError):
        keys.period_votes("all")
