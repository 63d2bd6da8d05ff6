"""The logical backup of the store: export_articles writes it, import_articles restores it."""

from __future__ import annotations

from collections.abc import Iterable

import redis
from redis.typing import EncodableT, FieldT

from articles import clock, keys, validation
from articles.audit import _indexed_article_ids, group_memberships
from articles.connection import get_connection
from articles.errors import Conflict, InvalidInput
from articles.services import _ATTEMPTS, _decode, _member_key

EXPORT_VERSION = 1


def store_is_empty() -> bool:
    """True when the store holds no article, no id counter and no group (import target)."""
    pipe = get_connection().pipeline(transaction=False)
    pipe.exists(keys.ARTICLE_IDS)
    pipe.zcard(keys.TIME)
    pipe.hlen(keys.GROUPS)
    pipe.scan(0, match=keys.ARTICLE_SCAN, count=100)
    counter, articles, groups, (_, found) = pipe.execute()
    return not (counter or articles or groups or found)


def store_export(*, now: float | None = None) -> Iterable[dict[str, object]]:
    """Every record of the store as JSON-ready dicts: a header, the group registry, each
    article with its vote state (up and down voter sets and their expiry), its indexes and
    groups, the link index, the daily stats, the moderation log and the id counter.

    Each article is read in one MULTI/EXEC, so its record is consistent (counts agree with
    its voter sets); the export as a whole is not a point-in-time snapshot of the store
    (writes made while it runs may or may not be in it; use the AOF for that).
    """
    conn = get_connection()
    exported_ms = int(clock.now(now) * 1000)
    yield {"type": "header", "version": EXPORT_VERSION, "exported_at_ms": exported_ms}
    for name, description in sorted(conn.hgetall(keys.GROUPS).items()):
        yield {"type": "group", "name": _x(name), "description": _x(description)}
    memberships = group_memberships()
    ids = _indexed_article_ids(conn)
    for article_id in sorted(ids):
        record = _article_record(conn, article_id, memberships.get(article_id, set()))
        if record is not None:
            yield record
    for norm, member in sorted(conn.hgetall(keys.LINKS).items()):
        yield {"type": "link", "link": _x(norm), "member": _x(member)}
    for key in (keys.STATS_POSTS, keys.STATS_VOTES):
        values = {_x(k): int(v) for k, v in conn.hgetall(key).items()}
        yield {"type": "stats", "key": key, "days": dict(sorted(values.items()))}
    yield {"type": "modlog", "entries": [_x(e) for e in conn.lrange(keys.MODLOG, 0, -1)]}
    # Read last: a post takes its id (INCR) before it writes its hash, so this is at least
    # every id above, and a restored store never hands out an id it already holds.
    yield {"type": "counter", "article_counter": int(conn.get(keys.ARTICLE_IDS) or 0)}


def _article_record(
    conn: redis.Redis, article_id: int, groups: set[str]
) -> dict[str, object] | None:
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    pipe = conn.pipeline(transaction=True)
    pipe.time()
    pipe.hgetall(member)
    pipe.zscore(keys.SCORE, member)
    pipe.zscore(keys.TIME, member)
    pipe.zscore(keys.GOOD, member)
    pipe.smembers(up)
    pipe.pttl(up)
    pipe.smembers(down)
    pipe.pttl(down)
    clock, raw, score, posted, good, ups, up_ttl, downs, down_ttl = pipe.execute()
    if not raw:
        return None  # deleted since the scan: its leftovers are the audit's business
    server_ms = clock[0] * 1000 + clock[1] // 1000
    poster = raw.get(b"poster", b"").decode("utf-8", "replace")
    poster_pk = _user_pk(poster)
    submitted_at = conn.zscore(keys.submitted(poster_pk), member) if poster_pk else None

    def expiry(ttl: int) -> int | None:
        return server_ms + ttl if ttl >= 0 else None

    return {
        "type": "article",
        "id": article_id,
        "hash": {_x(k): _x(v) for k, v in sorted(raw.items())},
        "score": score,
        "time": posted,
        "good": good,
        "submitted": submitted_at,
        "up": sorted(_x(m) for m in ups),
        "up_expire_at_ms": expiry(up_ttl),
        "down": sorted(_x(m) for m in downs),
        "down_expire_at_ms": expiry(down_ttl),
        "groups": sorted(groups),
    }


