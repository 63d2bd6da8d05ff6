"""The logical backup of the store: export_articles writes it, import_articles restores it."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import redis
from redis.typing import EncodableT, FieldT

from articles import validation
from articles.errors import Conflict, InvalidInput
from articles.operations.audit.common import cid as _cid
from articles.operations.audit.common import index_types as _index_types
from articles.operations.audit.common import indexed_article_ids as _indexed_article_ids
from articles.operations.audit.common import scan_groups as _scan_groups
from articles.store import clock, keys, search
from articles.store.connection import get_connection
from articles.store.services import _member_key
from articles.types import CommentState, comment_best

EXPORT_VERSION = 1


class StoreNotEmpty(Exception):
    """import_articles without --force into a store that holds data."""


def store_is_empty() -> bool:
    """True when the store holds no article, no id counter and no group (import target)."""
    return _is_empty(get_connection())


def _is_empty(conn: redis.Redis | redis.client.Pipeline) -> bool:
    counter = conn.exists(keys.ARTICLE_IDS, keys.COMMENT_IDS)
    found = conn.scan(0, match=keys.ARTICLE_SCAN, count=100)[1]
    return not (counter or conn.exists(keys.TIME, keys.GROUPS) or found)


def store_export(
    *, now: float | None = None, skipped: Callable[[str], None] | None = None
) -> Iterable[dict[str, object]]:
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
    problems, broken = _index_types(conn)
    for problem in problems:
        report(f"{problem.detail}: not exported")
    if keys.GROUPS not in broken:
        for name, description in sorted(conn.hgetall(keys.GROUPS).items()):
            if not keys.GROUP_NAME.fullmatch(_x(name)):
                report(f"groups: registers {_x(name)!r}, not a group name: not exported")
                continue
            yield {"type": "group", "name": _x(name), "description": _x(description)}
    memberships, _, bad, wrong = _scan_groups(conn)
    for key in bad:
        report(f"group key {key!r} has no valid group name: not exported")
    for key, kind in wrong:
        report(f"{key} is a {kind}, not a set: not exported")
    ids = _indexed_article_ids(conn, broken)
    highest = 0
    exported: set[int] = set()
    for article_id in sorted(ids):
        try:
            record = _article_record(conn, article_id, memberships.get(article_id, set()), broken)
        except redis.ResponseError as exc:  # e.g. article:<id> or voted:<id> of another type
            report(f"article {article_id}: {exc}: not exported")
            continue
        if record is not None:
            highest = article_id
            exported.add(article_id)
            yield record
    highest_comment = 0
    for comment in _comment_records(conn, exported, report):
        highest_comment = max(highest_comment, int(str(comment["id"])))
        yield comment
    if keys.LINKS not in broken:
        for norm, member in sorted(conn.hgetall(keys.LINKS).items()):
            if not _member_key(_x(member)):
                report(f"links: maps {_x(norm)!r} to {_x(member)!r}, not an article: not exported")
                continue
            yield {"type": "link", "link": _x(norm), "member": _x(member)}
    for key in (keys.STATS_POSTS, keys.STATS_VOTES):
        try:
            raw = conn.hgetall(key)
        except redis.ResponseError as exc:
            report(f"{key}: {exc}: not exported")
            continue
        days: dict[str, int] = {}
        for day, count in raw.items():
            try:
                days[_x(day)] = int(count)
            except ValueError:
                report(f"{key} {_x(day)}: {_x(count)!r} is not a count: not exported")
        yield {"type": "stats", "key": key, "days": dict(sorted(days.items()))}
    try:
        entries = [_x(e) for e in conn.lrange(keys.MODLOG, 0, -1)]
    except redis.ResponseError as exc:
        report(f"{keys.MODLOG}: {exc}: not exported")
        entries = []
    yield {"type": "modlog", "entries": entries}
    # Read last: a post takes its id (INCR) before it writes its hash, so this is at least
    # every id above, and a restored store never hands out an id it already holds.
    try:
        counter = int(conn.get(keys.ARTICLE_IDS) or 0)
    except (ValueError, redis.ResponseError) as exc:
        report(f"{keys.ARTICLE_IDS} is not a count ({exc}): exported as the highest id")
        counter = 0
    try:
        comment_counter = int(conn.get(keys.COMMENT_IDS) or 0)
    except (ValueError, redis.ResponseError) as exc:
        report(f"{keys.COMMENT_IDS} is not a count ({exc}): exported as the highest id")
        comment_counter = 0
    yield {
        "type": "counter",
        "article_counter": max(counter, highest),
        "comment_counter": max(comment_counter, highest_comment),
    }


def _comment_records(
    conn: redis.Redis, articles: set[int], report: Callable[[str], None]
) -> Iterable[dict[str, object]]:
    """Each comment with its voter sets, in id order (a parent before its replies); one
    whose article or parent is not exported is left out and named (import would refuse
    it), and so, in turn, are its replies."""
    ids = sorted({i for k in conn.scan_iter(match=keys.COMMENT_SCAN, count=1000) if (i := _cid(k))})
    exported: dict[int, int] = {}  # comment id -> its article id
    for comment_id in ids:
        member = keys.comment(comment_id)
        up, down = keys.comment_voted(comment_id), keys.comment_voted_down(comment_id)
        pipe = conn.pipeline(transaction=True)
        pipe.time()
        pipe.hgetall(member)
        pipe.smembers(up)
        pipe.pttl(up)
        pipe.smembers(down)
        pipe.pttl(down)
        try:
            clock_now, raw, ups, up_ttl, downs, down_ttl = pipe.execute()
        except redis.ResponseError as exc:
            report(f"comment {comment_id}: {exc}: not exported")
            continue
        if not raw:
            continue
        fields = {_x(k): _x(v) for k, v in sorted(raw.items())}
        try:
            record = _comment({"id": comment_id, "hash": fields})
        except (InvalidInput, KeyError, TypeError, ValueError) as exc:
            report(f"comment {comment_id}: {exc}: not exported")
            continue
        article_id, parent = int(str(record["article_id"])), record["parent_id"]
        if article_id not in articles:
            report(f"comment {comment_id}: its article {article_id} is not exported")
            continue
        if parent is not None and exported.get(int(str(parent))) != article_id:
            report(f"comment {comment_id}: its parent {parent} is not exported with it")
            continue
        exported[comment_id] = article_id
        server_ms = clock_now[0] * 1000 + clock_now[1] // 1000
        yield {
            "type": "comment",
            "id": comment_id,
            "hash": fields,
            "up": sorted(_x(m) for m in ups),
            "up_expire_at_ms": server_ms + up_ttl if up_ttl >= 0 else None,
            "down": sorted(_x(m) for m in downs),
            "down_expire_at_ms": server_ms + down_ttl if down_ttl >= 0 else None,
        }


def _article_record(
    conn: redis.Redis, article_id: int, groups: set[str], broken: set[str]
) -> dict[str, object] | None:
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
    pipe.smembers(up)
    pipe.pttl(up)
    pipe.smembers(down)
    pipe.pttl(down)
    clock, raw, score, posted, good, ups, up_ttl, downs, down_ttl = pipe.execute()
    if not raw:
        return None  # deleted since the scan: its leftovers are the audit's business
    server_ms = clock[0] * 1000 + clock[1] // 1000
    poster = raw.get(b"poster", b"").decode("utf-8", "replace")
    poster_pk = keys.user_id_or_none(poster)
    submitted_at = conn.zscore(keys.submitted(poster_pk), member) if poster_pk else None

    def expiry(ttl: int) -> int | None:
        return server_ms + ttl if ttl >= 0 else None

    def finite(value: object) -> float | None:
        return value if isinstance(value, float) and math.isfinite(value) else None

    return {
        "type": "article",
        "id": article_id,
        "hash": {_x(k): _x(v) for k, v in sorted(raw.items())},
        "score": finite(score),
        "time": finite(posted),
        "good": finite(good),
        "submitted": finite(submitted_at),
        "up": sorted(_x(m) for m in ups),
        "up_expire_at_ms": expiry(up_ttl),
        "down": sorted(_x(m) for m in downs),
        "down_expire_at_ms": expiry(down_ttl),
        "groups": sorted(groups),
    }


def _x(value: bytes | str) -> str:
    """Bytes to str for JSON; bytes that are not UTF-8 survive as surrogate escapes."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


