"""Archiving: articles whose voting closed move to the database (ARTICLES_ARCHIVE_AFTER).

A closed article's votes never change again, yet its hash, comments and search postings
cost most of its Redis memory for ever. `manage.py archive` moves them, oldest first along
time:, in bounded batches: the batch's rows are written to the database first (one
transaction, an idempotent upsert), then one archive.lua call checks each article is
unchanged since it was read and takes what a closed article no longer needs out of Redis;
its comments follow in batches of COMMENT_BATCH (archive_comments.lua). What rankings need
stays, so every listing still lists it and reads its row (selectors/archived.py).

A crash between the two steps loses nothing: the rows are there, the hash too (pages read
the hash while it exists), and the next run, starting again at archive:at, redoes both.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from articles import conf, validation
from articles.errors import Conflict
from articles.models import ArchivedArticle, ArchivedComment, ArchivedCommentWord, ArchivedWord
from articles.store import clock, keys, scripts, search
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.types import Status, article_score

logger = logging.getLogger("articles.store.archive")

# Articles a batch: read, then written to the database in one transaction, whose fixed
# cost (a commit, five statements) the batch's articles share.
BATCH = 200
# Articles an archive.lua call takes out of Redis: ~30 commands an article (its words'
# SREMs the most): ~0.5 ms of Redis for 10 (p50; python -m bench.archive), under 5 ms at p99.
STEP = 10
COMMENT_BATCH = 25  # comments an archive_comments.lua call takes away (article_purge's 25)
READ_CHUNK = 500  # a thread's members a ZRANGE, and comment hashes a pipeline, for the rows
# Closed articles a link_close.lua call reads or releases: 100 are one ZRANGE and 100 HGETs,
# then up to 100 HDELs of small hashes.
LINK_BATCH = 100


@dataclass
class Read:
    """One article as read for archiving: its hash's raw fields (compared by archive.lua)."""

    article_id: int
    time: float
    raw: dict[bytes, bytes]

    def text(self, name: str) -> str:
        return keys.text(self.raw.get(name.encode(), b""))

    @functools.cached_property
    def words(self) -> list[str]:
        """Its search words as read: the postings:<w> sets holding its id (the rows' words
        and the Redis step's keys; stemming them is most of a batch's own CPU)."""
        return search.article_words(self.text("title"), self.text("text"), self.text("link"))


@dataclass
class Progress:
    archived: int = 0
    changed: int = 0
    comments: int = 0
    batches: int = 0
    set_back: float | None = None  # where a batch with a changed article sent the cursor


def enabled() -> bool:
    return conf.archive_after() is not None


def archive(
    *,
    now: float | None = None,
    batch: int = BATCH,
    step: int = STEP,
    limit: int | None = None,
    dry_run: bool = False,
    progress: Callable[[Progress], None] | None = None,
) -> Progress:
    """Archive every article posted more than ARTICLES_ARCHIVE_AFTER ago (at most `limit`),
    batch after batch, `step` articles an archive.lua call; `dry_run` counts them and
    writes nothing."""
    after = conf.archive_after()
    done = Progress()
    if after is None:
        return done
    cutoff = (time.time() if now is None else now) - after
    conn, skip = get_connection(), 0
    while limit is None or done.archived + done.changed < limit:
        size = batch if limit is None else min(batch, limit - done.archived - done.changed)
        at, set_back = _cursor(conn), done.set_back
        found, times, more = _next_batch(conn, cutoff, size, at, skip)
        if not times:
            break
        cursor = times[-1]
        if dry_run:
            done.archived += len(found)
        elif found:
            _archive_batch(conn, found, cursor, done, step)  # moves archive:at to `cursor`
        else:
            conn.set(keys.ARCHIVE_AT, repr(cursor))
        done.batches += bool(found)
        # Where the next batch starts: after the rows read at the cursor's time (post
        # times are whole seconds: many articles may share one, more than a batch).
        if dry_run or (cursor == at and done.set_back == set_back):
            skip += len(times)
        elif done.set_back != set_back:
            skip = 0  # a changed article sent the cursor back: read from there
        else:
            skip = sum(1 for t in times if t == cursor)
        if progress:
            progress(done)
        if not more and done.set_back == set_back:
            break
    if not dry_run:
        done.comments += comments_finish(conn)
        if done.archived:
            _forget_searches(conn)
    return done


def _forget_searches(conn: Any) -> None:
    """Searches cached while articles were archived name them among Redis' results; one
    DEL of every slot's query string (a bounded number of keys) has each built again, so
    a search counts an archived article once. Meanwhile merged_search leaves them out."""
    slots = conf.search_cache_slots()
    conn.delete(*(keys.search_cache_query(slot) for slot in range(slots)))


