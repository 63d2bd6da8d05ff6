"""The reads of the store: orders, pages, caches, and round trips per page."""

from __future__ import annotations

import importlib
import pkgutil
from datetime import UTC, datetime

import pytest
import redis
from redis.commands.core import Script

from articles.errors import ArticleNotFound, GroupNotFound, InvalidInput
from articles.store import scripts, selectors, services
from articles.types import Group, Order, Period, Vote
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.harness import store_modules

DAY = 86_400


def post(now: float, n: int, user_id: int = 1, groups: tuple[str, ...] = ()) -> int:
    return factories.article(
        user_id, f"Article {n}", f"https://example.org/{n}", groups=groups, now=now
    ).id


def ids(page) -> list[int]:
    return [a.id for a in page.items]


def test_listing_by_time_is_newest_first_and_by_score_follows_votes(now):
    older, newer = post(now - 100, 1), post(now, 2)
    assert ids(selectors.article_list(order=Order.TIME)) == [newer, older]
    assert ids(selectors.article_list(order=Order.SCORE)) == [newer, older]
    services.article_vote(article_id=older, user_id=9, direction=Vote.UP, now=now)
    assert ids(selectors.article_list(order=Order.SCORE)) == [older, newer]
    assert ids(selectors.article_list(order=Order.TIME)) == [newer, older]


def test_pages_hold_25_and_the_last_page_holds_the_rest(now):
    for n in range(60):
        post(now - n, n)
    first = selectors.article_list(order=Order.TIME, page=1)
    last = selectors.article_list(order=Order.TIME, page="3")
    assert (len(first.items), first.count, first.pages, first.has_next) == (25, 60, 3, True)
    assert (len(last.items), last.has_next, last.has_previous) == (10, False, True)
    everything = [*ids(first), *ids(selectors.article_list(order=Order.TIME, page=2)), *ids(last)]
    assert everything == list(range(1, 61))
    assert selectors.article_list(order=Order.TIME, page=4).items == []


@pytest.mark.parametrize(
    "page", [0, -1, "0", "-1", "x", "", "1.5", 10**30, "9" * 40, 100_001, True]
)
def test_bad_page_numbers_are_refused_never_wrapped_around(now, page):
    post(now, 1)
    with pytest.raises(InvalidInput) as info:
        selectors.article_list(page=page)
    assert info.value.field == "page"


def test_the_viewers_own_vote_is_reported(now):
    article_id = post(now, 1)
    services.article_vote(article_id=article_id, user_id=2, direction=Vote.DOWN, now=now)
    assert selectors.article_get(article_id=article_id, user_id=2).my_vote is Vote.DOWN
    assert selectors.article_get(article_id=article_id, user_id=3).my_vote is Vote.NONE
    assert selectors.article_get(article_id=article_id).my_vote is None
    [listed] = selectors.article_list(user_id=1).items
    assert listed.my_vote is Vote.UP


def test_unknown_article_raises_article_not_found():
    for bad in (1, 0, -5):
        with pytest.raises(ArticleNotFound):
            selectors.article_get(article_id=bad)


def test_group_listing_is_kept_and_a_membership_change_shows_at_once(conn, now):
    services.group_create(name="g", actor=staff_actor())
    a, b = post(now - 10, 1, groups=("g",)), post(now, 2, groups=("g",))
    assert ids(selectors.group_article_list(name="g")) == [b, a]
    assert conn.ttl("score:g") == -1  # kept by the writes, in the book's key
    # A vote moves `a` above `b` in score: and, in the vote's own step, in the group's
    # kept ranking (the sweep is left for the book's own votes).
    services.article_vote(article_id=a, user_id=9, direction=Vote.UP, now=now)
    kept = selectors.group_article_list(name="g")
    assert ids(kept) == [a, b]
    assert kept.items[0].score == now - 10 + 2 * 432
    # A moderator's change is visible at once: the write puts it in the kept rankings.
    c = post(now, 3)
    services.article_groups_update(article_id=c, add=["g"], actor=staff_actor())
    assert ids(selectors.group_article_list(name="g")) == [a, c, b]
    later = now + 120  # past the 60 s: the next read's sweep finds nothing to change
    assert ids(selectors.group_article_list(name="g", now=later)) == [a, c, b]
    conn.delete("score:g")  # lost (an operator's DEL): the next read fills it again
    assert ids(selectors.group_article_list(name="g")) == [a, c, b]
    assert ids(selectors.group_article_list(name="g", order=Order.TIME)) == [c, b, a]


