"""The comment-thread benchmark measures the thread it claims: its size, its shape, one
page showing every comment, and a round-trip count that does not grow with it."""

from __future__ import annotations

import random
import time

import pytest

from articles.store import selectors, services
from articles.store.connection import get_connection
from articles.types import CommentOrder, NewPost
from bench import comments, counting
from bench.report import Report


def _article(title: str) -> int:
    return services.article_post(
        NewPost(user_id=1, poster_name="bench", title=title, link=f"https://example.org/{title}")
    ).id


def test_the_bench_thread_has_its_size_and_shape_and_one_page_shows_it_all() -> None:
    article_id = _article("thread")
    ids = comments.post_thread(article_id, 120, random.Random(3), time.time())
    assert len(ids) == 120 == len(set(ids))
    page = selectors.comment_thread(article_id=article_id, order=CommentOrder.NEW)
    assert len(page.items) == 120 and page.count == 12  # a tenth at the top level
    assert max(c.depth for c in page.items) == comments.MAX_DEPTH
    assert not any(c.more for c in page.items)
    assert sum(c.votes + c.downvotes for c in page.items) >= 40  # a third voted, 1-6 each
    assert selectors.article_get(article_id=article_id).comments == 120


def test_a_thread_page_is_one_round_trip_whatever_its_size() -> None:
    small, big = _article("small"), _article("big")
    comments.post_thread(small, 5, random.Random(1), time.time())
    comments.post_thread(big, 300, random.Random(2), time.time())
    store = get_connection()
    store.connection_pool.connection_class = counting.CountingUnixConnection
    store.connection_pool.reset()
    try:
        for article_id in (small, big):
            assert (
                counting.round_trips(lambda a=article_id: selectors.comment_thread(article_id=a))
                == 1
            )
    finally:
        store.connection_pool.reset()


@pytest.mark.parametrize("page_shows_thread", [True, False])
def test_the_article_page_goal_is_not_available_until_the_page_shows_the_thread(
    page_shows_thread,
) -> None:
    """Ensure a page without the thread is reported as not measured, not as a ratio."""

    def case(name: str, p50: float, available: bool = True) -> comments.ThreadCase:
        made = comments.ThreadCase(name, lambda: None, available=available)
        made.wall = [p50 / 1000]
        made.round_trips = 1
        return made

    cases = [
        case("store article list page (25 articles), baseline", 2.0),
        case("store thread page, 500 of 600 comments", 40.0),
        case("store thread page, 5 comments", 0.5),
        case("API article list (25 articles), baseline", 10.0),
        case("API thread page, 500 of 600 comments, anonymous", 60.0),
        case("article page, 500 of 600 comments, logged in", 90.0, page_shows_thread),
    ]
    report = Report()
    comments.goals(report, cases, {"rows": 500, "listed": 25})
    values = {goal.text.split(":")[0]: goal.value for goal in report.goals}
    assert values["comment thread round trips, 500 comments vs 5"] == 1.0
    assert values["store thread page of 500 comments"] == pytest.approx((40 / 500) / (2 / 25))
    page = values["article page with 500 comments, logged in"]
    assert page == (pytest.approx(1.5) if page_shows_thread else None)