def _cursor(conn: Any) -> float:
    """archive:at: the post time before which every article is archived (or was left)."""
    raw = conn.get(keys.ARCHIVE_AT)
    try:
        return float(raw) if raw else float("-inf")
    except ValueError:
        return float("-inf")  # not a time (the audit reports it): from the start


def _next_batch(
    conn: Any, cutoff: float, size: int, at: float, skip: int
) -> tuple[list[Read], list[float], bool]:
    """The `size` articles of time: from the post time `at`, `skip` rows on, that were
    posted before `cutoff`: those that still have a hash, the post times of all read,
    and whether more may follow. An archived one read again has no hash: passed over."""
    start = int(conn.zcount(keys.TIME, "-inf", f"({at}")) + skip
    rows = conn.zrange(keys.TIME, start, start + size - 1, withscores=True)
    rows = [(m, t) for m, t in rows if t < cutoff]
    if not rows:
        return [], [], False
    ids = keys.article_ids(m for m, _ in rows)
    pipe = conn.pipeline(transaction=False)
    for article_id in ids:
        pipe.hgetall(keys.article(article_id))
    hashes = pipe.execute()
    times = {keys.article_ids([m])[0]: t for m, t in rows if keys.article_ids([m])}
    found = [Read(i, times[i], h) for i, h in zip(ids, hashes, strict=True) if h]
    return found, [t for _, t in rows], len(rows) == size


def _archive_batch(conn: Any, found: list[Read], cursor: float, done: Progress, step: int) -> None:
    """The rows of `found`, then their keys out of Redis, `step` articles a call; a
    changed article's rows are taken back (it is read again by a later run). Each call
    moves archive:at to its last article's time (the batch's `cursor` for the last call):
    every article before it is archived or, changed, still has its hash, which pages read
    first; the cursor goes back to the first changed one after the last call."""
    _write_rows(conn, found)
    reply: list[int] = []
    for start in range(0, len(found), step):
        part = found[start : start + step]
        at = cursor if start + step >= len(found) else part[-1].time
        reply += _redis_step(conn, part, at)
    left = [r.article_id for r, ok in zip(found, reply, strict=True) if not ok]
    if left:
        # Changed since read (or deleted): its rows must not outlive or contradict it.
        ArchivedArticle.objects.filter(id__in=left).delete()
        logger.info("Changed since read, read again: %s", left)
        pipe = conn.pipeline(transaction=False)
        for read in found:
            if read.article_id in left:
                pipe.exists(keys.article(read.article_id))
        there = pipe.execute()
        again = [r.time for r in found if r.article_id in left]
        again = [t for t, e in zip(again, there, strict=True) if e]
        if again and min(again) != done.set_back:
            done.set_back = min(again)  # read it again once; then it waits for a later run
            conn.set(keys.ARCHIVE_AT, repr(done.set_back))
        else:
            done.changed += len(left)
    done.archived += len(found) - len(left)
    for read, outcome in zip(found, reply, strict=True):
        if outcome == 2:  # archived, its comments queued in archive:
            done.comments += comments_take(conn, read.article_id)


def _redis_step(conn: Any, found: list[Read], cursor: float) -> list[int]:
    """One archive.lua call for a step of the batch (keys in KEYS, as every script's)."""
    call_keys: list[str] = [keys.ARCHIVE, keys.ARCHIVE_AT]
    args: list[Any] = [repr(cursor)]
    for read in found:
        # with those a hash written before names in its `words`, if reindex_search has not run
        words = sorted({*read.words, *_valid_words(read.text("words"))})
        links_key, link_field = keys.link_keys(
            validation.indexed_link(read.text("link")), keys.article(read.article_id)
        )
        call_keys += [
            keys.article(read.article_id),
            keys.article_comments(read.article_id),
            keys.article_comments_new(read.article_id),
            keys.article_comments_all(read.article_id),
            links_key,
            *map(keys.postings, words),
        ]
        args += [keys.article(read.article_id), link_field, len(read.raw)]
        for name, value in read.raw.items():
            args += [name, value]
        args.append(len(words))
    reply = scripts.ARCHIVE(keys=call_keys, args=args, client=conn)
    raise_for_status(reply)
    return [int(x) for x in reply[2:]]


def _valid_words(value: str) -> list[str]:
    """The words of a former `words` field (the postings: sets holding it); none
    if one is not a word search.py makes (data written by others: the audit reports it)."""
    words = value.split()
    try:
        for word in words:
            keys.postings(word)
    except ValueError:
        return []
    return words


