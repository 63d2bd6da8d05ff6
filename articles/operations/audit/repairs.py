"""The repairs of check_votes --repair: each one MULTI/EXEC under WATCH of what it read,
or one script that judges from what the store holds when it runs, so a concurrent write
is never undone. What the store no longer knows how to mend is left for a person."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import redis
from redis.typing import EncodableT, FieldT

from articles import conf, validation
from articles.errors import ArticleNotFound, Conflict, StoreCorrupt
from articles.operations.audit.common import (
    INDEXES,
    Problem,
    grouped,
    normalized,
    redis_now,
    time_or_none,
    whole,
)
from articles.operations.audit.indexes import entry_slot, slot_of
from articles.store import keys, scripts, services
from articles.store.connection import get_connection, is_wrong_type
from articles.types import article_score

Repaired = Literal["repaired", "removed", "left"]


def article_repair(
    *, article_id: int, groups: Iterable[str] = (), now: float | None = None
) -> Repaired:
    """Make one article satisfy every invariant of SPEC §1 again (check_votes --repair).

    The voter sets are the truth while voting is open, the counts after it closed; the
    hash's time, else the time: index's (a missing or bad time is taken from there, never
    made 0). One MULTI/EXEC under WATCH, retried if a vote lands meanwhile.

    Returns "removed" if the article hash is gone (its index entries and its memberships
    of `groups` are removed), "left" when the store no longer knows what to write (a key of
    the wrong type, no usable time anywhere, a bad count after the window closed): the
    audit goes on reporting it for a person. A store-wide index of the wrong type is
    left alone too; the rest of the article is still repaired.
    """
    conn = get_connection()
    now = redis_now(conn) if now is None else now
    writable = _writable_indexes(conn, article_id)
    if writable is None:
        return "left"
    with conn.pipeline(transaction=True) as pipe:
        for _ in range(scripts.ATTEMPTS):
            try:
                return _article_repair_once(pipe, article_id, groups, now, writable)
            except redis.WatchError:
                continue
    raise Conflict()


def _writable_indexes(conn: redis.Redis, article_id: int) -> set[str] | None:
    """The store-wide indexes of the right type (or none), or None if the article's own
    keys are of the wrong type."""
    types = conn.pipeline(transaction=False)
    for key in (keys.article(article_id), keys.voted(article_id), keys.voted_down(article_id)):
        types.type(key)
    for key in INDEXES:
        types.type(key)
    member_type, up_type, down_type, *index_types = (keys.text(t) for t in types.execute())
    if member_type not in ("hash", "none") or {up_type, down_type} - {"set", "none"}:
        return None
    return {key for key, kind in zip(INDEXES, index_types, strict=True) if kind in ("zset", "none")}


def _article_repair_once(
    pipe: redis.client.Pipeline,
    article_id: int,
    groups: Iterable[str],
    now: float,
    writable: set[str],
) -> Repaired:
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    pipe.watch(member, up, down)
    raw = pipe.hgetall(member)
    if not raw:
        _removal(pipe, article_id, groups, writable)
        return "removed"
    posted = time_or_none(raw.get(b"time"))
    lost_time = posted is None
    if lost_time and keys.TIME in writable:
        posted = time_or_none(pipe.zscore(keys.TIME, member))
    if posted is None:
        pipe.reset()
        return "left"  # no usable time anywhere: a person must say when
    closes = posted + conf.window()
    counted = _counts(pipe, article_id, raw, open=now < closes)
    if counted is None:
        pipe.reset()
        return "left"  # the voter sets are gone: nothing to count again
    votes, downvotes, both = counted
    pipe.multi()
    if both:
        pipe.srem(down, *both)
    fields: dict[FieldT, EncodableT] = {"votes": votes, "downvotes": downvotes}
    if lost_time:
        fields["time"] = int(posted) if posted.is_integer() else posted
    pipe.hset(member, mapping=fields)
    _index(pipe, member, posted, votes, downvotes, writable, held=b"held" in raw)
    # EXPIREAT in the past deletes the key, as the window says it should be.
    pipe.expireat(up, int(-(-closes // 1)))
    pipe.expireat(down, int(-(-closes // 1)))
    pipe.execute()
    return "repaired"


def _removal(
    pipe: redis.client.Pipeline, article_id: int, groups: Iterable[str], writable: set[str]
) -> None:
    """Remove what is left of an article whose hash is gone, in one MULTI/EXEC."""
    member = keys.article(article_id)
    pipe.multi()
    for key in INDEXES:
        if key in writable:
            pipe.zrem(key, member)
    for name in groups:
        pipe.srem(keys.group(name), member)
        pipe.zrem(keys.group_order(keys.SCORE, name), member)  # kept or cached: either way
        pipe.zrem(keys.group_order(keys.TIME, name), member)
    pipe.delete(keys.voted(article_id), keys.voted_down(article_id))
    pipe.execute()


def _counts(
    pipe: redis.client.Pipeline, article_id: int, raw: dict[Any, Any], *, open: bool
) -> tuple[int, int, set[bytes | str]] | None:
    """(votes, downvotes, the users in both voter sets) as they should be: from the voter
    sets while voting is open, else the hash's counts; None if those are not counts."""
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    if open:
        both = pipe.sinter([up, down])
        return pipe.scard(up), pipe.scard(down) - len(both), both
    votes, downvotes = (whole(raw.get(name, b"0")) for name in (b"votes", b"downvotes"))
    if votes is None or downvotes is None:
        return None
    return votes, downvotes, set()


