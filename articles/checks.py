"""Start-up checks: say loudly when the Redis we run on could lose or evict our data."""

from __future__ import annotations

from typing import Any

import redis
from django.core.checks import CheckMessage, Error, Tags, Warning, register

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
