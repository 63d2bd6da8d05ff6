"""A reader's own lists: hidden articles left out of their listings, saved articles and
comments, and the up-voted list the vote keeps; each capped, each a constant number of
round trips."""

from __future__ import annotations

import random

import pytest

from articles.errors import ArticleNotFound, CommentNotFound
from articles.store import keys, scripts, selectors, services
from articles.types import NewPost, Order, Period, Vote
from tests import factories
from tests.actors import staff_actor

READER = 7


def post(now: float, n: int, groups: tuple[str, ...] = ()) -> int:
    return factories.article(
        1, f"Article {n}", f"https://example.org/{n}", groups=groups, now=now
    ).id


def ids(page) -> list[int]:
    return [a.id for a in page.items]


@pytest.fixture
def sixty(now) -> list[int]:
    """60 articles in group g, the newest (and highest scored) first."""
    services.group_create(name="g", actor=staff_actor())
    return [post(now - n * 60, n, groups=("g",)) for n in range(60)]


def hide(*article_ids: int, user_id: int = READER) -> None:
    for article_id in article_ids:
        assert services.article_hide(article_id=article_id, user_id=user_id)


LISTINGS = {
    "new": lambda page, user: selectors.article_list(order=Order.TIME, page=page, user_id=user),
    "score": lambda page, user: selectors.article_list(order=Order.SCORE, page=page, user_id=user),
    "top all time": lambda page, user: selectors.top_article_list(page=page, user_id=user),
    "top week": lambda page, user: selectors.top_article_list(
        period=Period.WEEK, page=page, user_id=user
    ),
    "group": lambda page, user: selectors.group_article_list(name="g", page=page, user_id=user),
    "group by time": lambda page, user: selectors.group_article_list(
        name="g", order=Order.TIME, page=page, user_id=user
    ),
    "user": lambda page, user: selectors.user_article_list(poster_id=1, page=page, user_id=user),
}


@pytest.mark.parametrize("name", LISTINGS)
def test_hidden_articles_leave_the_readers_listings_and_the_pages_stay_full_and_exact(name, sixty):
    listing = LISTINGS[name]
    everyone = ids(listing(1, None)) + ids(listing(2, None)) + ids(listing(3, None))
    assert len(everyone) == 60
    hidden = [everyone[0], everyone[3], everyone[24], everyone[25], everyone[40]]
    hide(*hidden)
    seen = [i for n in (1, 2, 3) for i in ids(listing(n, READER))]
    assert seen == [i for i in everyone if i not in hidden]  # no gap, no repeat
    assert [len(listing(n, READER).items) for n in (1, 2, 3)] == [25, 25, 5]
    assert listing(1, READER).count == 55
    # Nobody else's pages change.
    assert ids(listing(1, None)) == everyone[:25]
    assert ids(listing(1, READER + 1)) == everyone[:25]


def test_the_front_page_leaves_out_hidden_good_and_rising_articles(now, settings):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    first, second, third = post(now - 30, 1), post(now - 20, 2), post(now - 10, 3)
    services.article_vote(article_id=first, user_id=9, direction=Vote.UP)
    hide(first, third)
    page = selectors.front_page(user_id=READER)
    assert ids(page) == [] and [a.id for a in page.rising] == [second]
    assert ids(selectors.good_article_page(user_id=READER)) == []
    everyone = selectors.front_page(user_id=READER + 1)
    assert ids(everyone) == [first] and [a.id for a in everyone.rising] == [third, second]
    assert ids(selectors.good_article_page(user_id=READER + 1)) == [first]


def test_the_good_list_keeps_its_newest_50_the_reader_has_not_hidden(now, settings):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 1
    settings.ARTICLES_HOME_GOOD_ARTICLES = 3
    made = [post(now - 100 + n, n) for n in range(5)]  # each good with its poster's vote
    hide(made[4], made[2])
    assert ids(selectors.good_article_page(user_id=READER)) == [made[3], made[1], made[0]]
    page = selectors.front_page(user_id=READER)
    assert ids(page) == [made[3], made[1], made[0]] and page.good_count == 3


