"""Every search does bounded work a call (search.lua): a result is built only from a small
candidate set, else the ranking is walked a bounded step a call and the walk goes on from
where it stopped. Each kind of query is checked against a brute-force reference on first
and deeper pages, with the bounds lowered so that a small store takes every path."""

from __future__ import annotations

import random
import time

import pytest

from articles.store import keys, selectors, services
from articles.store.selectors import searching
from articles.types import Period, SearchOrder, Vote
from tests import factories

DAY = 86_400
WORDS = ["alpha", "beta", "gamma", "delta"]
CHANCE = {"alpha": 0.8, "beta": 0.6, "gamma": 0.3, "delta": 0.02}


@pytest.fixture
def store(conn):
    """400 articles over 40 days, posted at few instants (ties), some of the last week's
    up- or down-voted,
    a quarter in the group `bench`; each holds each word with its CHANCE. Returns
    {id: (words, in group)}."""
    rng = random.Random(21)
    factories.group("bench")
    now = int(time.time())
    made = {}
    for _ in range(400):
        words = {w for w in WORDS if rng.random() < CHANCE[w]}
        grouped = rng.random() < 0.25
        age = rng.choice([0, 3_600, 2 * DAY, 9 * DAY, 20 * DAY, 39 * DAY])
        article = factories.article(
            1,
            " ".join(sorted(words)) or "plain",
            "",
            text="x",
            now=now - age,
            poster_name="u",
            groups=["bench"] if grouped else [],
        )
        made[article.id] = (words, grouped)
        for voter in range(rng.choice([0, 0, 1, 2, 3]) if age < 7 * DAY else 0):
            direction = Vote.DOWN if rng.random() < 0.2 else Vote.UP
            services.article_vote(article_id=article.id, user_id=100 + voter, direction=direction)
    return made


def reference(conn, store, include, exclude, order, group, period):
    """The result by brute force: every article checked, ordered as a sorted set orders
    the order's scores (highest first, equal scores by member, highest first)."""
    now = time.time()
    rows = []
    for article_id, (words, grouped) in store.items():
        member = keys.article(article_id)
        if not set(include) <= words or words & set(exclude) or (group and not grouped):
            continue
        posted = conn.zscore(keys.TIME, member)
        if period.seconds is not None and posted < int(now) - period.seconds:
            continue
        score = conn.zscore(keys.SCORE, member)
        value = {"score": score, "time": posted, "votes": score - posted}[order]
        rows.append((value, member, article_id))
    rows.sort(key=lambda r: (r[0], r[1]), reverse=True)
    return [r[2] for r in rows]


QUERIES = [
    (["alpha"], [], None, Period.ALL),
    (["alpha", "beta"], [], None, Period.ALL),
    (["alpha"], ["beta"], None, Period.ALL),
    (["beta"], ["gamma", "delta"], None, Period.ALL),
    (["alpha"], [], "bench", Period.ALL),
    (["alpha"], [], None, Period.WEEK),
    (["alpha", "beta"], ["gamma"], "bench", Period.MONTH),
    (["delta"], [], None, Period.ALL),
    (["gamma", "delta"], [], None, Period.ALL),
]
ORDERS = {SearchOrder.SCORE: "score", SearchOrder.NEWEST: "time", SearchOrder.VOTES: "votes"}


def clear(conn):
    for key in conn.scan_iter(match="search:*"):
        conn.delete(key)