# --- import: the whole file is checked first, then written in one MULTI/EXEC -------------


@dataclass
class _Restore:
    """A backup file, validated: every key name formed from checked ids and names."""

    counter: int | None = None
    comment_counter: int = 0
    header: bool = False
    groups: dict[str, bytes] = field(default_factory=dict)
    articles: list[dict[str, object]] = field(default_factory=list)
    comments: list[dict[str, object]] = field(default_factory=list)
    links: dict[bytes, str] = field(default_factory=dict)
    stats: dict[str, dict[FieldT, EncodableT]] = field(default_factory=dict)
    modlog: list[bytes] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def store_restore(*, records: Iterable[tuple[int, object]], replace: bool) -> Counter[str]:
    """Restore a backup of `store_export()`, given as (line number, decoded record) pairs.

    All or nothing: the whole file is validated before anything is written (a malformed
    record, a file without its header or cut before its final counter record raises
    InvalidInput naming the line), then it is written in one MULTI/EXEC, the id counter
    first, so no post can take an id between the restore and its counter.

    Into an empty store, or with `replace`, which replaces the whole store database
    (FLUSHDB in the same transaction: the articles, links, submissions, moderation log,
    rate-limit and idempotency keys that were there are gone; afterwards the store holds
    exactly the backup). Raises StoreNotEmpty without `replace` into a store with data,
    Conflict if a write arrived while it was checked (nothing was written: run it again).
    """
    plan = _Restore()
    for number, record in records:
        try:
            _validate(plan, record)
        except InvalidInput as exc:
            raise InvalidInput(f"line {number}", f"line {number}: {exc.message}") from None
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            kind = record.get("type") if isinstance(record, dict) else None
            raise InvalidInput(
                f"line {number}", f"line {number}: malformed {kind} record: {exc!r}"
            ) from None
    if not plan.header:
        raise InvalidInput("header", "The file has no header record: not an export.")
    if plan.counter is None:
        raise InvalidInput(
            "counter", "The file ends before its counter record (the last one): truncated?"
        )
    highest = max((int(str(a["id"])) for a in plan.articles), default=0)
    counter = max(plan.counter, highest)
    _link_comments(plan)
    comment_counter = max([plan.comment_counter, *(int(str(c["id"])) for c in plan.comments)])
    with get_connection().pipeline(transaction=True) as pipe:
        try:
            # A post INCRs article: (a comment comment:) before anything else, and a group
            # create writes groups:.
            pipe.watch(keys.ARTICLE_IDS, keys.COMMENT_IDS, keys.TIME, keys.GROUPS)
            if not replace and not _is_empty(pipe):
                raise StoreNotEmpty()
            pipe.multi()
            if replace:
                pipe.flushdb()
            pipe.set(keys.ARTICLE_IDS, counter)
            pipe.set(keys.COMMENT_IDS, comment_counter)
            _write(pipe, plan)
            pipe.execute()
        except redis.WatchError:
            raise Conflict(
                "The store changed while the backup was checked; nothing was "
                "written. Run the import again."
            ) from None
    return plan.counts


