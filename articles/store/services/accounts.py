"""Forgetting an account: its votes withdrawn, its log entries made anonymous, in bounded steps."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import cast

import redis

from articles import conf, validation
from articles.operations.replication import replicated
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import CLEANUP_BATCH, _decode, _finish_or_leave, _positive_id
from articles.store.services.articles import article_purge
from articles.store.services.groups import group_purge
from articles.types import DELETED_NAME

logger = logging.getLogger("articles.store.services")  # the package's one logger


# What user_forget renames, per index of a user's items: (index key, "<owner> <name>").
def _user_items(user_id: int) -> list[tuple[str, str]]:
    return [
        (keys.submitted(user_id), "poster poster_name"),
        (keys.user_comments(user_id), "author author_name"),
    ]


@replicated
def user_forget_begin(*, user_id: int, name: str) -> None:
    """Queue a deleted account for user_forget (forget: pk -> name): one small write,
    made in the deletion's transaction, so if Redis cannot take it the account stays,
    and once taken, cleanups_resume finishes whatever stops user_forget half-way."""
    get_connection().hset(keys.FORGET, str(_positive_id(user_id)), name)


@replicated
def user_forget(*, user_id: int, name: str | None = None) -> int:
    """Remove everything in the store that names a deleted account, in bounded steps
    (each one script over at most CLEANUP_BATCH items): its articles and comments are
    attributed to nobody (owner field cleared, shown as DELETED_NAME) and leave
    submitted:<pk> and user_comments:<pk>; its votes on articles and comments still open
    are withdrawn (closed counts are final, and their voter sets are gone); its own lists
    (hidden, saved, up-voted) and its replies inbox are deleted; its name and user:<pk>
    leave the moderation log. `name` defaults to the one queued by user_forget_begin. Safe
    to run again. Returns how many items were renamed."""
    conn = get_connection()
    pk = str(_positive_id(user_id))
    if name is None:
        name = _decode(conn.hget(keys.FORGET, pk))
    renamed = 0
    for index, fields in _user_items(user_id):
        left = 1
        while left:
            reply = scripts.USER_FORGET(
                # votes:, for the articles' part of the account's article_karma:<pk>
                keys=[index, keys.VOTES] if fields.startswith("poster ") else [index],
                args=[keys.user(user_id), DELETED_NAME, fields, CLEANUP_BATCH],
                client=conn,
            )
            raise_for_status(reply)
            renamed, left = renamed + int(reply[1]), int(reply[2])
    _votes_withdraw(conn, keys.user(user_id))
    conn.delete(*keys.personal(user_id))  # one command; each list capped (keys.*_KEEP)
    _modlog_forget(conn, user_id, name)
    # The replies inbox: two keys, bounded in size, in one DEL.
    conn.delete(keys.inbox(user_id), keys.inbox_state(user_id))
    conn.hdel(keys.FORGET, pk)
    return renamed


def user_forget_or_leave(*, user_id: int) -> None:
    """user_forget in the deletion's request: a failure after user_forget_begin leaves
    the rest queued for cleanups_resume (check_votes --repair), and the deletion stands."""
    _finish_or_leave(lambda: user_forget(user_id=user_id), f"user {user_id}: traces")


def user_forget_pending() -> dict[int, str]:
    """The deleted accounts user_forget has still to finish: pk -> name."""
    raw = get_connection().hgetall(keys.FORGET)
    return {int(k): _decode(v) for k, v in raw.items() if _decode(k).isdigit() and int(k) > 0}


@replicated
def user_forget_cancel(*, user_id: int) -> None:
    """Drop a queued account that exists after all (its deletion was rolled back)."""
    get_connection().hdel(keys.FORGET, str(user_id))


def _open_articles(conn: redis.Redis) -> Iterator[list[str]]:
    """The articles whose voting is open, oldest first, CLEANUP_BATCH a call: a score
    cursor over time:, skipping the members of its edge second already given."""
    seconds, micros = conn.time()
    low: float = seconds + micros / 1_000_000 - conf.window()
    seen = 0
    while True:
        page = cast(
            "list[tuple[bytes, float]]",
            conn.zrangebyscore(
                keys.TIME, low, "+inf", start=seen, num=CLEANUP_BATCH, withscores=True
            ),
        )
        if not page:
            return
        yield [_decode(member) for member, _ in page]
        last = page[-1][1]
        same = sum(1 for _, score in page if score == last)
        seen, low = (seen + same if last == low else same), last


def _open_items(conn: redis.Redis) -> Iterator[list[tuple[str, str, str]]]:
    """(item, up set, down set) of every open article, then of its comments, in pages
    of at most CLEANUP_BATCH items, each page read in bounded calls."""
    for members in _open_articles(conn):
        ids = [i for i in map(keys.article_id_or_none, members) if i is not None]
        yield [(keys.article(i), keys.voted(i), keys.voted_down(i)) for i in ids]
        pipe = conn.pipeline(transaction=False)
        for article_id in ids:
            pipe.zcard(keys.article_comments_all(article_id))
        for article_id, count in zip(ids, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(count, redis.ResponseError):
                continue  # not a zset: the audit reports it
            for start in range(0, int(count), CLEANUP_BATCH):
                page = cast(
                    "list[bytes]",
                    conn.zrange(
                        keys.article_comments_all(article_id), start, start + CLEANUP_BATCH - 1
                    ),
                )
                cids = [c for c in (keys.comment_id_or_none(_decode(m)) for m in page) if c]
                yield [
                    (keys.comment(c), keys.comment_voted(c), keys.comment_voted_down(c))
                    for c in cids
                ]


def _votes_withdraw(conn: redis.Redis, user: str) -> int:
    """Withdraw `user`'s votes on open articles and comments: each page's voter sets are
    asked in one pipeline, and the votes found withdrawn in one script."""
    withdrawn = 0
    for items in _open_items(conn):
        pipe = conn.pipeline(transaction=False)
        for _, up, down in items:
            pipe.sismember(up, user)
            pipe.sismember(down, user)
        found = pipe.execute(raise_on_error=False)
        voted = [
            item
            for n, item in enumerate(items)
            if any(r is True or r == 1 for r in found[2 * n : 2 * n + 2])
        ]
        if voted:
            reply = scripts.VOTES_WITHDRAW(
                keys=[
                    keys.SCORE,
                    keys.VOTES,
                    keys.GOOD,
                    *keys.PERIOD_KEYS,
                    *[k for item in voted for k in item],
                ],
                args=[user, conf.vote_score(), conf.good_votes(), conf.window()],
                client=conn,
            )
            raise_for_status(reply)
            withdrawn += int(reply[1])
    return withdrawn


def _modlog_forget(conn: redis.Redis, user_id: int, name: str) -> None:
    """Rewrite the moderation log's mentions of an account (see modlog_forget.lua), a
    bounded range a call. New entries pushed meanwhile move older ones further down, so
    an entry may be read twice (no change then) but never skipped."""
    pairs = [f'"author": {json.dumps(keys.user(user_id))}', '"author": ""']
    if name:
        shown = json.dumps(DELETED_NAME)
        pairs += [f'"actor": {json.dumps(name)}', f'"actor": {shown}']
        pairs += [f'"author_name": {json.dumps(name)}', f'"author_name": {shown}']
    start, length = 0, 1
    while start < length:
        reply = scripts.MODLOG_FORGET(
            keys=[keys.MODLOG], args=[start, CLEANUP_BATCH, *pairs], client=conn
        )
        raise_for_status(reply)
        start, length = start + CLEANUP_BATCH, int(reply[2])


def cleanups_resume() -> int:
    """Finish the article and group deletions left in purge: (a crash or an outage
    between their batches); returns how many. The accounts left in forget: need the
    accounts database, and are finished by people.forget_pending."""
    conn = get_connection()
    done = 0
    for raw in list(conn.sscan_iter(keys.PURGE, count=CLEANUP_BATCH)):
        member = _decode(raw)
        article_id = keys.article_id_or_none(member)
        group = member.removeprefix("group:") if member.startswith("group:") else ""
        if article_id is not None:
            article_purge(article_id=article_id)
        elif validation.is_group_name(group):
            group_purge(name=group)
        else:
            conn.srem(keys.PURGE, raw)
            continue
        done += 1
    return done
