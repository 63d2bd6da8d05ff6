"""The comment search index (comment_postings:<word>): one comment re-indexed, the index rebuilt in
bounded batches. The writes of comments keep it exact (comment_index in _lib.lua); this
is for comments written before comment search, or after ARTICLES_SEARCH_COMMENT_WORDS
or the rules of search.py change."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import redis

from articles.errors import CommentNotFound, Conflict
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import (
    COMMENT_CONTENT,
    _decode,
    comment_content,
    comment_words_seen,
)
from articles.store.services.indexing import legacy_index_drop, stale_entries_drop
from articles.types import Status

_FIELDS = (*COMMENT_CONTENT, "time")


def _index_args(row: Sequence[Any]) -> list[str] | None:
    """The "index" arguments of comment_reindex.lua from a comment's HMGET _FIELDS, or
    None when there is no comment."""
    if not row[2]:
        return None
    words, seen = comment_words_seen(row[:2])
    return ["index", seen, words]


def comment_reindex(*, comment_id: int) -> bool:
    """Put one comment's search entries in step with its text (a tombstone has none).
    Returns whether anything changed. Raises CommentNotFound, StoreCorrupt."""
    try:
        member = keys.comment(comment_id)
    except ValueError:
        raise CommentNotFound() from None
    conn = get_connection()
    for _ in range(scripts.ATTEMPTS):
        args = _index_args(conn.hmget(member, *_FIELDS))
        if args is None:
            raise CommentNotFound()
        reply = scripts.COMMENT_REINDEX(keys=[member], args=args, client=conn)
        status = raise_for_status(reply, allow=(Status.RETRY,))
        if status is Status.OK:
            return bool(int(reply[1]))
    raise Conflict()


def comment_reindex_batch(*, comment_ids: list[int]) -> int:
    """comment_reindex for many comments in two round trips (one pipeline of reads, one
    of scripts); those changed in between are done again one by one. Returns how many
    comments' entries changed."""
    conn = get_connection()
    members = [keys.comment(cid) for cid in comment_ids]
    pipe = conn.pipeline(transaction=False)
    for member in members:
        pipe.hmget(member, *_FIELDS)
    rows = pipe.execute(raise_on_error=False)
    pipe = conn.pipeline(transaction=False)
    sent = []
    for cid, member, row in zip(comment_ids, members, rows, strict=True):
        args = None if isinstance(row, redis.ResponseError) else _index_args(row)
        if args is None:
            continue  # gone, or not a hash (check_votes reports it)
        scripts.COMMENT_REINDEX(keys=[member], args=args, client=pipe)
        sent.append(cid)
    changed = 0
    for cid, reply in zip(sent, pipe.execute(raise_on_error=False), strict=True):
        if isinstance(reply, redis.ResponseError):
            raise reply
        status = Status(int(reply[0]))
        if status is Status.OK:
            changed += int(reply[1])
        elif status is Status.RETRY:
            try:
                changed += comment_reindex(comment_id=cid)
            except CommentNotFound:
                continue
        elif status is not Status.BAD_DATA:  # bad data: check_votes reports it
            raise_for_status(reply)
    return changed


def comment_search_rebuild(
    *, batch: int = 500, progress: Callable[[int, int], None] | None = None
) -> tuple[int, int, int]:
    """Every comment's entries from its hash, then every comment_postings: entry whose comment is
    gone or lost the word dropped, in batches of `batch` (reindex_search). Safe beside
    the site and to run twice. Returns (comments seen, reindexed, stale entries dropped)."""
    conn = get_connection()
    total = int(conn.zcard(keys.COMMENTS)) if conn.type(keys.COMMENTS) == b"zset" else 0
    seen = changed = 0
    ids: list[int] = []
    for raw in conn.scan_iter(match=keys.COMMENT_SCAN, count=batch):
        cid = keys.comment_id_or_none(_decode(raw))
        if cid is not None:
            ids.append(cid)
        if len(ids) >= batch:
            changed += comment_reindex_batch(comment_ids=ids)
            seen, ids = seen + len(ids), []
            if progress:
                progress(seen, max(total, seen))
    if ids:
        changed += comment_reindex_batch(comment_ids=ids)
        seen += len(ids)
    if progress:
        progress(seen, seen)
    legacy_index_drop(conn, keys.LEGACY_COMMENT_SEARCH_INDEX_SCAN, batch)
    dropped = stale_entries_drop(
        conn,
        scan=keys.COMMENT_SEARCH_INDEX_SCAN,
        word_of=keys.comment_word_of,
        id_of=keys.posting_id_or_none,
        read=lambda pipe, i: pipe.hmget(keys.comment(i), *COMMENT_CONTENT),
        words_of=lambda row: comment_words_seen(row)[0].split(),
        drop=lambda word, i: comment_search_entry_drop(word=word, comment_id=i),
        batch=batch,
    )
    return seen, changed, dropped


def comment_search_entry_drop(*, word: str, comment_id: int) -> bool:
    """Remove comment_id from comment_postings:<word> unless the comment (still) has the word.
    Returns whether it was removed. Raises StoreCorrupt (a key of the wrong type)."""
    member = keys.comment(comment_id)
    for _ in range(scripts.ATTEMPTS):
        words, seen = comment_content(comment_id)
        if word in words.split():
            return False
        reply = scripts.COMMENT_REINDEX(
            keys=[member, keys.comment_postings(word)],
            args=["drop", word, seen],
            client=get_connection(),
        )
        if raise_for_status(reply, allow=(Status.RETRY,)) is Status.OK:
            return bool(int(reply[1]))
    raise Conflict()