def _write_rows(conn: Any, found: list[Read]) -> None:
    """The batch's articles, comments and postings, in one transaction (an upsert: a run
    redone after a crash writes the same rows again)."""
    vote_score = conf.vote_score()
    articles, words = [], []
    now = time.time()
    for read in found:
        fields = _fields(read.raw)
        up = _int(fields.get("votes")), _int(fields.get("downvotes"))
        posted = _float(fields.get("time"), read.time)
        groups = [g for g in fields.get("groups", "").split(",") if g]
        articles.append(
            ArchivedArticle(
                id=read.article_id,
                time=posted,
                score=article_score(posted, up[0], up[1], vote_score=vote_score),
                net=up[0] - up[1],
                poster=fields.get("poster", "")[:40],
                groups="," + ",".join(groups) + "," if groups else "",
                fields=fields,
                archived_at=now,
            )
        )
        words += [ArchivedWord(word=w, article_id=read.article_id) for w in read.words]
    ids = [a.id for a in articles]
    comments = _read_comments(conn, ids)
    comment_words = [
        ArchivedCommentWord(word=w, comment_id=c.id)
        for c in comments
        if not c.fields.get("state")
        for w in search.comment_words(c.fields.get("text", ""))
    ]
    with transaction.atomic():
        ArchivedArticle.objects.bulk_create(
            articles,
            update_conflicts=True,
            unique_fields=["id"],
            update_fields=["time", "score", "net", "poster", "groups", "fields", "archived_at"],
        )
        ArchivedWord.objects.filter(article_id__in=ids).delete()
        ArchivedWord.objects.bulk_create(words, batch_size=1000)
        ArchivedComment.objects.bulk_create(
            comments,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["id"],
            update_fields=["article", "parent", "best", "time", "author", "fields"],
        )
        ArchivedCommentWord.objects.filter(comment__article_id__in=ids).delete()
        ArchivedCommentWord.objects.bulk_create(comment_words, batch_size=1000)


def _read_comments(conn: Any, article_ids: list[int]) -> list[ArchivedComment]:
    """Every comment of the batch's articles (comments_all:<aid>) with its score in its
    parent's best order: a pipeline of every thread's next READ_CHUNK members, then their
    hashes and their scores, READ_CHUNK comments a pipeline: a round trip for each of
    those, not for each article (most articles have no comment at all)."""
    found: list[ArchivedComment] = []
    starts = dict.fromkeys(article_ids, 0)
    while starts:
        pipe = conn.pipeline(transaction=False)
        for article_id, start in starts.items():
            pipe.zrange(keys.article_comments_all(article_id), start, start + READ_CHUNK - 1)
        listed: list[tuple[int, int]] = []
        more: dict[int, int] = {}
        for (article_id, start), members in zip(starts.items(), pipe.execute(), strict=True):
            if len(members) == READ_CHUNK:  # more may follow
                more[article_id] = start + READ_CHUNK
            ids = map(keys.comment_id_or_none, map(keys.text, members))
            listed += [(article_id, comment_id) for comment_id in ids if comment_id is not None]
        starts = more
        for at in range(0, len(listed), READ_CHUNK):
            found += _comment_rows(conn, listed[at : at + READ_CHUNK])
    return found


def _comment_rows(conn: Any, listed: list[tuple[int, int]]) -> list[ArchivedComment]:
    """The rows of (article id, comment id) pairs: two round trips."""
    pipe = conn.pipeline(transaction=False)
    for _, comment_id in listed:
        pipe.hgetall(keys.comment(comment_id))
    hashes = pipe.execute()
    pipe = conn.pipeline(transaction=False)
    rows = []
    for (article_id, comment_id), raw in zip(listed, hashes, strict=True):
        fields = _fields(raw)
        if fields.get("article") != keys.article(article_id):
            continue
        parent = keys.comment_id_or_none(fields.get("parent", ""))
        ordering = keys.replies(parent) if parent else keys.article_comments(article_id)
        pipe.zscore(ordering, keys.comment(comment_id))
        rows.append((article_id, comment_id, parent, fields))
    scores = pipe.execute() if rows else []
    return [
        ArchivedComment(
            id=comment_id,
            article_id=article_id,
            parent=parent,
            best=float(best) if best is not None else -1.0,
            time=_float(fields.get("time"), 0.0),
            author=fields.get("author", "")[:40],
            fields=fields,
        )
        for (article_id, comment_id, parent, fields), best in zip(rows, scores, strict=True)
    ]


def comments_take(conn: Any, article_id: int) -> int:
    """Take an archived article's comments out of Redis, batch after batch; how many."""
    from articles.store.services._common import comments_as_read

    member, listed = keys.article(article_id), keys.article_comments_all(article_id)
    before = int(conn.zcard(listed))
    while True:
        reply = scripts.ARCHIVE_COMMENTS(
            keys=[listed, keys.ARCHIVE, member],
            args=[member, COMMENT_BATCH, *comments_as_read(conn, listed, COMMENT_BATCH)],
            client=conn,
        )
        raise_for_status(reply)
        if not int(reply[1]):
            return before


