"""The Redis client for article data: a django-redis alias when the host names one
(ARTICLES_REDIS_ALIAS, for Sentinel), else one pooled client per URL (ARTICLES_REDIS_URL)."""

from __future__ import annotations

import threading

import redis
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django_redis import get_redis_connection
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from articles import conf

_clients: dict[str, redis.Redis] = {}
_lock = threading.Lock()


def get_connection() -> redis.Redis:
    """The raw client (bytes in, bytes out); never the cache API, which pickles and prefixes."""
    alias = conf.redis_alias()
    if alias:
        return get_redis_connection(alias)
    url = conf.redis_url()
    if not url:
        raise ImproperlyConfigured(
            "The articles app has no Redis: set ARTICLES_REDIS_URL (or REDIS_URL)."
        )
    client = _clients.get(url)
    if client is None:
        with _lock:
            client = _clients.get(url) or _client(url)
            _clients[url] = client
    return client


def _client(url: str) -> redis.Redis:
    # One quick retry rides out a dropped connection; every write is safe to repeat.
    options = {"retry": Retry(ExponentialBackoff(cap=0.05, base=0.01), 1), **conf.redis_options()}
    return redis.Redis(connection_pool=redis.ConnectionPool.from_url(url, **options))


@receiver(setting_changed)
def _forget_clients(*, setting: str, **kwargs: object) -> None:
    if setting.startswith("ARTICLES_REDIS") or setting in ("REDIS_URL", "CACHES"):
        _clients.clear()


# The server cannot be reached (or is replaying its AOF after a restart).
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)
# The server answers but takes no writes for now: a replica or demoted primary after a
# failover, out of memory, too few replicas (min-replicas-to-write), a failed disk write.
_REFUSING = (redis.ReadOnlyError, redis.OutOfMemoryError, redis.exceptions.MasterDownError)
# Replies redis-py has no class for, or that reach us wrapped by a script or a pipeline.
# While a primary changes: WAIT sent to a node just demoted, a blocked command unblocked
# by the role change (UNBLOCKED), a new replica loading its copy (LOADING), and a script
# still running when its node is asked to step down (BUSY).
_REFUSALS = (
    "NOREPLICAS",
    "MISCONF",
    "READONLY",
    "MASTERDOWN",
    "OOM command not allowed",
    "WAIT cannot be used with replica",
    "UNBLOCKED",
    "LOADING",
    "BUSY ",
)


def refuses_writes(exc: BaseException) -> bool:
    """True for a Redis that is up but refusing writes: as much an outage as a 503."""
    if isinstance(exc, _REFUSING):
        return True
    return isinstance(exc, redis.ResponseError) and any(r in str(exc) for r in _REFUSALS)


def store_unavailable(exc: BaseException) -> bool:
    """True for every Redis error the site answers with 503 rather than 500."""
    return isinstance(exc, UNREACHABLE) or refuses_writes(exc)