def test_group_listing_of_unknown_or_bad_group(now):
    with pytest.raises(GroupNotFound):
        selectors.group_article_list(name="nope")
    with pytest.raises(InvalidInput):
        selectors.group_article_list(name="")


def test_an_empty_registered_group_lists_nothing():
    services.group_create(name="empty", actor=staff_actor())
    page = selectors.group_article_list(name="empty")
    assert (page.items, page.count) == ([], 0)
    assert page.group == Group("empty", "", 0)


def test_a_group_page_carries_the_groups_description_and_size(now):
    services.group_create(name="g", description="Gee", actor=staff_actor())
    for n in range(3):
        post(now - n, n, groups=("g",))
    page = selectors.group_article_list(name="g", page=2)
    assert page.group == Group("g", "Gee", 3) and page.items == [] and page.count == 3


def test_group_list_gives_descriptions_and_sizes(now):
    services.group_create(name="b", description="Bee", actor=staff_actor())
    services.group_create(name="a", description="Ay", actor=staff_actor())
    post(now, 1, groups=("a", "b"))
    post(now, 2, groups=("a",))
    assert [(g.name, g.description, g.size) for g in selectors.group_list()] == [
        ("a", "Ay", 2),
        ("b", "Bee", 1),
    ]


def test_home_lists_the_newest_good_articles(conn, settings, now):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    settings.ARTICLES_HOME_GOOD_ARTICLES = 3
    made = [post(now - 100 + n, n) for n in range(5)]
    for article_id in made[:4]:
        services.article_vote(article_id=article_id, user_id=50, direction=Vote.UP, now=now)
    page = selectors.good_article_page()
    assert [a.id for a in page.items] == [made[3], made[2], made[1]]
    assert page.count == 3 and page.days == (datetime.fromtimestamp(now - 97, UTC).date(),)
    settings.ARTICLES_PER_PAGE = 2
    assert [a.id for a in selectors.good_article_page(page=2).items] == [made[1]]


def test_good_articles_of_one_utc_day(settings, now):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 1
    midnight = int(datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0).timestamp())
    before, first, last = post(midnight - 1, 1), post(midnight, 2), post(midnight + DAY - 1, 3)
    post(midnight + DAY, 4)
    day = datetime.fromtimestamp(midnight, UTC).date()
    page = selectors.good_article_day(day=day)
    assert ids(page) == [last, first] and page.count == 2
    assert before not in ids(page)


def test_top_of_a_period_only_counts_articles_posted_in_it(now):
    old = post(now - 3 * DAY, 1)
    for voter in range(2, 10):
        services.article_vote(article_id=old, user_id=voter, direction=Vote.UP, now=now)
    fresh = post(now - 60, 2)
    assert ids(selectors.top_article_list(period=Period.DAY, now=now)) == [fresh]
    assert ids(selectors.top_article_list(period=Period.WEEK, now=now)) == [old, fresh]
    assert ids(selectors.top_article_list(period=Period.ALL, now=now)) == [old, fresh]


def vote_many(article_id: int, direction: Vote, voters: range, now: float) -> None:
    for voter in voters:
        services.article_vote(article_id=article_id, user_id=voter, direction=direction, now=now)


def test_top_ranks_by_net_votes_not_by_the_time_decayed_score(conn, now):
    """Ensure a +254 article two days old outranks a +2 and a -2 posted since (the score
    ranking puts those two first: two days of age outweigh 254 votes)."""
    big = post(now - 2 * DAY, 1)
    vote_many(big, Vote.UP, range(100, 353), now)  # 1 + 253 = +254
    plus_two, minus_two = post(now - 60, 2), post(now - 30, 3)
    vote_many(plus_two, Vote.UP, range(2, 3), now)
    vote_many(minus_two, Vote.DOWN, range(2, 5), now)  # 1 - 3 = -2
    assert ids(selectors.article_list(order=Order.SCORE))[0] != big  # the score ranking
    for period in (Period.ALL, Period.WEEK):
        top = selectors.top_article_list(period=period, now=now)
        assert ids(top) == [big, plus_two, minus_two], period
        assert [a.votes - a.downvotes for a in top.items] == [254, 2, -2]
    assert ids(selectors.top_article_list(period=Period.DAY, now=now)) == [plus_two, minus_two]


def test_the_net_vote_index_follows_every_post_vote_and_delete(conn, now):
    a = post(now, 1)
    assert conn.zscore("votes:", f"article:{a}") == 1
    services.article_vote(article_id=a, user_id=1, direction=Vote.DOWN, now=now)
    assert conn.zscore("votes:", f"article:{a}") == -1
    services.article_vote(article_id=a, user_id=1, direction=Vote.NONE, now=now)
    assert conn.zscore("votes:", f"article:{a}") == 0
    services.article_delete(article_id=a, actor=member_actor(1, "u1"))
    assert conn.zcard("votes:") == 0


