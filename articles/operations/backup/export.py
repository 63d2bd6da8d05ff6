"""export_articles: every record of the store, as JSON-ready dicts."""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

import redis

from articles import conf
from articles.errors import InvalidInput
from articles.operations.audit.common import (
    cid,
    index_types,
    indexed_article_ids,
    normalized,
    scan_groups,
)
from articles.operations.backup.records import (
    EXPORT_VERSION,
    CommentRecord,
    as_text,
    comment_record,
    raw,
)
from articles.store import clock, keys
from articles.store.connection import get_connection

Record = dict[str, object]
Report = Callable[[str], None]


def store_export(*, now: float | None = None, skipped: Report | None = None) -> Iterable[Record]:
    """Every record of the store as JSON-ready dicts: a header, the group registry, each
    article with its vote state (up and down voter sets and their expiry), its indexes and
    groups, each comment with its voter sets (its orderings and lists are derived from the
    hashes on import), the link index, the daily stats, the moderation log and the id
    counters (last: a file without them is incomplete, and import refuses it).

    Each article is read in one MULTI/EXEC, so its record is consistent (counts agree with
    its voter sets); the export as a whole is not a point-in-time snapshot of the store
    (writes made while it runs may or may not be in it; use the AOF for that).

    What import would refuse or cannot be read (a group name that is not a slug, an index
    or article of the wrong type, a counter that is not a count) is left out and named to
    `skipped`, so every file export writes can be restored.
    """
    report = skipped or (lambda _: None)
    conn = get_connection()
    exported_ms = int(clock.now(now) * 1000)
    yield {"type": "header", "version": EXPORT_VERSION, "exported_at_ms": exported_ms}
    problems, broken = index_types(conn)
    for problem in problems:
        report(f"{problem.detail}: not exported")
    if keys.GROUPS not in broken:
        yield from _group_records(conn, report)
    memberships = _memberships(conn, report)
    ids = indexed_article_ids(conn, broken)
    exported = yield from _article_records(conn, sorted(ids), memberships, broken, report)
    highest_comment = yield from _comment_records(conn, exported, report)
    yield from _link_records(conn, report)
    yield from _stats_records(conn, report)
    yield _modlog_record(conn, report)
    # Read last: a post takes its id (INCR) before it writes its hash, so this is at least
    # every id above, and a restored store never hands out an id it already holds.
    yield {
        "type": "counter",
        "article_counter": max(_counter(conn, keys.ARTICLE_IDS, report), max(exported, default=0)),
        "comment_counter": max(_counter(conn, keys.COMMENT_IDS, report), highest_comment),
    }


def _group_records(conn: redis.Redis, report: Report) -> Iterator[Record]:
    for name, description in sorted(conn.hgetall(keys.GROUPS).items()):
        if not keys.GROUP_NAME.fullmatch(as_text(name)):
            report(f"groups: registers {as_text(name)!r}, not a group name: not exported")
            continue
        yield {"type": "group", "name": as_text(name), "description": as_text(description)}


def _memberships(conn: redis.Redis, report: Report) -> dict[int, set[str]]:
    memberships, _, bad, wrong = scan_groups(conn)
    for key in bad:
        report(f"group key {key!r} has no valid group name: not exported")
    for key, kind in wrong:
        report(f"{key} is a {kind}, not a set: not exported")
    return memberships


def _article_records(
    conn: redis.Redis,
    ids: list[int],
    memberships: dict[int, set[str]],
    broken: set[str],
    report: Report,
) -> Generator[Record, None, set[int]]:
    """Each article's record, in id order; returns the ids exported. An archived one
    (store/archive.py) is exported with its row as its hash: an import puts it back in
    Redis, and the next `manage.py archive` archives it again."""
    exported: set[int] = set()
    archived: dict[int, dict[bytes, bytes]] = {}
    for at, article_id in enumerate(ids):
        if at % _ROWS == 0:
            archived = _archived_rows("article", ids[at : at + _ROWS])
        try:
            record = _article(
                conn,
                article_id,
                memberships.get(article_id, set()),
                broken,
                archived.get(article_id, {}),
            )
        except redis.ResponseError as exc:  # e.g. article:<id> or voted:<id> of another type
            report(f"article {article_id}: {exc}: not exported")
            continue
        if record is not None:
            exported.add(article_id)
            yield record
    return exported