def _validate(plan: _Restore, record: object) -> None:
    if not isinstance(record, dict):
        raise TypeError(f"a record is an object, not {type(record).__name__}")
    kind = record.get("type")
    if not plan.header and kind != "header":
        raise InvalidInput("type", "The first record must be the header.")
    if plan.counter is not None:
        raise InvalidInput("type", "Nothing may follow the counter record.")
    if kind == "header":
        if plan.header:
            raise InvalidInput("type", "A second header.")
        if record.get("version") != EXPORT_VERSION:
            raise InvalidInput("version", f"Unknown export version {record.get('version')!r}.")
        plan.header = True
    elif kind == "counter":
        plan.counter = _count(record["article_counter"])
        plan.comment_counter = _count(record.get("comment_counter", 0))
    elif kind == "comment":
        plan.comments.append(_comment(record))
    elif kind == "group":
        name = validation.clean_group_name(record["name"], "name")
        plan.groups[name] = _raw(record.get("description") or "")
    elif kind == "article":
        plan.articles.append(_article(record))
    elif kind == "link":
        member = _member_key(str(record["member"]))
        if not member:
            raise InvalidInput("member", "A link must map to article:<id>.")
        plan.links[_raw(record["link"])] = member
    elif kind == "stats":
        if record["key"] not in (keys.STATS_POSTS, keys.STATS_VOTES):
            raise InvalidInput("key", "Only stats:posts and stats:votes can be restored.")
        raw_days: dict[str, object] = dict(record["days"])
        plan.stats[str(record["key"])] = {_text(k): _count(v) for k, v in raw_days.items()}
    elif kind == "modlog":
        plan.modlog = [_raw(e) for e in _list(record["entries"])]
    else:
        raise InvalidInput("type", f"Unknown record type {kind!r}.")
    plan.counts[str(kind)] += 1


