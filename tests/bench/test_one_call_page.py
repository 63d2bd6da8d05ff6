"""one_call.article_list_one_call (bench branch) gives exactly article_list's pages."""

from __future__ import annotations

import time

import pytest

from articles.store import selectors, services
from articles.store.connection import get_connection
from articles.types import Order, Vote
from bench import counting, data, one_call


@pytest.mark.parametrize("order", [Order.SCORE, Order.TIME])
def test_one_call_pages_equal_the_pipelined_pages_for_readers_and_voters(order) -> None:
    data.load_redis(get_connection(), data.Spec(articles=120, group_size=10, now=time.time()))
    services.article_vote(article_id=7, user_id=424_242, direction=Vote.DOWN)
    get_connection().delete("article:9")  # a ranking member whose hash is gone is skipped
    for page in (1, 2, 5, 6):
        for user_id in (None, 424_242, 1):
            expected = selectors.article_list(order=order, page=page, user_id=user_id)
            got = one_call.article_list_one_call(order=order, page=page, user_id=user_id)
            assert got == expected


def test_one_call_page_is_one_round_trip() -> None:
    data.load_redis(get_connection(), data.Spec(articles=60, group_size=10, now=time.time()))
    store = get_connection()
    store.connection_pool.connection_class = counting.CountingUnixConnection
    store.connection_pool.reset()
    store.ping()
    assert counting.round_trips(lambda: one_call.article_list_one_call(user_id=3)) == 1
    assert counting.round_trips(lambda: selectors.article_list(user_id=3)) == 2