@pytest.mark.parametrize("bounds", [(2_000, 4_000, 4), (20, 60, 1), (20, 60, 2)])
@pytest.mark.parametrize("order", list(SearchOrder))
def test_every_kind_of_search_is_the_brute_force_result(conn, store, monkeypatch, order, bounds):
    """With the default bounds everything here is built or walked in one call; with tiny
    ones every query with a set over 20 walks 60 ranks a call, so a page takes several
    requests: each answer is the reference's page, or a prefix of it marked incomplete,
    and asking again goes on until the page is whole."""
    build_max, step, steps = bounds
    monkeypatch.setattr(searching, "SEARCH_BUILD_MAX", build_max)
    monkeypatch.setattr(searching, "SEARCH_STEP", step)
    monkeypatch.setattr(searching, "SEARCH_STEPS", steps)
    for include, exclude, group, period in QUERIES:
        expected = reference(conn, store, include, exclude, ORDERS[order], group, period)
        q = " ".join([*include, *(f"-{w}" for w in exclude)])
        pages = max(1, -(-len(expected) // 25))
        clear(conn)
        for number in sorted({1, 2, pages // 2 or 1, pages, pages + 1}):
            want = expected[(number - 1) * 25 : number * 25]
            for _ in range(400 // step + 2):  # each request reads `steps` x `step` at most
                found = selectors.article_search(
                    q=q, order=order, group=group, period=period, page=number
                )
                ids = [a.id for a in found.items]
                assert ids == want[: len(ids)], (q, order, number)
                if found.complete:
                    break
            assert found.complete and ids == want, (q, order, number)
            if found.count_exact:
                assert found.count == len(expected), (q, order)
            else:
                assert found.count >= (number - 1) * 25 + len(ids)


def test_the_work_of_a_call_does_not_grow_with_the_result(conn, monkeypatch):
    """A common word with an exclusion in thousands of articles: the old script built the
    whole result (a sorted set of every match) on the first page; now the slot holds only
    what the walk has read, about a page, and the next pages go on from there."""
    monkeypatch.setattr(searching, "SEARCH_BUILD_MAX", 200)
    now = int(time.time())
    posted = []
    for n in range(3_000):
        title = "common word" if n % 10 else "common spam"
        posted.append(factories.article(1, title, "", text="x", now=now + n, poster_name="u").id)
    newest = [aid for n, aid in enumerate(posted) if n % 10][::-1]
    clear(conn)
    page = selectors.article_search(q="common -spam")
    assert [a.id for a in page.items] == newest[:25]
    slot = next(k for k in conn.scan_iter(match="search:*") if not k.endswith(b":q"))
    assert conn.zcard(slot) < 200  # the old script: 2,700, every match
    assert not page.count_exact and 2_000 <= page.count <= 3_000
    assert page.complete
    deeper = selectors.article_search(q="common -spam", page=8)
    assert [a.id for a in deeper.items] == newest[175:200]
    assert conn.zcard(slot) < 400


def test_each_call_reads_a_bounded_step(conn, monkeypatch):
    """However sparse the result, a call reads SEARCH_STEP ranks at most: two words in
    300 articles each and together only in the oldest of 600 take a request for every
    SEARCH_STEPS x SEARCH_STEP ranks; each answer says the page is not whole yet."""
    monkeypatch.setattr(searching, "SEARCH_BUILD_MAX", 10)
    monkeypatch.setattr(searching, "SEARCH_STEP", 100)
    monkeypatch.setattr(searching, "SEARCH_STEPS", 2)
    now = int(time.time())
    first = factories.article(1, "east west", "", text="x", now=now, poster_name="u").id
    for n in range(1, 600):
        title = "east filler" if n < 300 else "west filler"
        factories.article(1, title, "", text="x", now=now + n, poster_name="u")
    clear(conn)
    asked = 0
    while True:
        asked += 1
        page = selectors.article_search(q="east west", order=SearchOrder.NEWEST)
        if page.complete:
            break
        assert page.items == [] and not page.count_exact and asked < 10
    assert [a.id for a in page.items] == [first] and page.count == 1 and page.count_exact
    assert asked == 3  # 600 ranks, 200 a request


def test_by_votes_within_a_period_the_walk_reads_the_periods_own_ranking(conn, monkeypatch):
    """The day's few articles are far down votes: under older, voted ones; the kept top
    of the day (votes:day) holds only them, so one bounded call finds the page."""
    monkeypatch.setattr(searching, "SEARCH_BUILD_MAX", 10)
    monkeypatch.setattr(searching, "SEARCH_STEP", 50)
    monkeypatch.setattr(searching, "SEARCH_STEPS", 1)
    now = int(time.time())
    for n in range(300):
        old = factories.article(1, "topic older", "", text="x", now=now - 3 * DAY - n)
        services.article_vote(article_id=old.id, user_id=7, direction=Vote.UP)
    fresh = [factories.article(1, "topic fresh", "", text="x", now=now - n).id for n in range(30)]
    selectors.top_article_list(period=Period.DAY)  # a read trims what aged out
    assert conn.zcard(keys.period_votes("day")) == 30  # kept: the day's articles
    clear(conn)
    page = selectors.article_search(q="topic", order=SearchOrder.VOTES, period=Period.DAY)
    assert page.complete and page.count == 30 and page.count_exact
    assert [a.id for a in page.items] == sorted(fresh, key=keys.article, reverse=True)[:25]
