"""The search index: an article's words re-indexed, the index rebuilt in bounded batches."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import redis

from articles import conf
from articles.errors import (
    ArticleNotFound,
    Conflict,
)
from articles.store import keys, scripts, search
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import (
    _article_member,
    _decode,
    _indexed_content,
    article_content,
)
from articles.types import Status

logger = logging.getLogger("articles.store.services")  # the package's one logger


def article_reindex(*, article_id: int) -> bool:
    """Put one article in the postings:<w> sets of the words its title, text and link give
    (for articles the book's code wrote, or after the rules of search.py change). Returns
    whether anything changed; a second run changes nothing. Raises ArticleNotFound."""
    _article_member(article_id)
    for _ in range(scripts.ATTEMPTS):
        result = _reindex(get_connection(), article_id, *_indexed_content(article_id))
        if raise_for_status(result, allow=(Status.RETRY,)) is Status.OK:
            return bool(int(result[1]))
    raise Conflict()


def _reindex(client: Any, article_id: int, words: list[str], content: list[str]) -> Any:
    """reindex.lua for one article whose title, text and link were read as `content`, and
    the words they give."""
    member = keys.article(article_id)
    return scripts.REINDEX(
        keys=[member, *map(keys.postings, words)],
        args=[member, " ".join(words), *content],
        client=client,
    )


def search_reindex_batch(*, article_ids: list[int]) -> tuple[int, int]:
    """article_reindex for many articles in two round trips (one pipeline of reads, one
    of scripts); the few that changed in between are done again one by one. Returns
    (articles whose index changed, articles not found)."""
    conn = get_connection()
    pipe = conn.pipeline(transaction=False)
    for article_id in article_ids:
        article_content(pipe, article_id)
    rows = pipe.execute(raise_on_error=False)
    pipe = conn.pipeline(transaction=False)
    sent = []
    for article_id, row in zip(article_ids, rows, strict=True):
        if isinstance(row, redis.ResponseError) or row == [None] * 3:
            continue  # not a hash (check_votes reports it), or gone (or has none of them)
        content = [_decode(v) for v in row]
        _reindex(pipe, article_id, search.article_words(*content), content)
        sent.append(article_id)
    changed, missing = 0, len(article_ids) - len(sent)
    for article_id, reply in zip(sent, pipe.execute(raise_on_error=False), strict=True):
        if isinstance(reply, redis.ResponseError):
            raise reply
        status = Status(int(reply[0]))
        if status is Status.OK:
            changed += int(reply[1])
        elif status is Status.RETRY:
            try:
                changed += article_reindex(article_id=article_id)
            except ArticleNotFound:
                missing += 1
        elif status is Status.NOT_FOUND:
            missing += 1
        else:
            raise_for_status(reply)
    return changed, missing


def search_index_rebuild(
    *, batch: int = 500, progress: Callable[[int, int], None] | None = None
) -> tuple[int, int, int]:
    """Bring the whole search index in step (manage.py reindex_search): every article's
    words from its hash, then every entry whose article is gone or lost the word dropped.
    Batches of `batch` articles, each one pipeline of reads and one of small scripts, so
    the site's own requests run between them. Safe to run twice or beside the site: each
    script checks what was read. `progress(done, total)` is called after each batch.
    Once every article is done, search:stemmer names the stemmer's language: searches
    stop reading the sets of words as typed (search.lua), which an index built before
    stemming, or in another language, holds. Then the former index's sets (idx:<word>,
    of article:<id> strings) are deleted, a batch of keys at a time: every article is in
    postings:<word> by then.
    Returns (articles seen, articles whose index changed, stale entries dropped)."""
    conn = get_connection()
    language = conf.search_language()
    total = int(conn.zcard(keys.TIME)) if conn.type(keys.TIME) == b"zset" else 0
    seen = changed = 0
    ids: list[int] = []
    for member in conn.scan_iter(match=keys.ARTICLE_SCAN, count=batch):
        ids.extend(keys.article_ids([member]))
        if len(ids) >= batch:
            changed += search_reindex_batch(article_ids=ids)[0]
            seen += len(ids)
            ids = []
            if progress:
                progress(seen, max(total, seen))
    if ids:
        changed += search_reindex_batch(article_ids=ids)[0]
        seen += len(ids)
    if progress:
        progress(seen, seen)
    conn.set(keys.SEARCH_STEMMER, language)
    legacy_index_drop(conn, keys.LEGACY_SEARCH_INDEX_SCAN, batch)
    dropped = stale_entries_drop(
        conn,
        scan=keys.SEARCH_INDEX_SCAN,
        word_of=keys.word_of,
        id_of=keys.posting_id_or_none,
        read=article_content,
        words_of=lambda row: search.article_words(*map(_decode, row)),
        drop=lambda word, i: search_entry_drop(word=word, article_id=i),
        batch=batch,
    )
    return seen, changed, dropped


def legacy_index_drop(conn: redis.Redis, scan: str, batch: int) -> None:
    """Delete the former index's sets (`scan` matches them), `batch` keys a call, freed off
    Redis' main thread: run once the new index holds every item."""
    chunk: list[bytes] = []
    for key in conn.scan_iter(match=scan, count=batch):
        chunk.append(key)
        if len(chunk) >= batch:
            conn.unlink(*chunk)
            chunk = []
    if chunk:
        conn.unlink(*chunk)


def stale_entries_drop(
    conn: redis.Redis,
    *,
    scan: str,
    word_of: Callable[[str], str],
    id_of: Callable[[str], int | None],
    read: Callable[[redis.client.Pipeline, int], object],
    words_of: Callable[[Any], list[str]],
    drop: Callable[[str, int], bool],
    batch: int,
) -> int:
    """Every entry of the index sets `scan` matches whose item (`id_of` its member) lacks
    the set's word (`word_of` its key) among its words (`words_of` the reply of what
    `read` queues for its id), passed to `drop(word, id)`, a script that checks again.
    Keys not ours or not sets, and items not hashes, are left (check_votes reports them).
    Returns how many were dropped."""
    dropped = 0
    for raw_key in conn.scan_iter(match=scan, count=batch):
        try:
            word = word_of(_decode(raw_key))
        except ValueError:
            continue
        if conn.type(raw_key) != b"set":
            continue
        members = [_decode(m) for m in conn.sscan_iter(raw_key, count=batch)]
        for offset in range(0, len(members), batch):
            chunk = [i for m in members[offset : offset + batch] if (i := id_of(m))]
            pipe = conn.pipeline(transaction=False)
            for item_id in chunk:
                read(pipe, item_id)
            for item_id, row in zip(chunk, pipe.execute(raise_on_error=False), strict=True):
                if isinstance(row, redis.ResponseError):
                    continue  # not a hash: check_votes reports it
                if word not in words_of(row):
                    dropped += drop(word, item_id)
    return dropped


def search_entry_drop(*, word: str, article_id: int) -> bool:
    """Remove article_id from postings:<word> unless the article (still) has the word.
    Returns whether it was removed."""
    for _ in range(scripts.ATTEMPTS):
        words, content = _indexed_content(article_id)
        if word in words:
            return False
        result = scripts.UNINDEX(
            keys=[keys.postings(word), keys.article(article_id)],
            args=[article_id, word, *content],
            client=get_connection(),
        )
        if raise_for_status(result, allow=(Status.RETRY,)) is Status.OK:
            return bool(int(result[1]))
    raise Conflict()
