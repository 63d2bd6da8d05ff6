"""Group reads: the list of groups, one group, a group's articles."""

from __future__ import annotations

import logging

from articles import conf, validation
from articles.errors import (
    GroupNotFound,
)
from articles.store import keys, replicas, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.selectors._common import _bounds, _execute, _page
from articles.types import (
    Group,
    GroupPage,
    Order,
    Status,
)

logger = logging.getLogger("articles.store.selectors")  # the package's one logger


# Members a step of ranking_page.lua takes: of its vote sweep, one step inside a read's
# own call at most (reads, and writes only what a vote by the book's code changed), so a
# read's work is bounded by it whatever the group's open articles; of a group's fill (200
# inserts: 500 took p50 2.1 ms, max 3.7 ms at 100k articles, python -m bench.group_rankings).
# A sweep step's look-ups in score: and score:<g> miss the CPU's caches in a large store
# (100 members: ~85 µs of Redis at 10k articles, ~190 µs at 1M), so its steps are short.
RANK_STEP = 50
FILL_STEP = 200
# Seconds a running sweep waits between two steps: reads closer together than this take
# none, so a busy group's reads mostly pay nothing, and the sweep still takes up to 2,000
# open articles a second (100,000, a tenth of 1M all open, in 50 s) at ~1 % of Redis.
SWEEP_PACE = 0.025


@replicas.reads
def group_article_list(
    *,
    name: str,
    order: Order = Order.SCORE,
    page: int | str = 1,
    user_id: int | None = None,
    now: float | None = None,
) -> GroupPage:
    """A group's articles by score or time, from its kept rankings (ranking_page.lua: the
    book's keys, each call bounded), with the group's description and size read by the
    same script, less the articles the reader `user_id` hid. `now` fixes the time (tests,
    tools). Two round trips (a due step of the vote sweep rides in the first); more only
    while the group's first fill takes its steps. Raises InvalidInput, GroupNotFound."""
    name = validation.clean_group_name(name)
    number, start, stop = _bounds(page)
    hidden = [keys.hidden(user_id)] if user_id else []
    call_keys = [
        keys.group_order(keys.SCORE, name),
        keys.group_order(keys.TIME, name),
        keys.group(name),
        keys.SCORE,
        keys.TIME,
        keys.GROUPS,
        keys.GROUP_RANKS,
        *hidden,
    ]
    args = [order.value, conf.group_cache_seconds(), start, stop, conf.window(), name, RANK_STEP]
    conn = get_connection()
    while True:  # one call, more only while the group's first fill takes its steps
        reply = scripts.RANKING_PAGE(
            keys=call_keys,
            args=[*args, "" if now is None else now, FILL_STEP, SWEEP_PACE],
            client=conn,
        )
        if raise_for_status(reply, allow=[Status.RETRY]) is Status.OK:
            break
    found = _page(reply[4::2], number, int(reply[1]), user_id)
    group = Group(name, keys.text(reply[2]), int(reply[3]))
    return GroupPage(found.items, found.number, found.count, found.per_page, group=group)


@replicas.reads
def group_list() -> list[Group]:
    """Every registered group with its description and size, by name. Two round trips."""
    conn = replicas.connection()
    pipe = conn.pipeline(transaction=False)
    pipe.hgetall(keys.GROUPS)
    (registry,) = _execute(pipe)
    registry = {keys.text(k): keys.text(v) for k, v in registry.items()}
    names = sorted(n for n in registry if validation.is_group_name(n))
    pipe = conn.pipeline(transaction=False)
    for name in names:
        pipe.scard(keys.group(name))
    sizes = _execute(pipe) if names else []
    return [Group(n, registry[n], int(s)) for n, s in zip(names, sizes, strict=True)]


@replicas.reads
def group_names(*, limit: int = 200) -> list[str] | None:
    """The registered groups' names, sorted, for a choice of one (the search form); None
    when there are more than `limit`. One round trip, reading at most `limit` names."""
    pipe = replicas.connection().pipeline(transaction=False)
    pipe.hlen(keys.GROUPS)
    pipe.hrandfield(keys.GROUPS, limit)  # distinct names: all of them when HLEN <= limit
    size, names = _execute(pipe)
    if int(size) > limit:
        return None
    return sorted(n for n in map(keys.text, names) if validation.is_group_name(n))


@replicas.reads
def group_get(*, name: str) -> Group:
    """One group. Raises InvalidInput, GroupNotFound."""
    name = validation.clean_group_name(name)
    pipe = replicas.connection().pipeline(transaction=False)
    pipe.hget(keys.GROUPS, name)
    pipe.scard(keys.group(name))
    description, size = _execute(pipe)
    if description is None and not size:
        raise GroupNotFound()
    return Group(name, keys.text(description or b""), int(size))