def test_unhiding_puts_an_article_back_and_the_hidden_list_is_newest_first(now):
    a, b = post(now - 10, 1), post(now, 2)
    services.article_hide(article_id=a, user_id=READER, now=now)
    services.article_hide(article_id=b, user_id=READER, now=now + 1)
    assert ids(selectors.hidden_article_list(user_id=READER)) == [b, a]
    assert ids(selectors.article_list(order=Order.TIME, user_id=READER)) == []
    assert services.article_hide(article_id=a, user_id=READER, hide=False)
    assert not services.article_hide(article_id=a, user_id=READER, hide=False)  # again: nothing
    assert ids(selectors.article_list(order=Order.TIME, user_id=READER)) == [a]
    assert ids(selectors.hidden_article_list(user_id=READER)) == [b]


def test_hiding_or_saving_what_is_not_there_is_refused_and_writes_nothing(conn):
    with pytest.raises(ArticleNotFound):
        services.article_hide(article_id=99, user_id=READER)
    with pytest.raises(ArticleNotFound):
        services.article_save(article_id=99, user_id=READER)
    with pytest.raises(CommentNotFound):
        services.comment_save(comment_id=99, user_id=READER)
    with pytest.raises(ArticleNotFound):
        services.article_hide(article_id=0, user_id=READER)
    assert conn.keys("*:7") == []


def test_saving_again_keeps_the_first_time_and_unsaving_takes_it_off(now, conn):
    a, b = post(now - 10, 1), post(now, 2)
    assert services.article_save(article_id=a, user_id=READER, now=now)
    assert services.article_save(article_id=b, user_id=READER, now=now + 1)
    assert not services.article_save(article_id=a, user_id=READER, now=now + 2)
    assert ids(selectors.saved_article_list(user_id=READER)) == [b, a]
    assert conn.zscore(keys.saved(READER), keys.article(a)) == now
    services.article_save(article_id=b, user_id=READER, save=False)
    assert ids(selectors.saved_article_list(user_id=READER)) == [a]


def test_saved_comments_are_listed_with_their_articles_and_can_be_unsaved(now):
    a = post(now, 1)
    first = factories.comment(2, a, "first")
    second = factories.comment(3, a, "second")
    services.comment_save(comment_id=first.id, user_id=READER, now=now)
    services.comment_save(comment_id=second.id, user_id=READER, now=now + 1)
    page = selectors.saved_comment_list(user_id=READER)
    assert [c.id for c in page.items] == [second.id, first.id]
    assert page.items[0].article_title == "Article 1"
    services.comment_save(comment_id=second.id, user_id=READER, save=False)
    assert [c.id for c in selectors.saved_comment_list(user_id=READER).items] == [first.id]


def test_each_list_keeps_only_the_newest_up_to_its_cap(now, monkeypatch, conn):
    monkeypatch.setattr(keys, "HIDDEN_KEEP", 3)
    monkeypatch.setattr(keys, "SAVED_KEEP", 2)
    made = [post(now - 10 + n, n) for n in range(5)]
    for n, article_id in enumerate(made):
        services.article_hide(article_id=article_id, user_id=READER, now=now + n)
        services.article_save(article_id=article_id, user_id=READER, now=now + n)
    assert ids(selectors.hidden_article_list(user_id=READER)) == made[:1:-1]
    assert ids(selectors.saved_article_list(user_id=READER)) == made[:2:-1]