def _article(record: dict[str, object]) -> dict[str, object]:
    article_id = record["id"]
    keys.article(article_id)  # type: ignore[arg-type]  # ValueError unless a positive int
    raw_hash = record["hash"]
    if not isinstance(raw_hash, dict) or not raw_hash:
        raise ValueError("an article needs its hash")
    fields = {_raw(k): _raw(v) for k, v in raw_hash.items()}
    out: dict[str, object] = {"id": article_id, "hash": fields}
    for name in ("score", "time", "good", "submitted"):
        out[name] = _time(record.get(name))
    out["groups"] = sorted(
        {validation.clean_group_name(g, "groups") for g in _list(record.get("groups"))}
    )
    for name in ("up", "down"):
        out[name] = [_raw(m) for m in _list(record.get(name))]
        expire = record.get(f"{name}_expire_at_ms")
        out[f"{name}_expire_at_ms"] = None if expire is None else _count(expire)
    out["poster_pk"] = keys.user_id_or_none(fields.get(b"poster", b"").decode("utf-8", "replace"))
    # The search index is not exported: each article is indexed by the restoring
    # transaction, from its own title, text and link.
    words = search.article_words(
        *(fields.get(f, b"").decode("utf-8", "replace") for f in (b"title", b"text", b"link"))
    )
    fields[b"words"] = " ".join(words).encode()
    out["words"] = words
    return out


_COMMENT_STATES = (CommentState.VISIBLE, CommentState.DELETED, CommentState.REMOVED)


