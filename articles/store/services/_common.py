"""What the services share: retry rounds, batch size, members, idempotency keys, the modlog."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis

from articles import validation
from articles.errors import (
    ArticleArchived,
    ArticleNotFound,
    ArticlesError,
    CommentNotFound,
    NotAllowed,
    StoreCorrupt,
)
from articles.store import clock, keys, search
from articles.store.connection import get_connection, is_wrong_type
from articles.store.selectors.archived import comment_archived, is_archived
from articles.types import Actor

logger = logging.getLogger("articles.store.services")  # the package's one logger


# Scripts sent in one round trip by the *_many services.
_BATCH = 500


def _finish_or_leave(finish: Callable[[], object], left: str) -> None:
    """Run the bounded steps after a deletion's first, atomic one. The deletion already
    stands for every reader, so a failure here only leaves its rest queued (purge:,
    forget:) for check_votes --repair: logged, never raised."""
    try:
        finish()
    except (redis.RedisError, ArticlesError):
        logger.warning("%s left for check_votes --repair", left)


def _positive_id(user_id: int) -> int:
    return keys.user_id_of(keys.user(user_id))


# Items a cleanup batch handles in one script call (comments of a deleted article,
# items or votes of a deleted account, moderation log entries): 100 comments are ~500
# keys, ~2 ms of Redis on a busy 2-vCPU machine (22 µs a comment), where one script over
# all of an article's comments held Redis for the whole (20,000: ~240 ms, and past the
# client's 1 s timeout on the same busy machine).
CLEANUP_BATCH = 100
# Comments of a deleted article one purge step deletes: a comment as the site writes it
# (its words in comment search, its replies in an inbox) is ~50 µs of Redis on the same
# machine, so 100 took 5-10 ms a step (bench/scale.py, a 2,000-comment thread); 25 keep a
# step near 1-2 ms, under the 5 ms no call may take.
COMMENT_PURGE_BATCH = 25


def _domain_key(link: str) -> str:
    """domain:<d> of a link's site, or "" for none (no link, or a host written by other
    code that no domain page can name)."""
    name = validation.link_domain(link)
    return keys.domain(name) if name else ""


def _indexed_content(article_id: int) -> tuple[list[str], list[str]]:
    """An article's search words (the postings:<w> sets that hold its id), made from its
    title, text and link as read, and those three: the scripts check they are unchanged
    (content_as_read in _lib.lua). One round trip, to the primary."""
    content = [_decode(v) for v in article_content(get_connection(), article_id)]
    return search.article_words(*content), content


def article_content(conn: redis.Redis | redis.client.Pipeline, article_id: int) -> Any:
    """HMGET of the fields an article's search words are made from: title, text, link."""
    return conn.hmget(keys.article(article_id), "title", "text", "link")


# What a comment's search words are made from (search.comment_words of its text; none for
# a tombstone, whose state is set): the hash keeps no list of them.
COMMENT_CONTENT = ("state", "text")


def comment_words_seen(row: Any) -> tuple[str, str]:
    """A comment's search words ("w1 w2 ...") from its HMGET COMMENT_CONTENT as read, and
    their `seen`: the SHA-1 of "<state>\\n<text>", which the scripts that take the comment
    out of those words' sets check it still has (comment_as_read in _lib.lua)."""
    state, text = (v.encode() if isinstance(v, str) else (v or b"") for v in row)
    words = "" if state else " ".join(search.comment_words(_decode(text)))
    return words, hashlib.sha1(state + b"\n" + text, usedforsecurity=False).hexdigest()


def comment_content(comment_id: int) -> list[str]:
    """The words and seen (comment_words_seen) of one comment as read now: the arguments a
    script that takes it out of comment search checks. One round trip, to the primary.
    Raises StoreCorrupt (its key not a hash)."""
    member = keys.comment(comment_id)
    try:
        row = get_connection().hmget(member, *COMMENT_CONTENT)
    except redis.ResponseError as exc:
        if not is_wrong_type(exc):
            raise
        raise StoreCorrupt(member, "is not a hash") from None
    return list(comment_words_seen(row))


def comments_as_read(conn: Any, listed: str, batch: int) -> list[str]:
    """member, seen, words of each of the first `batch` comments of the zset `listed`, as
    read now (two round trips): the arguments of a batch that takes those comments away
    (comments_given in _lib.lua). A key not a hash is left out: such a batch leaves it be;
    `listed` not a zset gives none: such a batch takes nothing."""
    try:
        members = [keys.text(m) for m in conn.zrange(listed, 0, batch - 1)]
    except redis.ResponseError as exc:
        if not is_wrong_type(exc):
            raise
        return []
    pipe = conn.pipeline(transaction=False)
    for member in members:
        pipe.hmget(member, *COMMENT_CONTENT)
    given: list[str] = []
    for member, row in zip(members, pipe.execute(raise_on_error=False), strict=True):
        if not isinstance(row, redis.ResponseError):
            words, seen = comment_words_seen(row)
            given += [member, seen, words]
    return given


def _link_owner(conn: redis.Redis, norm: str) -> str:
    """The member links:<b> maps a normalised link to ("" for none)."""
    if not norm:
        return ""
    key, field = keys.link_slot(norm)
    try:
        held = _decode(conn.hget(key, field))
    except redis.ResponseError as exc:
        if not is_wrong_type(exc):
            raise
        raise StoreCorrupt(key, "is not a hash") from None
    return keys.link_holder(held)


def _given(now: float | None, *, whole: bool = False) -> int | float | str:
    """A script's `now` argument. "" lets the script read Redis' own clock (TIME), the one
    the voter sets expire by, so the web server's clock never decides the voting window;
    tests and tools pass a time to fix it."""
    if now is None:
        return ""
    return int(now) if whole else float(now)


def _article_member(article_id: int) -> str:
    try:
        return keys.article(article_id)
    except ValueError:
        raise ArticleNotFound() from None


def _idempotency_key(
    key_of: Callable[[int, str], str], user_id: int, token: str | None
) -> str | None:
    """The key of an Idempotency-Key sent along, or None without one."""
    return None if token is None else validation.idempotency_key(key_of, user_id, token)


def _staff_only(actor: Actor, refusal: str) -> None:
    """The rule of every moderation write: staff only (NotAllowed, a 403, saying `refusal`,
    for anyone else)."""
    if not actor.is_staff:
        raise NotAllowed(refusal)


def _log(
    actor: str, action: str, target: str, reason: str, now: float | None, **details: object
) -> str:
    """A moderation log entry as JSON, or "" when no staff member acts."""
    if not actor:
        return ""
    entry = {"time": int(clock.now(now)), "actor": actor, "action": action, "target": target}
    entry["reason"] = reason
    entry["details"] = details
    return json.dumps(entry, sort_keys=True)


def _decode(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value


@contextmanager
def _archived_refused(
    *,
    article_id: int | None = None,
    comment_id: int | None = None,
    refusal: type[ArticlesError] = ArticleArchived,
) -> Iterator[None]:
    """A write that found no article or comment in Redis: when the database holds it
    (archived: read-only), `refusal` is raised instead of the 404 (one query, asked only
    then)."""
    try:
        yield
    except (ArticleNotFound, CommentNotFound):
        if (article_id and is_archived(article_id)) or (
            comment_id and comment_archived(comment_id)
        ):
            raise refusal() from None
        raise