def test_the_upvoted_list_follows_the_readers_votes(now):
    a, b = post(now - 10, 1), post(now, 2)
    services.article_vote(article_id=a, user_id=READER, direction=Vote.UP, now=now)
    services.article_vote(article_id=b, user_id=READER, direction=Vote.UP, now=now + 1)
    assert ids(selectors.upvoted_article_list(user_id=READER)) == [b, a]
    services.article_vote(article_id=b, user_id=READER, direction=Vote.DOWN, now=now + 2)
    services.article_vote(article_id=a, user_id=READER, direction=Vote.NONE, now=now + 3)
    assert ids(selectors.upvoted_article_list(user_id=READER)) == []
    services.article_vote(article_id=a, user_id=READER, direction=Vote.UP, now=now + 4)
    assert ids(selectors.upvoted_article_list(user_id=READER)) == [a]
    assert ids(selectors.upvoted_article_list(user_id=READER + 1)) == []


def test_a_guarded_vote_keeps_the_upvoted_list_too(now):
    a = post(now, 1)
    vote = services.article_vote_guarded(
        article_id=a, user_id=READER, direction=Vote.UP, revoked_since=None
    )
    assert vote.article().votes == 2
    assert ids(selectors.upvoted_article_list(user_id=READER)) == [a]


def test_the_upvoted_list_keeps_the_newest_votes_up_to_its_cap(now, conn):
    cap = keys.UPVOTED_KEEP
    made = services.article_post_many(
        posts=[
            NewPost(1, "u1", f"A {n}", f"https://example.org/{n}", now=now) for n in range(cap + 2)
        ]
    )
    services.article_vote_many(votes=[(i, READER, Vote.UP, now + n) for n, i in enumerate(made)])
    assert conn.zcard(keys.upvoted(READER)) == cap
    assert ids(selectors.upvoted_article_list(user_id=READER))[0] == made[-1]
    assert conn.zscore(keys.upvoted(READER), keys.article(made[1])) is None


def test_deleting_an_account_deletes_its_lists(now, conn):
    a = post(now, 1)
    c = factories.comment(2, a)
    services.article_hide(article_id=a, user_id=READER)
    services.article_save(article_id=a, user_id=READER)
    services.comment_save(comment_id=c.id, user_id=READER)
    services.article_vote(article_id=a, user_id=READER, direction=Vote.UP)
    assert all(conn.exists(key) for key in keys.personal(READER))
    services.user_forget(user_id=READER, name="reader")
    assert not any(conn.exists(key) for key in keys.personal(READER))


def test_a_readers_pages_with_hidden_articles_take_two_round_trips(round_trips, sixty):
    hide(*sixty[:10])
    for name, listing in LISTINGS.items():
        listing(2, READER)  # scripts loaded
        trips, page = round_trips(lambda listing=listing: listing(2, READER))
        assert trips == 2, name
        assert len(page.items) == 25
    selectors.front_page(user_id=READER)
    trips, _ = round_trips(lambda: selectors.front_page(user_id=READER))
    assert trips == 2


@pytest.mark.parametrize("seed", range(6))
def test_the_filtered_pages_equal_the_ranking_less_the_hidden_whatever_the_ties(conn, seed):
    """Ensure unhidden_page's shortcut (ranking only the hidden articles that can reach a
    page) gives exactly the pages of the ranking with the hidden taken out."""
    rng = random.Random(seed)
    members = [f"article:{i}" for i in range(1, 301)]
    conn.zadd("score:", {m: rng.choice([1, 2, 3, rng.random() * 10]) for m in members})
    hidden = rng.sample(members, rng.choice([1, 7, 40, 120]))
    conn.zadd(keys.hidden(READER), {m: n for n, m in enumerate(hidden)})
    conn.zadd(keys.hidden(READER), {"article:999": 1000})  # not in the ranking
    expected = [m.decode() for m in conn.zrevrange("score:", 0, -1) if m.decode() not in hidden]
    for start in (0, 25, 100, 175, 250, 275):
        reply = scripts.LISTING_PAGE(
            keys=["score:", keys.hidden(READER)], args=[start, start + 24], client=conn
        )
        assert int(reply[1]) == len(expected)
        assert [m.decode() for m in reply[2::2]] == expected[start : start + 25], start