def _comment(record: dict[str, object]) -> dict[str, object]:
    """A comment record, checked: its id, article, parent, time, state and counts."""
    comment_id = record["id"]
    keys.comment(comment_id)  # type: ignore[arg-type]  # ValueError unless a positive int
    raw_hash = record["hash"]
    if not isinstance(raw_hash, dict) or not raw_hash:
        raise ValueError("a comment needs its hash")
    fields = {_text(k): _text(v) for k, v in raw_hash.items()}
    try:
        article_id = keys.article_id_of(fields.get("article", ""))
    except ValueError:
        raise InvalidInput("article", "A comment's article must be article:<id>.") from None
    parent = fields.get("parent", "")
    try:
        parent_id = keys.comment_id_of(parent) if parent else None
    except ValueError:
        raise InvalidInput("parent", "A comment's parent must be comment:<id> or empty.") from None
    if parent_id is not None and parent_id >= int(str(comment_id)):
        raise InvalidInput("parent", "A comment's parent comes before it.")
    posted = _time(float(fields.get("time", "")))
    if posted is None or posted < 0:
        raise InvalidInput("time", "A comment needs its time.")
    if fields.get("state", "") not in _COMMENT_STATES:
        raise InvalidInput("state", f"A comment's state is one of {_COMMENT_STATES}.")
    counts = {name: _count(int(fields.get(name, "0"))) for name in ("votes", "downvotes", "depth")}
    out: dict[str, object] = {
        "id": comment_id,
        "hash": {k.encode("utf-8", "surrogateescape"): _raw(v) for k, v in fields.items()},
        "article_id": article_id,
        "parent_id": parent_id,
        "time": posted,
        "visible": fields.get("state", "") == CommentState.VISIBLE,
        "author_pk": keys.user_id_or_none(fields.get("author", "")),
        **counts,
    }
    for name in ("up", "down"):
        out[name] = [_raw(m) for m in _list(record.get(name))]
        expire = record.get(f"{name}_expire_at_ms")
        out[f"{name}_expire_at_ms"] = None if expire is None else _count(expire)
    return out


def _link_comments(plan: _Restore) -> None:
    """Check the comments against each other and their articles (each article in the
    file, each parent a comment of the same article in the file, depth its parent's + 1)
    and set the counts the restore derives: each comment's `replies`, each article's
    `comments` (its visible comments)."""
    articles = {int(str(a["id"])): a for a in plan.articles}
    comments: dict[int, dict[str, object]] = {}
    replies: Counter[int] = Counter()
    visible: Counter[int] = Counter()
    for c in sorted(plan.comments, key=lambda c: int(str(c["id"]))):
        comment_id, article_id = int(str(c["id"])), int(str(c["article_id"]))
        if comment_id in comments:
            raise InvalidInput("comment", f"comment {comment_id}: twice in the file.")
        if article_id not in articles:
            raise InvalidInput("comment", f"comment {comment_id}: its article is not in the file.")
        parent = comments.get(int(str(c["parent_id"]))) if c["parent_id"] is not None else None
        if c["parent_id"] is not None:
            if parent is None or parent["article_id"] != article_id:
                raise InvalidInput(
                    "comment", f"comment {comment_id}: its parent is not a comment of its article."
                )
            replies[int(str(c["parent_id"]))] += 1
        depth = int(str(parent["depth"])) + 1 if parent is not None else 0
        if c["depth"] != depth:
            raise InvalidInput("comment", f"comment {comment_id}: depth is not its parent's + 1.")
        comments[comment_id] = c
        visible[article_id] += bool(c["visible"])
    for comment_id, c in comments.items():
        c["hash"][b"replies"] = str(replies[comment_id]).encode()  # type: ignore[index]
    for article_id, a in articles.items():
        fields: dict[bytes, bytes] = a["hash"]  # type: ignore[assignment]
        if visible[article_id] or b"comments" in fields:
            fields[b"comments"] = str(visible[article_id]).encode()
    plan.comments = [comments[i] for i in sorted(comments)]


