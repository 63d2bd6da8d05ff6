"""Start-up checks: say loudly when the Redis we run on could lose or evict our data."""

from __future__ import annotations

from typing import Any

import redis
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from articles import selectors


@register(Tags.caches, deploy=False)
def check_redis(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        status = selectors.store_status()
    except redis.RedisError as exc:
        return [
            Warning(
                f"Redis is unreachable ({exc}); pages will answer 503 until it is up.",
                hint="Run `make redis` for the embedded server, or set REDIS_URL.",
                id="articles.W001",
            )
        ]
    return redis_status_messages(status)


def redis_status_messages(status: dict[str, object]) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    if status.get("cluster_enabled"):
        messages.append(
            Error(
                "Redis Cluster is not supported: a vote changes article:<id>, voted:<id>, "
                "score: and time: in one atomic script, which Cluster refuses (CROSSSLOT).",
                hint="Point REDIS_URL at a single primary, or use Sentinel for failover.",
                id="articles.E001",
            )
        )
    if not status.get("aof_enabled"):
        messages.append(
            Warning(
                "Redis persistence is OFF (appendonly no): a restart loses every vote since "
                "the last snapshot.",
                hint="Set `appendonly yes` and `appendfsync everysec` on the server.",
                id="articles.W002",
            )
        )
    policy = status.get("maxmemory_policy")
    if policy != "noeviction":
        messages.append(
            Warning(
                f"Redis evicts keys under memory pressure (maxmemory-policy {policy}): an "
                "evicted voter set would let users vote twice.",
                hint="Set `maxmemory-policy noeviction`.",
                id="articles.W003",
            )
        )
    return messages


# --- branch reliability: never serve on Redis Cluster ----------------------------------

CLUSTER_REFUSED = (
    "votesite refuses to start: REDIS_URL points at a Redis Cluster, which is not "
    "supported (a vote changes article:<id>, voted:<id>, score: and time: in one atomic "
    "script, and Cluster refuses scripts across slots: CROSSSLOT). Point REDIS_URL at a "
    "single primary, or use REDIS_SENTINELS for failover."
)


@register(Tags.caches, deploy=False)
def check_redis_cluster(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """articles.E001 also when the keyed reads of check_redis fail on a cluster node (MOVED,
    CLUSTERDOWN), where check_redis can only say "unreachable"."""
    try:
        if not selectors.store_topology()["cluster_enabled"]:
            return []
    except redis.RedisError:
        return []  # unreachable: check_redis says so
    try:
        selectors.store_status()
    except redis.RedisError:
        return redis_status_messages(
            {"cluster_enabled": True, "aof_enabled": True, "maxmemory_policy": "noeviction"}
        )
    return []  # check_redis reported articles.E001 already


def refuse_unsupported_redis() -> None:
    """Called by votesite/wsgi.py and asgi.py: raise ImproperlyConfigured on a Redis Cluster.
    An unreachable Redis is no reason to refuse: pages answer 503 until it is up."""
    try:
        topology = selectors.store_topology()
    except redis.RedisError:
        return
    if topology["cluster_enabled"]:
        raise ImproperlyConfigured(CLUSTER_REFUSED)
