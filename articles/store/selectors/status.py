"""The store's own state: daily stats, counts, topology and health."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta

import redis

from articles.operations.embedded import compact_encodings
from articles.store import clock, keys
from articles.store.connection import get_connection, store_unavailable
from articles.store.selectors._common import _count, _execute

logger = logging.getLogger("articles.store.selectors")  # the package's one logger


def stats_daily(*, days: int = 30, now: float | None = None) -> list[tuple[date, int, int]]:
    """(day, articles posted, votes cast) for each of the last `days` UTC days, oldest first."""
    today = datetime.fromtimestamp(clock.now(now), tz=UTC).date()
    span = [today - timedelta(days=n) for n in range(days - 1, -1, -1)]
    fields = [d.isoformat() for d in span]
    pipe = get_connection().pipeline(transaction=False)
    pipe.hmget(keys.STATS_POSTS, fields)
    pipe.hmget(keys.STATS_VOTES, fields)
    posts, votes = _execute(pipe)
    return [
        (d, _count(keys.STATS_POSTS, d, p), _count(keys.STATS_VOTES, d, v))
        for d, p, v in zip(span, posts, votes, strict=True)
    ]


def store_status() -> dict[str, object]:
    """What /healthz and the start-up checks report about the Redis server."""
    conn = get_connection()
    info = conn.info()
    return {
        "redis_version": info.get("redis_version"),
        "aof_enabled": bool(int(info.get("aof_enabled", 0))),
        "maxmemory_policy": info.get("maxmemory_policy"),
        "cluster_enabled": bool(int(info.get("cluster_enabled", 0))),
        "used_memory": info.get("used_memory"),
        "maxmemory": info.get("maxmemory"),
        "articles": _article_count(conn),
    }


def store_encodings(version: str | None) -> dict[str, int] | None:
    """The server's values of the encoding limits the store is laid out for on a server of
    `version` (embedded.compact_encodings), in one round trip; None where CONFIG is refused
    (a managed Redis may rename it). For the system checks, not /healthz."""
    conn = get_connection()
    names = list(compact_encodings(version))
    pipe = conn.pipeline(transaction=False)
    for name in names:
        pipe.config_get(name)
    try:
        replies = pipe.execute()
    except redis.ResponseError:
        return None
    found = {}
    for name, reply in zip(names, replies, strict=True):
        value = next(iter(reply.values()), None) if reply else None
        if value is not None and str(value).isdigit():
            found[name] = int(value)
    return found


def _whole(figure: object) -> int:
    """A figure of INFO (an int, as redis-py parses it); 0 when absent."""
    return int(figure) if isinstance(figure, int | float | str) and figure else 0


def _article_count(conn: redis.Redis) -> int | None:
    """The size of time:, or None when it is not a sorted set (check_votes says why):
    bad data is no reason for /healthz to call Redis unreachable."""
    try:
        return int(conn.zcard(keys.TIME))
    except redis.ResponseError as exc:
        if store_unavailable(exc):
            raise
        return None


def store_topology() -> dict[str, object]:
    """The server's mode and role from INFO alone. Unlike store_status(), it touches no
    key, so it works on a Redis Cluster node too (where keyed commands answer MOVED or
    CLUSTERDOWN)."""
    info = get_connection().info()
    return {
        "cluster_enabled": bool(int(info.get("cluster_enabled", 0))),
        "role": info.get("role"),
        "redis_version": info.get("redis_version"),
    }


def store_health() -> dict[str, object]:
    """/healthz's view of Redis: reachable, persistence and role for anyone; the figures
    of store_status() under "details". Never raises for an unreachable or refusing Redis,
    and keeps the error's text (which names the host and port) out of the answer."""
    conn = get_connection()
    try:
        status = store_status()
        info = conn.info("replication")
    except redis.RedisError:
        return {"reachable": False}
    try:
        saves = bool(conn.config_get("save").get("save"))
    except redis.RedisError:
        saves = None  # CONFIG renamed or refused (managed Redis): unknown
    aof = bool(status["aof_enabled"])
    persistence = "+".join(kind for kind, on in (("aof", aof), ("rdb", saves)) if on) or (
        "none" if saves is not None else "unknown"
    )
    role = {"master": "primary", "slave": "replica"}.get(str(info.get("role")), "unknown")
    # At maxmemory (with noeviction, the store's policy) Redis refuses writes, reads work.
    limit, used = _whole(status["maxmemory"]), _whole(status["used_memory"])
    return {
        "reachable": True,
        "role": role,
        "persistence": persistence,
        "aof_enabled": aof,
        "full": bool(limit) and used >= limit,
        "details": status,
    }
