"""The Redis client for article data: django-redis' raw client on its own alias."""

from __future__ import annotations

import redis
from django_redis import get_redis_connection

from articles import conf


def get_connection() -> redis.Redis:
    """The raw client (bytes in, bytes out); never the cache API, which pickles and prefixes."""
    return get_redis_connection(conf.redis_alias())


# The server cannot be reached (or is replaying its AOF after a restart).
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)
# The server answers but takes no writes for now: a replica or demoted primary after a
# failover, out of memory, too few replicas (min-replicas-to-write), a failed disk write.
_REFUSING = (redis.ReadOnlyError, redis.OutOfMemoryError, redis.exceptions.MasterDownError)
# Replies redis-py has no class for, or that reach us wrapped by a script or a pipeline.
_REFUSALS = ("NOREPLICAS", "MISCONF", "READONLY", "MASTERDOWN", "OOM command not allowed")


def refuses_writes(exc: BaseException) -> bool:
    """True for a Redis that is up but refusing writes: as much an outage as a 503."""
    if isinstance(exc, _REFUSING):
        return True
    return isinstance(exc, redis.ResponseError) and any(r in str(exc) for r in _REFUSALS)


def store_unavailable(exc: BaseException) -> bool:
    """True for every Redis error the site answers with 503 rather than 500."""
    return isinstance(exc, UNREACHABLE) or refuses_writes(exc)
