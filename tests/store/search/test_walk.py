"""A one-word search may walk the ranking instead of building its result (search.lua):
the walked page must be the built page, members, order and ties alike, and the walk must
be what a frequent word actually gets."""

from __future__ import annotations

import random
import time

import pytest

from articles.store import keys, selectors, services
from articles.types import Period, SearchOrder, Vote
from tests import factories
from tests.store.search.conftest import builds

NO_SUCH = "zzqqnever"  # an excluded word no article holds: the same results, always built


def post(now: float, title: str) -> int:
    return factories.article(1, title, "", text="x", now=now, poster_name="u").id


def search(conn, q: str, order: SearchOrder, page: int) -> tuple[list[int], int, int]:
    """Ids of the page, the count, and the results the search built; cache dropped."""
    for key in conn.scan_iter(match="search:*"):
        conn.delete(key)
    before = builds(conn)
    found = selectors.article_search(q=q, order=order, page=page)
    return [a.id for a in found.items], found.count, builds(conn) - before


@pytest.fixture
def ties(conn) -> int:
    """300 articles posted at 4 instants, a few up-voted alike: many equal scores, equal
    times and equal net votes; `common` in about 80 % of them. Returns how many hold it."""
    rng = random.Random(13)
    now = int(time.time())
    holding = 0
    for n in range(300):
        common = rng.random() < 0.8
        holding += common
        title = f"{'common' if common else 'other'} item{n % 9}"
        article_id = post(now - DAY_STEPS[rng.randrange(4)], title)
        for voter in range(rng.choice([0, 0, 0, 1, 2])):
            services.article_vote(article_id=article_id, user_id=100 + voter, direction=Vote.UP)
    return holding


DAY_STEPS = [0, 3_600, 7_200, 86_400]


@pytest.mark.parametrize("order", list(SearchOrder))
def test_a_walked_page_is_the_built_page_ties_and_all(conn, ties, order):
    walked_pages = []
    for page in (1, 2, 3, 4, 10, 11):
        ids, count, built = search(conn, "common", order, page)
        same, same_count, always = search(conn, f"common -{NO_SUCH}", order, page)
        assert always == 1  # the reference is built
        assert (ids, count) == (same, same_count) == (same, ties)
        if built == 0:
            walked_pages.append(page)
        # and both are the sorted set's own order: (score, member) descending
        index = {SearchOrder.SCORE: keys.SCORE, SearchOrder.NEWEST: keys.TIME}.get(order)
        if index and page == 1:
            ranked = [
                article_id
                for m in conn.zrevrange(index, 0, -1)
                if conn.sismember(
                    keys.postings("common"), article_id := keys.article_id_of(m.decode())
                )
            ]
            assert ids == ranked[:25]
    # Score and newest walk the first pages of a word in ~80 % of 300 articles (page_end x
    # 300 x 2 < SCARD^2), then build; votes have no ranking to walk.
    expected = [p for p in (1, 2, 3, 4) if 25 * p * 300 * 2 < ties * ties]
    assert len(expected) >= 3
    assert walked_pages == ([] if order is SearchOrder.VOTES else expected)


def test_a_frequent_word_walks_in_two_round_trips_and_a_rare_one_is_built(conn):
    now = int(time.time())
    for n in range(200):
        post(now + n, f"frequent {'rare' if n % 20 == 0 else 'plain'}")
    selectors.article_search(q="plain")  # the script loaded once
    before = conn.info("commandstats")
    page = selectors.article_search(q="frequent")
    after = conn.info("commandstats")
    calls = {k: after[k]["calls"] - before.get(k, {"calls": 0})["calls"] for k in after}
    assert calls.get("cmdstat_evalsha", 0) == 2  # the search script, then the page's hashes
    asked = calls.get("cmdstat_smismember", 0)  # the word's set, asked of each member read
    assert calls.get("cmdstat_smembers", 0) == calls.get("cmdstat_zrange", 0) == 0  # no build
    assert asked >= 1
    assert page.count == 200 and [a.id for a in page.items] == list(range(200, 175, -1))
    assert not conn.exists(keys.search_cache(0))  # nothing built, nothing cached
    ids, count, built = search(conn, "rare", SearchOrder.SCORE, 1)
    assert built == 1 and count == 10 and ids == list(range(181, 0, -20))


def test_a_walk_that_meets_too_few_members_builds_the_result_instead(conn):
    now = int(time.time())
    # The word is in half of 300 articles (enough to try walking), all of them the oldest:
    # the walk reads the word's count of members without filling page 1, then builds.
    for n in range(300):
        post(now + n, "lopsided old" if n < 150 else "new only")
    ids, count, built = search(conn, "lopsided", SearchOrder.SCORE, 1)
    assert built == 1 and count == 150 and ids == list(range(150, 125, -1))
    ids, count, built = search(conn, "lopsided", SearchOrder.NEWEST, 6)
    assert built == 1 and count == 150 and ids == list(range(25, 0, -1))


@pytest.mark.parametrize("order", list(SearchOrder))
def test_small_sets_read_as_a_table_answer_as_smismember_does(conn, ties, order, monkeypatch):
    """A set of up to SET_LISTPACK_MAX members is read whole into the script rather than
    asked member by member (a listpack is scanned once per member asked): the pages must
    be those of asking every set, walked and built, with exclusions, a group and a period."""
    from articles.store.selectors import searching

    now = int(time.time())
    factories.group("small")
    for n in range(40):  # a small group and rare words among the 300
        factories.article(
            1, f"common rare{n % 3} grouped", "", text="x", now=now - 60 * n,
            poster_name="u", groups=["small"] if n % 2 else [],
        )  # fmt: skip
    queries = [
        ("common", None),
        ("common -rare1", None),
        ("common -item3 -item4", None),
        ("rare0 common", None),
        ("common -rare2", "small"),
        ("grouped -rare0", "small"),
    ]

    def pages() -> list[tuple[list[int], int]]:
        out = []
        for q, group in queries:
            for period in (Period.ALL, Period.DAY):
                for page in (1, 2, 13):
                    for key in conn.scan_iter(match="search:*"):
                        conn.delete(key)
                    found = selectors.article_search(
                        q=q, order=order, page=page, group=group, period=period, now=now
                    )
                    out.append(([a.id for a in found.items], found.count))
        return out

    # One clock for both runs: the fixture posts some articles exactly a day ago, on the
    # day period's edge, which a second's tick between the runs would move.
    as_tables = pages()
    monkeypatch.setattr(searching, "SET_LISTPACK_MAX", -1)  # every set asked with SMISMEMBER
    assert pages() == as_tables
    assert any(ids for ids, _ in as_tables)
