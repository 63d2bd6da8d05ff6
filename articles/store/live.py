"""The live events: the stream `live:` the write scripts append to (issue 25), read here and
nowhere else. One decoder (decode) for every reader: the live endpoint's hub (aread, XREAD
BLOCK on one connection), a resuming client's replay (aevents_after) and the sync readers
(events_after)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aredis

from articles import conf
from articles.store import keys
from articles.store.connection import get_connection

KINDS = frozenset({"vote", "post", "comment", "cvote", "inbox"})
ID_PATTERN = re.compile(r"^([0-9]{1,15})(?:-([0-9]{1,19}))?$")

StreamId = tuple[int, int]  # (ms, seq): stream ids in their order


@dataclass(frozen=True, slots=True)
class LiveEvent:
    """One entry of `live:`: its stream id, kind (`e`) and fields, every value a string as
    written (`a` article, `n` net or unread, `c` comment, `p` parent or "", `u` user)."""

    id: str
    kind: str
    fields: dict[str, str]

    @property
    def order(self) -> StreamId:
        return parse_id(self.id) or (0, 0)


def parse_id(text: str) -> StreamId | None:
    """A stream id "ms-seq" as (ms, seq); a bare "ms" as (ms, -1): before every id of that
    millisecond. None for anything else."""
    found = ID_PATTERN.match(text)
    if found is None:
        return None
    seq = found.group(2)
    return int(found.group(1)), int(seq) if seq is not None else -1


def after(position: StreamId) -> str:
    """The XRANGE start of the entries after `position`."""
    ms, seq = position
    return f"{ms}-0" if seq < 0 else f"({ms}-{seq}"


def decode(entry_id: bytes | str, fields: dict[Any, Any]) -> LiveEvent | None:
    """An entry as a LiveEvent, or None for one of no known kind (a newer writer's)."""
    text = {_text(k): _text(v) for k, v in fields.items()}
    kind = text.pop("e", "")
    if kind not in KINDS:
        return None
    return LiveEvent(_text(entry_id), kind, text)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True, slots=True)
class Replay:
    """The events after a resume point (at most `limit`), and whether the client must reload:
    entries after the point were trimmed away, or there were more than the limit."""

    events: list[LiveEvent]
    reload: bool


def _replay(info: Any, entries: list[Any], position: StreamId, limit: int) -> Replay:
    trimmed = False
    if isinstance(info, dict):
        deleted = parse_id(_text(info.get("max-deleted-entry-id") or b"0-0")) or (0, 0)
        trimmed = deleted > position
    events = [e for e in (decode(i, f) for i, f in entries[:limit]) if e is not None]
    return Replay(events, trimmed or len(entries) > limit)


def events_after(position: StreamId, limit: int) -> Replay:
    """The events after `position`, in one round trip (sync)."""
    pipe = get_connection().pipeline(transaction=False)
    pipe.xinfo_stream(keys.LIVE)
    pipe.xrange(keys.LIVE, min=after(position), count=limit + 1)
    info, entries = pipe.execute(raise_on_error=False)
    if isinstance(entries, Exception):
        raise entries
    return _replay(None if isinstance(info, Exception) else info, entries, position, limit)


async def aevents_after(client: aredis.Redis, position: StreamId, limit: int) -> Replay:
    """The events after `position`, in one round trip on an asyncio client."""
    pipe = client.pipeline(transaction=False)
    pipe.xinfo_stream(keys.LIVE)
    pipe.xrange(keys.LIVE, min=after(position), count=limit + 1)
    info, entries = await pipe.execute(raise_on_error=False)
    if isinstance(entries, Exception):
        raise entries
    # XINFO STREAM errors on a stream that does not exist yet: nothing was trimmed
    return _replay(None if isinstance(info, Exception) else info, entries, position, limit)


async def alast_id(client: aredis.Redis) -> str:
    """The newest entry's id ("0-0" for an empty stream): where a new reader starts."""
    newest: Any = await client.xrevrange(keys.LIVE, count=1)
    return _text(newest[0][0]) if newest else "0-0"


async def aread(
    client: aredis.Redis, last_id: str, *, block_ms: int, count: int
) -> list[LiveEvent | tuple[str, None]]:
    """XREAD BLOCK: the entries after `last_id`, waiting up to block_ms for one. An entry
    of no known kind comes as (id, None), so the reader still moves past it."""
    found: Any = await client.xread({keys.LIVE: last_id}, count=count, block=block_ms)
    read: list[LiveEvent | tuple[str, None]] = []
    for _stream, entries in found or ():
        for entry_id, fields in entries:
            event = decode(entry_id, fields)
            read.append(event if event is not None else (_text(entry_id), None))
    return read


_OPTIONS = ("socket_connect_timeout", "health_check_interval", "max_connections")


def aclient(*, name: str, socket_timeout: float | None, max_connections: int = 1) -> aredis.Redis:
    """An asyncio client of the store's Redis (ARTICLES_REDIS_URL or the alias's server),
    bound to the running loop: a reader of the live endpoint, named for CLIENT LIST."""
    options = {k: v for k, v in conf.redis_options().items() if k in _OPTIONS}
    options.update(socket_timeout=socket_timeout, client_name=name)
    options["max_connections"] = max_connections
    url = conf.redis_url() if not conf.redis_alias() else None
    if url:
        pool = aredis.BlockingConnectionPool.from_url(url, timeout=2, **options)
        return aredis.Redis(connection_pool=pool)
    # A django-redis alias: the same server as its sync client's pool.
    kwargs = get_connection().connection_pool.connection_kwargs
    wanted = ("host", "port", "path", "db", "username", "password")
    given = {k: kwargs[k] for k in wanted if k in kwargs}
    if "path" in given:
        given["connection_class"] = aredis.UnixDomainSocketConnection
    pool = aredis.BlockingConnectionPool(timeout=2, **given, **options)
    return aredis.Redis(connection_pool=pool)


UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, OSError)
