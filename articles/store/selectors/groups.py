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
)

logger = logging.getLogger("articles.store.selectors")  # the package's one logger


@replicas.reads
def group_article_list(
    *, name: str, order: Order = Order.SCORE, page: int | str = 1, user_id: int | None = None
) -> GroupPage:
    """A group's articles by score or time, from the 60 s cached intersection (the book's
    get_group_articles), with the group's description and size read by the same script,
    less the articles the reader `user_id` hid. Two round trips. Raises InvalidInput,
    GroupNotFound."""
    name = validation.clean_group_name(name)
    number, start, stop = _bounds(page)
    cache = keys.group_order(order.key, name)
    hidden = [keys.hidden(user_id)] if user_id else []
    reply = scripts.RANKING_PAGE(
        keys=[cache, keys.group(name), order.key, cache, keys.GROUPS, *hidden],
        args=["group", conf.group_cache_seconds(), start, stop, 0, name],
        client=get_connection(),
    )
    raise_for_status(reply)
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