def _x(value: bytes | str) -> str:
    """Bytes to str for JSON; bytes that are not UTF-8 survive as surrogate escapes."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def store_import_record(*, record: dict[str, object]) -> str:
    """Write one record of `backup.store_export()` back; returns its type.

    An article is restored in one MULTI/EXEC (all of it or none of it), replacing any
    article with its id. Every key name is formed here from validated ids and group
    names, never taken from the file. Raises InvalidInput for a malformed record.
    """
    kind = record.get("type") if isinstance(record, dict) else None
    try:
        if kind == "header":
            if record.get("version") != EXPORT_VERSION:
                raise InvalidInput("version", f"Unknown export version {record.get('version')!r}.")
        elif kind == "counter":
            _import_counter(int(record["article_counter"]))  # type: ignore[call-overload]
        elif kind == "group":
            name = validation.clean_group_name(record["name"], "name")
            get_connection().hset(keys.GROUPS, name, str(record.get("description") or ""))
        elif kind == "article":
            _import_article(record)
        elif kind == "link":
            member = _member_key(str(record["member"]))
            if not member:
                raise InvalidInput("member", "A link must map to article:<id>.")
            get_connection().hset(keys.LINKS, _raw(record["link"]), member)
        elif kind == "stats":
            if record["key"] not in (keys.STATS_POSTS, keys.STATS_VOTES):
                raise InvalidInput("key", "Only stats:posts and stats:votes can be restored.")
            raw_days: dict[str, object] = dict(record["days"])  # type: ignore[call-overload]
            days: dict[FieldT, EncodableT] = {str(k): int(str(v)) for k, v in raw_days.items()}
            if days:
                get_connection().hset(str(record["key"]), mapping=days)
        elif kind == "modlog":
            entries = [_raw(e) for e in list(record["entries"])]  # type: ignore[call-overload]
            pipe = get_connection().pipeline(transaction=True)
            pipe.delete(keys.MODLOG)
            if entries:
                pipe.rpush(keys.MODLOG, *entries)
            pipe.execute()
        else:
            raise InvalidInput("type", f"Unknown record type {kind!r}.")
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput("record", f"Malformed {kind} record: {exc!r}") from None
    return str(kind)


def _import_counter(value: int) -> None:
    """The id counter never moves back: a new post must not reuse a restored id."""
    with get_connection().pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(keys.ARTICLE_IDS)
                current = int(pipe.get(keys.ARTICLE_IDS) or 0)
                pipe.multi()
                pipe.set(keys.ARTICLE_IDS, max(current, value))
                pipe.execute()
                return
            except redis.WatchError:
                continue
    raise Conflict()


def _count(value: bytes | None) -> int:
    """A count of the hash as written (absent is 0); a bad one counts 0 here and is
    reported by check_votes like any other."""
    try:
        return int(float(value or 0))
    except (ValueError, OverflowError):
        return 0


def _import_article(record: dict[str, object]) -> None:
    article_id = record["id"]
    if not isinstance(article_id, int):
        raise ValueError("id must be an integer")
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    raw_hash: dict[str, object] = dict(record["hash"])  # type: ignore[call-overload]
    decoded = {_raw(k): _raw(v) for k, v in raw_hash.items()}
    fields: dict[FieldT, EncodableT] = {k: v for k, v in decoded.items()}  # noqa: C416
    if not fields:
        raise ValueError("an article needs its hash")
    groups = validation.clean_group_names(list(record.get("groups") or []))  # type: ignore[call-overload]
    ups = [_raw(m) for m in _list(record.get("up"))]
    downs = [_raw(m) for m in _list(record.get("down"))]
    poster = decoded.get(b"poster", b"").decode("utf-8", "replace")
    conn = get_connection()
    with conn.pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(member)
                # Replacing an article: leave the groups it was in before.
                before = _decode(pipe.hget(member, "groups"))
                old = [g for g in before.split(",") if keys.GROUP_NAME.fullmatch(g)]
                pipe.multi()
                pipe.delete(member, up, down)
                for name in old:
                    pipe.srem(keys.group(name), member)
                pipe.hset(member, mapping=fields)
                for index, key in (("score", keys.SCORE), ("time", keys.TIME)):
                    if record.get(index) is not None:
                        pipe.zadd(key, {member: float(record[index])})  # type: ignore[arg-type]
                # votes: is derived from the counts, so backups made before it existed
                # restore into it too.
                net = _count(decoded.get(b"votes")) - _count(decoded.get(b"downvotes"))
                pipe.zadd(keys.VOTES, {member: net})
                if record.get("good") is not None:
                    pipe.zadd(keys.GOOD, {member: float(record["good"])})  # type: ignore[arg-type]
                else:
                    pipe.zrem(keys.GOOD, member)
                submitted = record.get("submitted")
                poster_pk = _user_pk(poster)
                if submitted is not None and poster_pk:
                    pipe.zadd(keys.submitted(poster_pk), {member: float(submitted)})  # type: ignore[arg-type]
                for key, members, expire in (
                    (up, ups, record.get("up_expire_at_ms")),
                    (down, downs, record.get("down_expire_at_ms")),
                ):
                    if members:
                        pipe.sadd(key, *members)
                        if expire is not None:
                            # Past expiry deletes the set, as Redis would have by now.
                            pipe.pexpireat(key, int(expire))  # type: ignore[call-overload]
                for name in set(old) | set(groups):
                    pipe.delete(keys.group_order(keys.SCORE, name))
                    pipe.delete(keys.group_order(keys.TIME, name))
                for name in groups:
                    pipe.sadd(keys.group(name), member)
                pipe.execute()
                return
            except redis.WatchError:
                continue
    raise Conflict()


def _list(value: object) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _user_pk(member: str) -> int | None:
    try:
        return keys.user_id_of(member)
    except ValueError:
        return None


def _raw(value: object) -> bytes:
    """The bytes a str of the export stands for (non-UTF-8 bytes came as surrogates)."""
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value.encode("utf-8", "surrogateescape")