def _index(
    pipe: redis.client.Pipeline,
    member: str,
    posted: float,
    votes: int,
    downvotes: int,
    writable: set[str],
    *,
    held: bool = False,
) -> None:
    """Queue the article's entries in each store-wide index of the right type; a held
    article's (out of the rankings until staff decide its flags) out of each."""
    if held:
        for key in INDEXES:
            if key in writable:
                pipe.zrem(key, member)
        return
    score = article_score(posted, votes, downvotes, vote_score=conf.vote_score())
    good = votes >= conf.good_votes()
    entries = {keys.SCORE: score, keys.TIME: posted, keys.VOTES: votes - downvotes}
    for key, value in entries.items():
        if key in writable:
            pipe.zadd(key, {member: value})
    if keys.GOOD in writable and good:
        pipe.zadd(keys.GOOD, {member: posted})
    elif keys.GOOD in writable:
        pipe.zrem(keys.GOOD, member)


def article_groups_set(*, article_id: int, groups: Iterable[str]) -> None:
    """Write the `groups` field from the group sets (check_votes --repair): of `groups`
    and those the field names, the sets that hold it, read under WATCH of the hash (a
    groups change writes the field too), so a concurrent change is never undone."""
    member = keys.article(article_id)
    with get_connection().pipeline(transaction=True) as pipe:
        for _ in range(scripts.ATTEMPTS):
            try:
                pipe.watch(member)
                raw = pipe.hgetall(member)
                if not raw:
                    return
                named = sorted(set(groups) | grouped(raw))
                names = ",".join(g for g in named if pipe.sismember(keys.group(g), member))
                pipe.multi()
                pipe.hset(member, "groups", names)
                pipe.execute()
                return
            except redis.WatchError:
                continue
    raise Conflict()


def group_register(*, name: str, description: str = "") -> None:
    """Add a group that exists only as a set (made by the book's code) to the registry."""
    get_connection().hsetnx(keys.GROUPS, validation.clean_group_name(name), description)


# --- links:<b> and submitted:<pk> ------------------------------------------------------
_Step = Callable[[redis.client.Pipeline, str, int | None], None]


def index_entries_repair(problems: Iterable[Problem]) -> None:
    """Make links:<b> and submitted:<pk> agree with the article hashes (check_votes --repair).

    A stale entry goes, a missing one is added from the hash; two open articles sharing a
    link stay reported (a person must pick one); the former link index (one hash, links:)
    is deleted, since the missing entries are added from the hashes. Each change is one
    MULTI/EXEC under WATCH of what it read, so a concurrent write makes it read again.
    """
    with get_connection().pipeline(transaction=True) as pipe:
        for problem in problems:
            repair = _INDEX_REPAIRS.get(problem.kind)
            if repair is not None and problem.entry:
                _with_retries(pipe, repair, problem.entry, problem.article_id)


def _with_retries(
    pipe: redis.client.Pipeline, repair: _Step, entry: str, article_id: int | None
) -> None:
    """Run one repair, again while a write it watched lands meanwhile."""
    for _ in range(scripts.ATTEMPTS):
        try:
            repair(pipe, entry, article_id)
            return
        except redis.WatchError:
            continue
        except redis.ResponseError as exc:
            if not is_wrong_type(exc):
                raise
            pipe.reset()  # a key it reads is of the wrong type: left, and reported
            return
    raise Conflict()