def _article(
    conn: redis.Redis,
    article_id: int,
    groups: set[str],
    broken: set[str],
    archived: dict[bytes, bytes],
) -> Record | None:
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    pipe = conn.pipeline(transaction=True)
    pipe.time()
    pipe.hgetall(member)
    for index in (keys.SCORE, keys.TIME, keys.GOOD):
        if index in broken:
            pipe.echo(b"")  # keeps the reply's shape; the index was reported already
        else:
            pipe.zscore(index, member)
    _voter_reads(pipe, up, down)
    server_time, raw, score, posted, good, *voters = pipe.execute()
    raw = raw or archived
    if not raw:
        return None  # deleted since the scan: its leftovers are the audit's business
    poster_pk = keys.user_id_or_none(raw.get(b"poster", b"").decode("utf-8", "replace"))
    submitted_at = conn.zscore(keys.submitted(poster_pk), member) if poster_pk else None
    return {
        "type": "article",
        "id": article_id,
        "hash": {as_text(k): as_text(v) for k, v in sorted(raw.items())},
        "score": _finite(score),
        "time": _finite(posted),
        "good": _finite(good),
        "submitted": _finite(submitted_at),
        **_voters(server_time, *voters),
        "groups": sorted(groups),
    }


def _voter_reads(pipe: redis.client.Pipeline, up: str, down: str) -> None:
    """Queue the reads of an item's voter sets, as _voters takes their replies."""
    pipe.smembers(up)
    pipe.pttl(up)
    pipe.smembers(down)
    pipe.pttl(down)


def _voters(
    server_time: Any, ups: set[bytes], up_ttl: int, downs: set[bytes], down_ttl: int
) -> Record:
    """The voter sets and their expiry (Unix ms by the server's clock, None: never)."""
    server_ms = server_time[0] * 1000 + server_time[1] // 1000
    return {
        "up": sorted(as_text(m) for m in ups),
        "up_expire_at_ms": server_ms + up_ttl if up_ttl >= 0 else None,
        "down": sorted(as_text(m) for m in downs),
        "down_expire_at_ms": server_ms + down_ttl if down_ttl >= 0 else None,
    }


def _finite(value: object) -> float | None:
    return value if isinstance(value, float) and math.isfinite(value) else None


def _comment_records(
    conn: redis.Redis, articles: set[int], report: Report
) -> Generator[Record, None, int]:
    """Each comment with its voter sets, in id order (a parent before its replies); one
    whose article or parent is not exported is left out and named (import would refuse
    it), and so, in turn, are its replies. Returns the highest id exported (0: none)."""
    found = {i for k in conn.scan_iter(match=keys.COMMENT_SCAN, count=1000) if (i := cid(k))}
    ids = sorted(found | _archived_comment_ids(articles))
    exported: dict[int, int] = {}  # comment id -> its article id
    archived: dict[int, dict[bytes, bytes]] = {}
    for at, comment_id in enumerate(ids):
        if at % _ROWS == 0:
            archived = _archived_rows("comment", ids[at : at + _ROWS])
        read = _comment(conn, comment_id, report, archived.get(comment_id, {}))
        if read is not None and _exportable(read[1], articles, exported, report):
            exported[comment_id] = read[1].article_id
            yield read[0]
    return max(exported, default=0)


def _comment(
    conn: redis.Redis, comment_id: int, report: Report, archived: dict[bytes, bytes]
) -> tuple[Record, CommentRecord] | None:
    """A comment's record, read in one MULTI/EXEC, and its fields as import checks them;
    None if it is gone or import would refuse it (named to `report`)."""
    pipe = conn.pipeline(transaction=True)
    pipe.time()
    pipe.hgetall(keys.comment(comment_id))
    _voter_reads(pipe, keys.comment_voted(comment_id), keys.comment_voted_down(comment_id))
    try:
        server_time, raw, *voters = pipe.execute()
    except redis.ResponseError as exc:
        report(f"comment {comment_id}: {exc}: not exported")
        return None
    raw = raw or archived
    if not raw:
        return None
    fields = {as_text(k): as_text(v) for k, v in sorted(raw.items())}
    try:
        checked = comment_record({"id": comment_id, "hash": fields})
    except (InvalidInput, KeyError, TypeError, ValueError) as exc:
        report(f"comment {comment_id}: {exc}: not exported")
        return None
    record = {"type": "comment", "id": comment_id, "hash": fields, **_voters(server_time, *voters)}
    return record, checked


