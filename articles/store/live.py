"""The live events: the one home that reads the stream live: (keys.LIVE).

The write scripts append an event in the same step as their write (live_event in _lib.lua),
so a reader that resumes after an id misses none and sees none that did not happen. Every
value in the stream is a string; `decode` turns an entry into a LiveEvent and passes over
what it does not know (a newer writer's kind, a damaged entry) rather than failing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aredis
from redis.asyncio.sentinel import Sentinel as AsyncSentinel
from redis.sentinel import SentinelConnectionPool

from articles.store import keys
from articles.store.connection import get_connection

KINDS = frozenset({"vote", "post", "comment", "cvote", "inbox"})
# A stream id "ms-seq", or a bare "ms" (a page's render time); digits only, as Redis writes.
_ID = re.compile(r"([0-9]{1,20})(?:-([0-9]{1,20}))?")
_DIGITS = re.compile(r"[1-9][0-9]{0,17}")
_NUMBER = re.compile(r"-?[0-9]{1,18}")


@dataclass(frozen=True, slots=True)
class LiveEvent:
    """One event: `kind` says which other fields it has (the rest are None).
    vote: article, net; post: article; comment: article, comment, parent (None: top
    level); cvote: article, comment, net; inbox: user, unread (private to that user)."""

    id: str
    kind: str
    article: int | None = None
    comment: int | None = None
    parent: int | None = None
    net: int | None = None
    user: int | None = None
    unread: int | None = None


@dataclass(frozen=True, slots=True)
class Batch:
    """The events read, and the id of the last entry read (decoded or not; the cursor a
    reader goes on from), which is the id it started after when nothing was read."""

    events: list[LiveEvent]
    last_id: str


def decode(
    entry_id: bytes | str, fields: Mapping[bytes, bytes] | Mapping[str, str]
) -> LiveEvent | None:
    """The event of one stream entry, or None for an unknown kind or a malformed field."""
    f = {_text(k): _text(v) for k, v in fields.items()}
    kind, eid = f.get("e", ""), _text(entry_id)
    if kind not in KINDS:
        return None
    try:
        if kind == "inbox":
            unread = _int(f["n"], _NUMBER)
            return None if unread < 0 else LiveEvent(eid, kind, user=_int(f["u"]), unread=unread)
        article = _int(f["a"])
        if kind == "post":
            return LiveEvent(eid, kind, article=article)
        if kind == "vote":
            return LiveEvent(eid, kind, article=article, net=_int(f["n"], _NUMBER))
        comment = _int(f["c"])
        if kind == "cvote":
            return LiveEvent(eid, kind, article=article, comment=comment, net=_int(f["n"], _NUMBER))
        parent = _int(f["p"]) if f["p"] else None
        return LiveEvent(eid, kind, article=article, comment=comment, parent=parent)
    except (KeyError, ValueError):
        return None


def start_after(last_id: str) -> str:
    """XRANGE's start for the events after `last_id`: exclusive of an "ms-seq" id; a bare
    "ms" (a page's render time) starts at that millisecond, inclusive, since a write in the
    same millisecond may have come after the render (replays are harmless). Raises
    ValueError for anything else."""
    match = _ID.fullmatch(last_id)
    if not match:
        raise ValueError(f"not a stream id: {last_id!r}")
    return f"({last_id}" if match.group(2) is not None else last_id


# --- asyncio (the live endpoint's hub) ------------------------------------------------


async def aread(client: aredis.Redis, last_id: str, block_ms: int, count: int) -> Batch:
    """XREAD BLOCK: at most `count` events after `last_id` ("$": only those appended from
    now), waiting up to `block_ms` for the first (an empty Batch when none came)."""
    if last_id != "$":
        start_after(last_id)  # raises ValueError for anything but a stream id
    reply: Any = await client.xread(
        {keys.LIVE: last_id}, count=max(1, count), block=max(0, block_ms)
    )
    if isinstance(reply, dict):  # RESP3 answers {stream: entries}
        reply = list(reply.items())
    return _batch(reply[0][1] if reply else [], last_id)


async def anewest_id(client: aredis.Redis) -> str | None:
    return _first_id(await client.xrevrange(keys.LIVE, count=1))


# The connection settings an asyncio client takes over from the store's (sync) client;
# the rest (retries, pool internals) are the sync client's own.
_KEPT = frozenset(
    {
        "host",
        "port",
        "path",
        "db",
        "username",
        "password",
        "socket_connect_timeout",
        "socket_keepalive",
        "socket_keepalive_options",
        "client_name",
        "ssl_keyfile",
        "ssl_certfile",
        "ssl_cert_reqs",
        "ssl_ca_certs",
        "ssl_ca_data",
        "ssl_check_hostname",
    }
)


def async_client(*, block_ms: int = 0) -> aredis.Redis:
    """A new asyncio client to the store's server (its URL, django-redis alias or
    Sentinel primary), with the same address, credentials and connect timeout. Its read
    timeout outlasts an XREAD BLOCK of `block_ms` by 5 s, so a quiet stream is no error.
    One per process (the hub's); the caller closes it (aclose)."""
    pool = get_connection().connection_pool
    given = pool.connection_kwargs
    kwargs: dict[str, Any] = {k: v for k, v in given.items() if k in _KEPT}
    timeout = given.get("socket_timeout")
    kwargs["socket_timeout"] = max(float(timeout or 0), block_ms / 1000 + 5)
    if isinstance(pool, SentinelConnectionPool):
        manager = pool.sentinel_manager
        sentinels = [
            (
                s.connection_pool.connection_kwargs["host"],
                s.connection_pool.connection_kwargs["port"],
            )
            for s in manager.sentinels
        ]
        for k in ("host", "port", "path"):
            kwargs.pop(k, None)
        sentinel = AsyncSentinel(
            sentinels,
            min_other_sentinels=manager.min_other_sentinels,
            sentinel_kwargs=manager.sentinel_kwargs,
            **kwargs,
        )
        return sentinel.master_for(pool.service_name)
    if "path" in kwargs:
        kwargs["unix_socket_path"] = kwargs.pop("path")
    if issubclass(pool.connection_class, redis.SSLConnection):
        kwargs["ssl"] = True
    return aredis.Redis(**kwargs)


def _batch(entries: Any, last_id: str) -> Batch:
    events = [e for e in (decode(eid, fields) for eid, fields in entries) if e is not None]
    return Batch(events, _text(entries[-1][0]) if entries else last_id)


def _first_id(entries: Any) -> str | None:
    return _text(entries[0][0]) if entries else None


def _int(value: str, form: re.Pattern[str] = _DIGITS) -> int:
    if not form.fullmatch(value):
        raise ValueError(value)
    return int(value)


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


# --- resuming (the live endpoint) -------------------------------------------------------

StreamId = tuple[int, int]  # (ms, seq): stream ids in their order


def parse_id(text: str) -> StreamId | None:
    """A stream id "ms-seq" as (ms, seq), a bare "ms" as (ms, -1): before every id of that
    millisecond (as start_after reads it). None for anything else."""
    match = _ID.fullmatch(text)
    if match is None:
        return None
    seq = match.group(2)
    return int(match.group(1)), int(seq) if seq is not None else -1


@dataclass(frozen=True, slots=True)
class Replay:
    """The events after a resume point (at most `limit`), and whether the client must
    reload instead: events after the point were trimmed away, or more than the limit came."""

    events: list[LiveEvent]
    reload: bool


async def areplay(client: aredis.Redis, last_id: str, limit: int) -> Replay:
    """The events after `last_id` for a resuming stream, in one round trip (the stream's
    figures and its entries). Raises ValueError for a bad id."""
    position = parse_id(last_id)
    if position is None:
        raise ValueError(f"not a stream id: {last_id!r}")
    pipe = client.pipeline(transaction=False)
    pipe.xinfo_stream(keys.LIVE)
    pipe.xrange(keys.LIVE, min=start_after(last_id), count=max(1, limit) + 1)
    info, entries = await pipe.execute(raise_on_error=False)
    if isinstance(entries, Exception):
        raise entries
    events = _batch(entries[:limit], last_id).events
    # XINFO STREAM fails on a stream not yet written: then nothing was lost either
    lost = not isinstance(info, Exception) and _lost(info, position)
    return Replay(events, lost or len(entries) > limit)


def _lost(info: Any, position: StreamId) -> bool:
    """Were entries after `position` removed (XINFO STREAM's figures)? Trimming removes the
    oldest and leaves max-deleted-entry-id alone (only XDEL sets it): so it is when the
    stream was ever trimmed and `position` is older than its oldest kept entry (than its
    newest, if it was emptied)."""
    deleted = parse_id(_text(info.get("max-deleted-entry-id") or b"0-0")) or (0, 0)
    if deleted > position:
        return True
    added, length = info.get("entries-added"), info.get("length") or 0
    if added is not None and int(added) <= int(length):
        return False  # never trimmed (Redis 7's figures; older servers do not say)
    first = info.get("first-entry")
    oldest = first[0] if first else info.get("last-generated-id") or b"0-0"
    return (parse_id(_text(oldest)) or (0, 0)) > position
