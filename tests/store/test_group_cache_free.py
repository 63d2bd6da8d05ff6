"""A write that drops a group's cached rankings (score:<g>, time:<g>: a group whose
rankings are not kept yet, ranking_page.lua) frees them off
Redis' main thread (UNLINK): a cache holds every article of its group, a tenth of the
store in the benchmark (100,000 members at 1M articles), and freeing it in the call
(DEL) grew every post, delete and move of a grouped article with the group (issue 21)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import redis

from articles.store import keys, selectors, services
from articles.types import NewPost, Order
from tests.actors import member_actor, staff_actor

MEMBERS = 600  # past the compact encodings (512): a cache Redis frees in the background


def _freed(conn: redis.Redis) -> int:
    """Objects the lazy-free thread has freed, once it has none pending (it counts each
    when done, after the call that handed it over has answered)."""
    for _ in range(100):
        memory = conn.info("memory")
        if not int(memory["lazyfree_pending_objects"]):
            break
        time.sleep(0.01)
    return int(memory["lazyfreed_objects"])


def _grouped(conn: redis.Redis) -> list[int]:
    services.group_create(name="big", actor=staff_actor())
    services.group_create(name="other", actor=staff_actor())
    ids = services.article_post_many(
        posts=[
            NewPost(user_id=1, poster_name="p", title=f"T{i}", link=f"https://e.org/{i}",
                    groups=("big",))
            for i in range(MEMBERS)
        ]
    )  # fmt: skip
    for order in (Order.SCORE, Order.TIME):  # both cached, as the book's code builds them
        cache = keys.group_order(order.key, "big")
        conn.zinterstore(cache, [keys.group("big"), order.key], aggregate="MAX")
        conn.expire(cache, 60)
    assert conn.exists(*keys.group_keys("big")[1:]) == 2
    return ids


WRITES: dict[str, Callable[[list[int]], object]] = {
    "post": lambda ids: services.article_post(
        NewPost(user_id=1, poster_name="p", title="New", text="x", groups=("big",))
    ),
    "delete": lambda ids: services.article_delete(article_id=ids[0], actor=member_actor(1)),
    "move": lambda ids: services.article_groups_update(
        article_id=ids[0], actor=staff_actor(), add=("other",), remove=("big",)
    ),
}


@pytest.mark.parametrize("write", WRITES)
def test_a_write_frees_the_groups_cached_rankings_in_the_background(conn, write) -> None:
    ids = _grouped(conn)
    before = _freed(conn)
    WRITES[write](ids)
    assert conn.exists(*keys.group_keys("big")[1:]) == 0  # dropped, as before
    assert _freed(conn) - before >= 2  # both, by the lazy-free thread
    assert selectors.group_article_list(name="big").count == MEMBERS - (write != "post") + (
        write == "post"
    )
