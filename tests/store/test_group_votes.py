"""Our votes carry an article's new score into its groups' kept rankings in the vote's own
step (group_scores in _lib.lua); the vote sweep is left for the book's own votes, one
bounded step a read at most, and the audit expects our votes in the rankings at once."""

from __future__ import annotations

import math
import time

import pytest
import redis

from articles.operations.audit import group_rank_audit
from articles.store import keys, selectors, services
from articles.store.selectors import groups as group_selectors
from articles.types import NewPost, Vote
from tests.actors import staff_actor
from tests.store.test_group_rankings import book_vote

LATER = 120  # past the 60 s between vote sweeps


@pytest.fixture
def now() -> int:
    return int(time.time())


@pytest.fixture
def groups() -> None:
    for name in ("g", "h", "k", "unkept"):
        services.group_create(name=name, actor=staff_actor())


def post(at: float, n: int, groups: tuple[str, ...] = ("g",)) -> int:
    return services.article_post(
        NewPost(user_id=1, poster_name="p", title=f"A{n}", link=f"https://e.org/{n}",
                groups=groups, now=at)
    ).id  # fmt: skip


def kept_score(conn: redis.Redis, name: str, article_id: int) -> float | None:
    return conn.zscore(keys.group_order(keys.SCORE, name), keys.article(article_id))


def score(conn: redis.Redis, article_id: int) -> float | None:
    return conn.zscore(keys.SCORE, keys.article(article_id))


def open_group(now: int, size: int) -> list[int]:
    """`size` articles in group g, all still open to votes: their ids, oldest first."""
    return services.article_post_many(
        posts=[
            NewPost(user_id=1, poster_name="p", title=f"T{n}", link=f"https://e.org/{n}",
                    groups=("g",), now=now - 3_600 - size + n)
            for n in range(size)
        ]
    )  # fmt: skip


def test_our_vote_moves_every_kept_group_ranking_at_once_with_no_read(conn, now, groups):
    """Fails before: score:<g> took a vote in only by a read's sweep, 60 s on."""
    a = post(now - 100, 1, ("g", "h", "k"))
    for name in ("g", "h", "k"):
        selectors.group_article_list(name=name)  # kept from here on
    first = score(conn, a)
    assert first is not None
    # up, another's down, switching side, un-vote: the net change each makes
    for user, direction, net in ((5, Vote.UP, 1), (6, Vote.DOWN, 0), (5, Vote.DOWN, -2),
                                 (5, Vote.NONE, -1)):  # fmt: skip
        services.article_vote(article_id=a, user_id=user, direction=direction, now=now)
        assert score(conn, a) == first + 432 * net
        for name in ("g", "h", "k"):
            assert kept_score(conn, name, a) == score(conn, a), (name, user, direction)
    assert group_rank_audit() == []


def test_a_withdrawn_vote_moves_the_kept_ranking_at_once(conn, now, groups):
    a = post(now - 100, 1)
    selectors.group_article_list(name="g")
    services.article_vote(article_id=a, user_id=5, direction=Vote.UP, now=now)
    voted = score(conn, a)
    assert kept_score(conn, "g", a) == voted
    services.user_forget(user_id=5)
    assert kept_score(conn, "g", a) == score(conn, a) == voted - 432
    assert group_rank_audit() == []


def test_a_vote_makes_no_key_of_a_group_not_kept(conn, now, groups):
    a = post(now - 100, 1, ("g", "unkept"))
    selectors.group_article_list(name="g")
    assert not conn.exists("score:unkept") and conn.hget(keys.GROUP_RANKS, "unkept") is None
    services.article_vote(article_id=a, user_id=5, direction=Vote.UP, now=now)
    assert not conn.exists("score:unkept", "time:unkept")
    assert conn.hget(keys.GROUP_RANKS, "unkept") is None
    assert kept_score(conn, "g", a) == score(conn, a)


def test_a_read_takes_at_most_one_bounded_step_of_a_long_sweep(conn, now, groups):
    """Fails before: a read went on sweeping, up to 8 calls, while the sweep ran."""
    size = 3 * group_selectors.RANK_STEP + 5  # all open to votes
    open_group(now, size)
    selectors.group_article_list(name="g")  # filled
    for n, at in enumerate((now + LATER, now + LATER + 1, now + 2 * LATER)):
        conn.config_resetstat()
        page = selectors.group_article_list(name="g", now=at)
        assert page.count == size
        stats = conn.info("commandstats")
        assert stats["cmdstat_evalsha"]["calls"] == 2, n  # the ranking's one call, the rows
        assert stats["cmdstat_zmscore"]["calls"] == 1, n  # one step: score:'s values
        assert stats["cmdstat_zadd"]["calls"] == 1, n  # into score:<g>, in one call
        assert stats["cmdstat_zrange"]["calls"] <= 2, n  # its members, the page


def test_reads_close_together_share_one_step_of_a_running_sweep(conn, now, groups):
    size = 3 * group_selectors.RANK_STEP + 5
    open_group(now, size)
    selectors.group_article_list(name="g")
    steps = []
    for at in (now + LATER, now + LATER, now + LATER + group_selectors.SWEEP_PACE / 2,
               now + LATER + 2 * group_selectors.SWEEP_PACE):  # fmt: skip
        conn.config_resetstat()
        selectors.group_article_list(name="g", now=at)
        steps.append(conn.info("commandstats").get("cmdstat_zmscore", {}).get("calls", 0))
    assert steps == [1, 0, 0, 1]


def test_a_book_vote_reaches_the_ranking_within_the_sweeps_reads(conn, now, groups):
    size = 3 * group_selectors.RANK_STEP + 5
    ids = open_group(now, size)
    selectors.group_article_list(name="g")  # filled: its sweep begins at now
    newest, oldest = ids[-1], ids[0]  # the sweep's last step and its first
    book_vote(conn, newest, 7)
    book_vote(conn, oldest, 7)
    assert kept_score(conn, "g", newest) != score(conn, newest)
    selectors.group_article_list(name="g", now=now + 1)  # within the 60 s: no sweep yet
    assert kept_score(conn, "g", oldest) != score(conn, oldest)
    assert group_rank_audit() == []  # the book's votes may lag: the sweep is to come
    steps = math.ceil(size / group_selectors.RANK_STEP)
    for n in range(steps):
        selectors.group_article_list(name="g", now=now + LATER + n)
        if n == 0:
            assert kept_score(conn, "g", oldest) == score(conn, oldest)
            assert kept_score(conn, "g", newest) != score(conn, newest)  # one step a read
    assert kept_score(conn, "g", newest) == score(conn, newest)
    assert conn.hget(keys.GROUP_RANKS, "g:at") is None  # the sweep ended
    assert group_rank_audit() == []


def test_the_audit_expects_our_vote_at_once_and_check_votes_repairs_it(conn, now, groups):
    from django.core.management import call_command

    a, b = post(now - 100, 1), post(now - 50, 2)
    selectors.group_article_list(name="g")
    services.article_vote(article_id=a, user_id=5, direction=Vote.UP, now=now)
    conn.zadd("score:g", {keys.article(a): now - 100})  # as if the vote had not carried it
    found = {(p.kind, p.entry, p.article_id) for p in group_rank_audit()}
    assert found == {("group_rank_wrong", "score:g", a)}
    book_vote(conn, b, 7)  # the book's, not swept yet: no fault of the ranking
    assert all(p.article_id != b for p in group_rank_audit())
    call_command("check_votes", "--repair")
    assert group_rank_audit() == []
    assert kept_score(conn, "g", a) == score(conn, a)
    assert kept_score(conn, "g", b) == score(conn, b)