def _link_of(pipe: redis.client.Pipeline, member: str) -> str:
    pipe.watch(member)
    return normalized(keys.text(pipe.hget(member, "link") or b""))


def _holder(pipe: redis.client.Pipeline, slot: tuple[str, bytes]) -> str:
    pipe.watch(slot[0])
    return keys.link_holder(keys.text(pipe.hget(*slot) or b""))


def _link_stale_repair(pipe: redis.client.Pipeline, entry: str, _: int | None) -> None:
    slot = entry_slot(entry)
    if slot is None:
        return
    holder = _holder(pipe, slot)
    article_id = keys.article_id_or_none(holder)
    if not holder or (article_id is not None and slot_of(_link_of(pipe, holder)) == slot):
        pipe.reset()
        return
    pipe.multi()
    pipe.hdel(*slot)
    pipe.execute()


def _link_unindexed_repair(pipe: redis.client.Pipeline, norm: str, article_id: int | None) -> None:
    member = keys.article(article_id or 0)
    slot = keys.link_slot(norm)
    if _holder(pipe, slot) == member or _link_of(pipe, member) != norm:
        pipe.reset()
        return
    pipe.multi()
    pipe.hset(*slot, str(article_id))
    pipe.execute()


def _link_former_repair(pipe: redis.client.Pipeline, entry: str, _: int | None) -> None:
    """Delete the former link index (freed off the main thread)."""
    pipe.unlink(keys.LEGACY_LINKS)
    pipe.execute()


def _link_frontier_repair(pipe: redis.client.Pipeline, entry: str, _: int | None) -> None:
    """Delete a malformed links:closed: the next manage.py archive walks from the start
    (releasing an entry twice changes nothing)."""
    pipe.delete(keys.LINKS_CLOSED)
    pipe.execute()


def _submitted_stale_repair(pipe: redis.client.Pipeline, key: str, _: int | None) -> None:
    """Drop from submitted:<pk> every member that is not an article that user posted."""
    poster = "user:" + key.removeprefix("submitted:")
    pipe.watch(key)
    stale = []
    for raw, _score in pipe.zscan_iter(key, count=1000):
        article_id = keys.article_id_or_none(keys.text(raw))
        if (
            article_id is None
            or keys.text(pipe.hget(keys.article(article_id), "poster") or b"") != poster
        ):
            stale.append(raw)
    if not stale:
        pipe.reset()
        return
    pipe.multi()
    pipe.zrem(key, *stale)
    pipe.execute()


def _unsubmitted_repair(pipe: redis.client.Pipeline, key: str, article_id: int | None) -> None:
    member = keys.article(article_id or 0)
    pipe.watch(member)
    poster, raw_time = pipe.hmget(member, "poster", "time")
    posted = time_or_none(raw_time)  # None: reported as bad_time, mended by article_repair
    if posted is None or "submitted:" + keys.text(poster or b"").removeprefix("user:") != key:
        pipe.reset()
        return
    pipe.multi()
    pipe.zadd(key, {member: posted})
    pipe.execute()


_INDEX_REPAIRS: dict[str, _Step] = {
    "link_stale": _link_stale_repair,
    "link_unindexed": _link_unindexed_repair,
    "link_former": _link_former_repair,
    "link_frontier": _link_frontier_repair,
    "submitted_stale": _submitted_stale_repair,
    "unsubmitted": _unsubmitted_repair,
}


# --- the search index ------------------------------------------------------------------


def search_index_repair(problems: Iterable[Problem]) -> None:
    """Index the unindexed articles from their hashes and drop the stale entries, each
    by one script that checks what it read (check_votes --repair). An entry that names no
    article is left for a person."""
    for problem in problems:
        if problem.kind == "search_unindexed" and problem.article_id is not None:
            try:
                services.article_reindex(article_id=problem.article_id)
            except (ArticleNotFound, StoreCorrupt):
                continue
        elif problem.kind == "search_stale" and problem.article_id and problem.entry:
            try:
                services.search_entry_drop(
                    word=keys.word_of(problem.entry), article_id=problem.article_id
                )
            except StoreCorrupt:
                continue  # a key of the wrong type: reported as such, left for a person