def comments_finish(conn: Any) -> int:
    """Finish what an interrupted run left in archive: (its comments)."""
    taken = 0
    for member in conn.smembers(keys.ARCHIVE):
        article_id = keys.article_id_or_none(keys.text(member))
        if article_id is not None:
            taken += comments_take(conn, article_id)
        else:
            conn.srem(keys.ARCHIVE, member)
    return taken


def links_close(
    *, now: float | None = None, batch: int = LINK_BATCH, limit: int | None = None
) -> tuple[int, int]:
    """Release the links:<b> entries of the articles whose voting closed (at most `limit`
    articles), from where the last run stopped (links:closed), a batch a link_close.lua
    "due" call and a "close" call: a closed article's link may be posted again, so its
    entry is dead weight. Whether or not archiving is on; safe to interrupt and to run
    twice at once. Returns (closed articles walked past, entries released). Raises
    StoreCorrupt (links:closed malformed: check_votes --repair deletes it)."""
    conn = get_connection()
    cutoff = clock.now(now) - conf.window()
    walked = released = retried = 0
    while retried < scripts.ATTEMPTS and (limit is None or walked < limit):
        size = batch if limit is None else min(batch, limit - walked)
        due = scripts.LINK_CLOSE(
            keys=[keys.TIME, keys.LINKS_CLOSED], args=["due", repr(cutoff), size], client=conn
        )
        raise_for_status(due)
        rows = due[2:]  # member, link, time: the link as the bytes read, sent back as such
        if not rows:
            return walked, released
        call_keys: list[str] = [keys.TIME, keys.LINKS_CLOSED]
        args: list[Any] = ["close", due[1], f"{keys.text(rows[-1])} {keys.text(rows[-3])}"]
        for member, link in zip(rows[0::3], rows[1::3], strict=True):
            norm = validation.indexed_link(keys.text(link))
            bucket, field = keys.link_keys(norm, keys.LINKS_CLOSED)
            call_keys.append(bucket)
            args += [member, link, field]
        reply = scripts.LINK_CLOSE(keys=call_keys, args=args, client=conn)
        if raise_for_status(reply, allow=(Status.RETRY,)) is Status.RETRY:
            retried += 1
            continue
        walked, released, retried = walked + len(rows) // 3, released + int(reply[1]), 0
    if retried >= scripts.ATTEMPTS:
        raise Conflict()
    return walked, released


def archived_delete(article_id: int) -> None:
    """An archived article's rows, once delete.lua took its ranking entries: its comments
    leave the site's and their authors' lists and the inboxes they went to, and their
    votes their authors' comment_karma:<pk> (as article_purge.lua takes a deleted
    article's), COMMENT_BATCH a script call (archive_unlist.lua); then the rows go."""
    poster = ArchivedArticle.objects.filter(id=article_id).values_list("poster", flat=True)
    rows = list(
        ArchivedComment.objects.filter(article_id=article_id).values_list("id", "parent", "fields")
    )
    authors = {cid: str(fields.get("author", "")) for cid, _, fields in rows}
    owner_of_top = next(iter(poster), "")
    conn, args = get_connection(), []
    for cid, parent, fields in rows:
        visible = not fields.get("state")
        part = _int(fields.get("votes")) - _int(fields.get("downvotes")) if visible else 0
        owner = authors.get(parent, "") if parent else owner_of_top
        args.append([keys.comment(cid), authors[cid], part, owner])
    for at in range(0, len(args), COMMENT_BATCH):
        flat = [value for entry in args[at : at + COMMENT_BATCH] for value in entry]
        raise_for_status(scripts.ARCHIVE_UNLIST(keys=[keys.COMMENTS], args=flat, client=conn))
    with transaction.atomic():
        ArchivedArticle.objects.filter(id=article_id).delete()
    conn.srem(keys.ARCHIVE, keys.article(article_id))


def _fields(raw: dict[bytes, bytes]) -> dict[str, str]:
    """A hash as the row keeps it: text, with what no database text holds (a NUL, which
    PostgreSQL refuses; bytes that are not UTF-8) replaced, as the pages would show it."""
    return {
        keys.text(k).replace("\x00", "\ufffd"): keys.text(v).replace("\x00", "\ufffd")
        for k, v in raw.items()
    }


def _int(value: str | None) -> int:
    try:
        return int(float(value or 0))
    except ValueError:
        return 0


def _float(value: str | None, default: float) -> float:
    try:
        return float(value) if value else default
    except ValueError:
        return default