def _write_comments(pipe: redis.client.Pipeline, plan: _Restore) -> None:
    for c in plan.comments:
        comment_id, article_id = int(str(c["id"])), int(str(c["article_id"]))
        member = keys.comment(comment_id)
        up, down = keys.comment_voted(comment_id), keys.comment_voted_down(comment_id)
        pipe.delete(member, up, down)
        pipe.hset(member, mapping=c["hash"])  # type: ignore[arg-type]
        parent_id = c["parent_id"]
        if parent_id is None:
            best = keys.article_comments(article_id)
            new = keys.article_comments_new(article_id)
        else:
            best, new = keys.replies(int(str(parent_id))), keys.replies_new(int(str(parent_id)))
        votes, downvotes = int(str(c["votes"])), int(str(c["downvotes"]))
        pipe.zadd(best, {member: comment_best(comment_id, votes, downvotes)})
        pipe.zadd(new, {member: comment_id})
        posted: float = c["time"]  # type: ignore[assignment]
        pipe.zadd(keys.article_comments_all(article_id), {member: posted})
        if c["visible"]:
            pipe.zadd(keys.COMMENTS, {member: posted})
            if c["author_pk"]:
                pipe.zadd(keys.user_comments(int(str(c["author_pk"]))), {member: posted})
        for key, name in ((up, "up"), (down, "down")):
            members: list[bytes] = c[name]  # type: ignore[assignment]
            if members:
                pipe.sadd(key, *members)
                expire = c[f"{name}_expire_at_ms"]
                if expire is not None:
                    pipe.pexpireat(key, expire)  # type: ignore[arg-type]


def _write(pipe: redis.client.Pipeline, plan: _Restore) -> None:
    if plan.groups:
        pipe.hset(keys.GROUPS, mapping=dict(plan.groups.items()))
    for a in plan.articles:
        article_id = int(str(a["id"]))
        member = keys.article(article_id)
        up, down = keys.voted(article_id), keys.voted_down(article_id)
        pipe.delete(member, up, down)
        pipe.hset(member, mapping=a["hash"])  # type: ignore[arg-type]
        for word in a["words"]:  # type: ignore[attr-defined]
            pipe.sadd(keys.idx(word), member)
        # votes: is derived from the counts, so backups made before it existed restore
        # into it too.
        fields: dict[bytes, bytes] = a["hash"]  # type: ignore[assignment]
        net = _hash_count(fields.get(b"votes")) - _hash_count(fields.get(b"downvotes"))
        pipe.zadd(keys.VOTES, {member: net})
        for name, index in (("score", keys.SCORE), ("time", keys.TIME), ("good", keys.GOOD)):
            if a[name] is not None:
                pipe.zadd(index, {member: a[name]})  # type: ignore[dict-item]
        if a["submitted"] is not None and a["poster_pk"]:
            pipe.zadd(keys.submitted(a["poster_pk"]), {member: a["submitted"]})  # type: ignore[arg-type, dict-item]
        for key, name in ((up, "up"), (down, "down")):
            members: list[bytes] = a[name]  # type: ignore[assignment]
            if members:
                pipe.sadd(key, *members)
                expire = a[f"{name}_expire_at_ms"]
                if expire is not None:
                    # Past expiry deletes the set, as Redis would have by now.
                    pipe.pexpireat(key, expire)  # type: ignore[arg-type]
        for name in a["groups"]:  # type: ignore[attr-defined]
            pipe.sadd(keys.group(name), member)
    _write_comments(pipe, plan)
    for name in plan.groups:
        pipe.delete(keys.group_order(keys.SCORE, name), keys.group_order(keys.TIME, name))
    if plan.links:
        pipe.hset(keys.LINKS, mapping=dict(plan.links.items()))
    for key, days in plan.stats.items():
        if days:
            pipe.hset(key, mapping=days)
    pipe.delete(keys.MODLOG)
    if plan.modlog:
        pipe.rpush(keys.MODLOG, *plan.modlog)


def _hash_count(value: bytes | None) -> int:
    """A count of the hash as written (absent is 0); a bad one counts 0 here and is
    reported by check_votes like any other."""
    try:
        return int(float(value or 0))
    except (ValueError, OverflowError):
        return 0


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"not a count: {value!r}")
    return value


def _time(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"not a finite number: {value!r}")
    return float(value)


def _list(value: object) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value


def _raw(value: object) -> bytes:
    """The bytes a str of the export stands for (non-UTF-8 bytes came as surrogates)."""
    return _text(value).encode("utf-8", "surrogateescape")