# Archived rows read a query at a time (archiving on only: off, the database is not read).
_ROWS = 500


def _archived_rows(kind: str, ids: list[int]) -> dict[int, dict[bytes, bytes]]:
    """The archived articles' or comments' rows among `ids`, as the hashes they were."""
    if conf.archive_after() is None or not ids:
        return {}
    from articles.models import ArchivedArticle, ArchivedComment

    model = ArchivedArticle if kind == "article" else ArchivedComment
    rows = model.objects.filter(id__in=ids).values_list("id", "fields")
    return {i: {k.encode(): str(v).encode() for k, v in f.items()} for i, f in rows}


def _archived_comment_ids(articles: set[int]) -> set[int]:
    """The archived comments of the exported articles (their hashes left Redis)."""
    if conf.archive_after() is None or not articles:
        return set()
    from articles.models import ArchivedComment

    found: set[int] = set()
    listed = sorted(articles)
    for at in range(0, len(listed), _ROWS):
        chunk = listed[at : at + _ROWS]
        found.update(
            ArchivedComment.objects.filter(article_id__in=chunk).values_list("id", flat=True)
        )
    return found


def _exportable(
    comment: CommentRecord, articles: set[int], exported: dict[int, int], report: Report
) -> bool:
    """Whether the comment's article and parent are exported (its parent with it)."""
    if comment.article_id not in articles:
        report(f"comment {comment.id}: its article {comment.article_id} is not exported")
        return False
    parent = comment.parent_id
    if parent is not None and exported.get(parent) != comment.article_id:
        report(f"comment {comment.id}: its parent {parent} is not exported with it")
        return False
    return True


def _link_records(conn: redis.Redis, report: Report) -> Iterator[Record]:
    """The link index as {link, member} records: links:<b> keeps a digest of each link, so
    the link is the normalised one of the article its entry names (an entry whose article
    no longer links there is stale: check_votes reports it; not exported)."""
    for raw_key in sorted(conn.scan_iter(match=keys.LINK_INDEX_SCAN, count=1000)):
        bucket = as_text(raw_key)
        if conn.type(bucket) != b"hash":
            report(f"{bucket} is not a hash: not exported")
            continue
        entries = sorted((raw(as_text(k)), as_text(v)) for k, v in conn.hgetall(bucket).items())
        pipe = conn.pipeline(transaction=False)
        for _, held in entries:
            pipe.hget(keys.link_holder(held), "link")
        for (slot, held), link in zip(entries, pipe.execute(raise_on_error=False), strict=True):
            member = keys.link_holder(held)
            norm = "" if isinstance(link, redis.ResponseError) else normalized(as_text(link or b""))
            if not keys.member_key(member) or not norm or keys.link_slot(norm) != (bucket, slot):
                report(f"{bucket} maps {slot.hex()} to {member!r}, which does not link there")
                continue
            yield {"type": "link", "link": norm, "member": member}


def _stats_records(conn: redis.Redis, report: Report) -> Iterator[Record]:
    for key in (keys.STATS_POSTS, keys.STATS_VOTES):
        try:
            raw = conn.hgetall(key)
        except redis.ResponseError as exc:
            report(f"{key}: {exc}: not exported")
            continue
        days: dict[str, int] = {}
        for day, count in raw.items():
            try:
                days[as_text(day)] = int(count)
            except ValueError:
                report(f"{key} {as_text(day)}: {as_text(count)!r} is not a count: not exported")
        yield {"type": "stats", "key": key, "days": dict(sorted(days.items()))}


def _modlog_record(conn: redis.Redis, report: Report) -> Record:
    try:
        entries = [as_text(e) for e in conn.lrange(keys.MODLOG, 0, -1)]
    except redis.ResponseError as exc:
        report(f"{keys.MODLOG}: {exc}: not exported")
        entries = []
    return {"type": "modlog", "entries": entries}


def _counter(conn: redis.Redis, key: str, report: Report) -> int:
    """An id counter; one that is not a count is exported as the highest id (0 here)."""
    try:
        return int(conn.get(key) or 0)
    except (ValueError, redis.ResponseError) as exc:
        report(f"{key} is not a count ({exc}): exported as the highest id")
        return 0
