"""The checks of the search index (postings:<word>), both ways as for links: every article is
in the sets of the words its title, text and link give (search.article_words: the hash keeps
no list of them), and every entry names an article that has the word. Articles the book's
code wrote are reported as unindexed until reindex_search has run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis

from articles.operations.audit.common import Problem, chunks, former_index, wrong_type
from articles.operations.audit.confirm import Judge
from articles.store import keys, search
from articles.store.services import article_content

SEARCH_KINDS = frozenset({"search_unindexed", "search_stale"})
_NO_HASH = [None] * 3  # HMGET title text link of an article that is gone


def search_index_audit(conn: redis.Redis, ordered: list[int], batch: int = 500) -> list[Problem]:
    """Problems of the search index, for the article ids `ordered` (all of them)."""
    problems: list[Problem] = []
    has: dict[int, frozenset[str]] = {}
    unreadable: set[int] = set()  # not a hash (wrong_type): its entries are left alone
    for chunk in chunks(ordered, batch):
        problems += _articles_indexed(conn, chunk, has, unreadable)
    return problems + _entries_stale(conn, has, unreadable)


def _words(row: list[Any]) -> list[str]:
    """The words an article's HMGET title text link gives."""
    return search.article_words(*(keys.text(v or b"") for v in row))


def _articles_indexed(
    conn: redis.Redis, chunk: Sequence[int], has: dict[int, frozenset[str]], unreadable: set[int]
) -> list[Problem]:
    """The articles of `chunk` missing from the postings: sets of the words their title, text
    and link give; notes in `has` the words each has, in `unreadable` each that is not a
    hash."""
    pipe = conn.pipeline(transaction=False)
    for article_id in chunk:
        article_content(pipe, article_id)
    rows = pipe.execute(raise_on_error=False)
    problems: list[Problem] = []
    pipe = conn.pipeline(transaction=False)
    checked = []
    for article_id, row in zip(chunk, rows, strict=True):
        if isinstance(row, redis.ResponseError):
            unreadable.add(article_id)
        elif row != _NO_HASH:  # no hash: its entries are stale
            expected = _words(row)
            has[article_id] = frozenset(expected)
            for word in expected:
                pipe.sismember(keys.postings(word), str(article_id))
            checked.append((article_id, expected))
    replies = iter(pipe.execute(raise_on_error=False))
    for article_id, expected in checked:
        missing = [w for w in expected if not next(replies)]
        if missing:
            detail = f"missing from {keys.postings(missing[0])}"
            problems.append(Problem("search_unindexed", detail, article_id))
    return problems


def _entries_stale(
    conn: redis.Redis, has: dict[int, frozenset[str]], unreadable: set[int]
) -> list[Problem]:
    """The entries of every postings:<word> whose article does not have the word, the
    postings: keys that name no word or are not sets, and the former index's sets."""
    problems = former_index(conn, keys.LEGACY_SEARCH_INDEX_SCAN, "search_stale")
    for raw_key in conn.scan_iter(match=keys.SEARCH_INDEX_SCAN, count=1000):
        key = keys.text(raw_key)
        try:
            word = keys.word_of(key)
        except ValueError:
            problems.append(Problem("search_stale", f"{key} names no search word", entry=key))
            continue
        kind = keys.text(conn.type(key))
        if kind == "set":
            problems += _members_stale(conn, key, word, has, unreadable)
        elif kind != "none":
            problems.append(wrong_type(key, kind, "set"))
    return problems


def _members_stale(
    conn: redis.Redis, key: str, word: str, has: dict[int, frozenset[str]], unreadable: set[int]
) -> list[Problem]:
    problems: list[Problem] = []
    for member in conn.sscan_iter(key, count=1000):
        entry_id = keys.posting_id_or_none(keys.text(member))
        if entry_id in unreadable:
            continue
        if entry_id is None or word not in has.get(entry_id, ()):
            detail = f"{key} holds {keys.text(member)!r}, which does not have the word"
            problems.append(Problem("search_stale", detail, entry_id, entry=key))
    return problems


# --- the re-reads of their suspects (see confirm) ----------------------------------------


def search_read(pipe: redis.client.Pipeline, article_id: int, words: tuple[str, ...]) -> Judge:
    """One article's search fields and its entries in postings:<word> for `words`, the
    words its title, text and link gave when last read."""
    article_content(pipe, article_id)
    for word in words:
        pipe.sismember(keys.postings(word), str(article_id))

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        row, *hits = replies
        if isinstance(row, redis.ResponseError) or row == _NO_HASH:
            return None, []
        expected = _words(row)
        if tuple(expected) != words:
            return tuple(expected), []
        missing = [w for w, hit in zip(words, hits, strict=True) if hit != 1]
        if missing:
            detail = f"missing from {keys.postings(missing[0])}"
            return None, [Problem("search_unindexed", detail, article_id)]
        return None, []

    return judge


def search_stale_read(pipe: redis.client.Pipeline, key: str, article_id: int) -> Judge:
    """One entry of postings:<word> and the words of the article it names."""
    pipe.sismember(key, str(article_id))
    article_content(pipe, article_id)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        hit, row = replies
        if hit != 1 or isinstance(row, redis.ResponseError):
            return None, []
        if row != _NO_HASH and keys.word_of(key) in _words(row):
            return None, []
        detail = f"{key} holds {str(article_id)!r}, which does not have the word"
        return None, [Problem("search_stale", detail, article_id, entry=key)]

    return judge