def test_the_front_page_has_the_good_articles_then_the_rising_ones(settings, now):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    made = [post(now - 1000 + n, n) for n in range(4)]
    services.article_vote(article_id=made[0], user_id=50, direction=Vote.UP, now=now)
    mine = post(now, 9, user_id=7)
    page = selectors.front_page(user_id=7)
    assert ids(page) == [made[0]]
    rising = [a.id for a in page.rising]
    assert rising[0] == mine and made[0] not in rising
    assert set(rising) == {mine, *made[1:]}
    assert page.count == 5 and page.good_count == 1 and page.pages == 1


def test_a_users_submissions_are_listed_newest_first(now):
    a, _, c = post(now - 5, 1, user_id=4), post(now, 2, user_id=5), post(now, 3, user_id=4)
    assert ids(selectors.user_article_list(poster_id=4)) == [c, a]


class CountingConnection(redis.UnixDomainSocketConnection):
    """Counts round trips: a pipeline sends all its commands in one packed write."""

    sent = 0

    def send_packed_command(self, command, check_health=True):
        CountingConnection.sent += 1
        return super().send_packed_command(command, check_health)


def connect_all(monkeypatch, client, *modules) -> None:
    """Point every get_connection of `modules` and their submodules (the services and
    selectors are packages, each submodule importing its own) at `client`."""
    for module in modules:
        found = [module] + [
            importlib.import_module(info.name)
            for info in pkgutil.iter_modules(getattr(module, "__path__", []), module.__name__ + ".")
        ]
        for each in found:
            if hasattr(each, "get_connection"):
                monkeypatch.setattr(each, "get_connection", lambda **_: client)


@pytest.fixture
def counting(redis_server, monkeypatch):
    client = redis.Redis(
        connection_pool=redis.ConnectionPool(
            connection_class=CountingConnection, path=str(redis_server.socket)
        )
    )
    for module in store_modules():
        monkeypatch.setattr(module, "get_connection", lambda **_: client)
    client.ping()
    # Steady state: every script already loaded, as after a site's first requests (a
    # script's first call anywhere costs two more trips, NOSCRIPT then SCRIPT LOAD).
    for script in vars(scripts).values():
        if isinstance(script, Script):
            client.script_load(script.script)

    def trips(call) -> int:
        CountingConnection.sent = 0
        call()
        return CountingConnection.sent

    return trips


def test_every_page_takes_at_most_two_round_trips_and_a_vote_one(counting, now):
    services.group_create(name="g", actor=staff_actor())
    for n in range(60):
        post(now - n * 60, n, groups=("g",))
    for n in range(3):  # the log's comment targets are checked with the rest
        c = services.comment_post(article_id=1, user_id=2, author_name="u2", text=f"c{n}")
        services.comment_remove(comment_id=c.id, reason="spam", actor=staff_actor("mod"))
    services.article_delete(article_id=2, reason="x", actor=staff_actor("mod", pk=0))
    per_page = {
        "score": lambda: selectors.article_list(order=Order.SCORE, page=2, user_id=3),
        "time": lambda: selectors.article_list(order=Order.TIME, user_id=3),
        "group cold": lambda: selectors.group_article_list(name="g", user_id=3),
        "group warm": lambda: selectors.group_article_list(name="g", page=2, user_id=3),
        "group page with its group": lambda: selectors.group_article_list(name="g").group,
        "top": lambda: selectors.top_article_list(period=Period.WEEK, user_id=3),
        "good": lambda: selectors.good_article_page(user_id=3),
        "front page": lambda: selectors.front_page(user_id=3),
        "top all time": lambda: selectors.top_article_list(user_id=3),
        "modlog": lambda: selectors.modlog_page(),
        "user": lambda: selectors.user_article_list(poster_id=1, user_id=3),
        "article": lambda: selectors.article_get(article_id=1, user_id=3),
    }
    trips = {name: counting(call) for name, call in per_page.items()}
    assert max(trips.values()) <= 2, trips
    assert counting(lambda: services.article_vote(article_id=1, user_id=3, direction=Vote.UP)) == 1


def test_a_moderation_log_entry_that_is_not_ours_is_skipped_not_a_500(conn):
    services.group_create(name="g", actor=staff_actor("mod"))
    conn.lpush("modlog:", "not json", "[1, 2]")
    page = selectors.modlog_page()
    assert [e.action for e in page.items] == ["group_create"]
    assert page.count == 3
