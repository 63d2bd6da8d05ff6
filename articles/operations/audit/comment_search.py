"""The checks of the comment search index (comment_postings:<word>), both ways as for
articles: every visible comment is in the sets of the words its text gives
(search.comment_words), a tombstone in none, and every entry names a comment whose text
gives the word. A suspect is re-read in one MULTI/EXEC (its hash and its entries
together) before it is reported, so a write between the audit's reads is not taken for a
fault."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import redis

from articles.errors import CommentNotFound, StoreCorrupt
from articles.operations.audit.common import Problem, chunks, cid, former_index, wrong_type
from articles.store import keys, services
from articles.store.services import COMMENT_CONTENT, comment_words_seen

COMMENT_SEARCH_KINDS = frozenset({"comment_search_unindexed", "comment_search_stale"})
_FIELDS = (*COMMENT_CONTENT, "time")


def comment_search_audit(conn: redis.Redis, batch: int = 500) -> list[Problem]:
    """Problems of the comment search index, each confirmed by a consistent re-read."""
    ids = sorted({i for k in conn.scan_iter(match=keys.COMMENT_SCAN, count=1000) if (i := cid(k))})
    has: dict[str, frozenset[str]] = {}
    unreadable: set[str] = set()
    problems: list[Problem] = []
    for chunk in chunks(ids, batch):
        problems += _unindexed(conn, chunk, has, unreadable)
    problems += _stale(conn, has, unreadable)
    return [p for p in problems if _still(conn, p)]


def _words(row: Sequence[Any]) -> list[str]:
    """The words a comment's HMGET _FIELDS gives (none for a tombstone)."""
    return comment_words_seen(row[:2])[0].split()


def _unindexed(
    conn: redis.Redis, chunk: Sequence[int], has: dict[str, frozenset[str]], unreadable: set[str]
) -> list[Problem]:
    pipe = conn.pipeline(transaction=False)
    for comment_id in chunk:
        pipe.hmget(keys.comment(comment_id), *_FIELDS)
    rows = pipe.execute(raise_on_error=False)
    problems: list[Problem] = []
    pipe = conn.pipeline(transaction=False)
    checked = []
    for comment_id, row in zip(chunk, rows, strict=True):
        member = keys.comment(comment_id)
        if isinstance(row, redis.ResponseError):
            unreadable.add(member)  # not a hash: the comment audit reports it
            continue
        if row[2] is None:
            continue  # gone: its entries are stale
        expected = _words(row)
        has[member] = frozenset(expected)
        for word in expected:
            pipe.sismember(keys.comment_postings(word), str(comment_id))
        checked.append((member, expected))
    replies = iter(pipe.execute(raise_on_error=False))
    for member, expected in checked:
        missing = [w for w in expected if not next(replies)]
        if missing:
            problems.append(
                Problem(
                    "comment_search_unindexed",
                    f"missing from {keys.comment_postings(missing[0])}",
                    entry=member,
                    member=member,
                )
            )
    return problems


def _stale(
    conn: redis.Redis, has: dict[str, frozenset[str]], unreadable: set[str]
) -> list[Problem]:
    """Entries naming a comment without the word, comment_postings: keys that name no word
    or are not sets, and the former index's sets."""
    problems = former_index(conn, keys.LEGACY_COMMENT_SEARCH_INDEX_SCAN, "comment_search_stale")
    for raw_key in conn.scan_iter(match=keys.COMMENT_SEARCH_INDEX_SCAN, count=1000):
        key = keys.text(raw_key)
        try:
            word = keys.comment_word_of(key)
        except ValueError:
            problems.append(
                Problem("comment_search_stale", f"{key} names no search word", entry=key)
            )
            continue
        kind = keys.text(conn.type(key))
        if kind != "set":
            if kind != "none":
                problems.append(wrong_type(key, kind, "set"))
            continue
        for raw in conn.sscan_iter(key, count=1000):
            entry = keys.text(raw)
            comment_id = keys.posting_id_or_none(entry)
            member = keys.comment(comment_id) if comment_id is not None else None
            if member in unreadable:
                continue
            if member is None or word not in has.get(member, ()):
                detail = f"{key} holds {entry!r}, which does not have the word"
                problems.append(Problem("comment_search_stale", detail, entry=key, member=member))
    return problems


def _still(conn: redis.Redis, problem: Problem) -> bool:
    """Whether `problem` holds in one consistent read of its comment and its entries."""
    member = problem.member
    if member is None or keys.comment_id_or_none(member) is None:
        return True  # an entry naming no comment: nothing to re-read
    pipe = conn.pipeline(transaction=True)
    pipe.hmget(member, *_FIELDS)
    if problem.kind == "comment_search_stale" and problem.entry:
        pipe.sismember(problem.entry, str(keys.comment_id_of(member)))
        row, hit = pipe.execute(raise_on_error=False)
        if isinstance(row, redis.ResponseError) or not hit:
            return False
        word = keys.comment_word_of(problem.entry)
        return row[2] is None or word not in _words(row)
    row = pipe.execute(raise_on_error=False)[0]
    if isinstance(row, redis.ResponseError) or row[2] is None:
        return False
    expected = _words(row)
    pipe = conn.pipeline(transaction=True)
    pipe.hmget(member, *_FIELDS)
    for word in expected:
        pipe.sismember(keys.comment_postings(word), str(keys.comment_id_of(member)))
    again, *hits = pipe.execute(raise_on_error=False)
    return list(again) == list(row) and not all(hits)


def comment_search_repair(problems: Iterable[Problem]) -> None:
    """Reindex the unindexed comments from their hashes and drop the stale entries, each
    by one script that checks what it read (check_votes --repair). An entry naming no
    comment, or a key of the wrong type, is left for a person."""
    for problem in problems:
        comment_id = keys.comment_id_or_none(problem.member or "")
        try:
            if problem.kind == "comment_search_unindexed" and comment_id:
                services.comment_reindex(comment_id=comment_id)
            elif problem.kind == "comment_search_stale" and comment_id and problem.entry:
                word = keys.comment_word_of(problem.entry)
                services.comment_search_entry_drop(word=word, comment_id=comment_id)
        except (CommentNotFound, StoreCorrupt):
            continue
