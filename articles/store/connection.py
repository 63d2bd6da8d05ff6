"""The Redis client for article data: a django-redis alias when the host names one
(ARTICLES_REDIS_ALIAS, for Sentinel), else one pooled client per URL (ARTICLES_REDIS_URL)."""

from __future__ import annotations

import threading

import redis
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django_redis import get_redis_connection
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.sentinel import SentinelConnectionPool

from articles import conf
from articles.store.breaker import FailFastRetry, fail_fast_retry

_clients: dict[str, redis.Redis] = {}
# id(pool) -> (pool, a client on a copy of it whose commands are sent once)
_unretried: dict[int, tuple[redis.ConnectionPool, redis.Redis]] = {}
_lock = threading.Lock()


def get_connection(*, retry: bool = True) -> redis.Redis:
    """The raw client (bytes in, bytes out); never the cache API, which pickles and prefixes.

    The client retries a command once after a dropped connection or a timeout. That is
    safe for a write whose repeat changes nothing (a vote sets a state; a post is guarded
    by its id), and wrong for the others: after a timeout the first attempt may well have
    run, and a group_create sent again answered "group exists" for the group it had just
    made. Those writes take `retry=False`, a client on a copy of the same pool whose
    commands are sent once: a timeout is then a 503 (outcome unknown; read and retry).
    """
    client = _client_for_settings()
    return client if retry else _without_retries(client)


def _client_for_settings() -> redis.Redis:
    alias = conf.redis_alias()
    if alias:
        return get_redis_connection(alias)
    url = conf.redis_url()
    if not url:
        raise ImproperlyConfigured(
            "The articles app has no Redis: set ARTICLES_REDIS_URL (or REDIS_URL)."
        )
    return client_for_url(url)


def client_for_url(url: str) -> redis.Redis:
    """The process's one pooled client for the server of `url` (the store's, a replica's)."""
    client = _clients.get(url)
    if client is None:
        with _lock:
            client = _clients.get(url) or _client(url)
            _clients[url] = client
    return client


def _client(url: str) -> redis.Redis:
    # One quick retry rides out a dropped connection, for the commands safe to repeat
    # (get_connection(retry=False) is the client of the others); a timeout is not retried
    # and stops this process asking the server for a moment (articles.store.breaker).
    options = {"retry": fail_fast_retry(url), **conf.redis_options()}
    return redis.Redis(connection_pool=redis.ConnectionPool.from_url(url, **options))


def _without_retries(client: redis.Redis) -> redis.Redis:
    pool = client.connection_pool
    found = _unretried.get(id(pool))
    if found is None or found[0] is not pool:
        with _lock:
            found = (pool, redis.Redis(connection_pool=_pool_copy(pool, _no_retry(pool))))
            _unretried[id(pool)] = found
    return found[1]


def _no_retry(pool: redis.ConnectionPool) -> Retry:
    """Sent once, behind the same breaker as the pool's other commands when it has one."""
    retry = pool.connection_kwargs.get("retry")
    if isinstance(retry, FailFastRetry):
        return FailFastRetry(retry.breaker, 0)
    return Retry(NoBackoff(), 0)


def _pool_copy(pool: redis.ConnectionPool, retry: Retry) -> redis.ConnectionPool:
    """A new pool to the same server (a Sentinel pool follows the same primary) whose
    connections use `retry`; the original pool is left as it is."""
    kwargs = {k: v for k, v in pool.connection_kwargs.items() if k != "connection_pool"}
    kwargs.update(retry=retry, connection_class=pool.connection_class)
    kwargs["max_connections"] = pool.max_connections
    if isinstance(pool, SentinelConnectionPool):
        return SentinelConnectionPool(
            pool.service_name,
            pool.sentinel_manager,
            is_master=pool.is_master,
            check_connection=pool.check_connection,
            **kwargs,
        )
    if isinstance(pool, redis.BlockingConnectionPool):
        kwargs["timeout"] = pool.timeout
    return type(pool)(**kwargs)


@receiver(setting_changed)
def _forget_clients(*, setting: str, **kwargs: object) -> None:
    if setting.startswith("ARTICLES_REDIS") or setting in ("REDIS_URL", "CACHES"):
        _clients.clear()
        _unretried.clear()


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


def out_of_memory(exc: BaseException) -> bool:
    """Redis at maxmemory with noeviction: it refuses writes (StoreFull), reads still work."""
    if isinstance(exc, redis.OutOfMemoryError):
        return True
    return isinstance(exc, redis.ResponseError) and "OOM command not allowed" in str(exc)


def refuses_writes(exc: BaseException) -> bool:
    """True for a Redis that is up but refusing writes: as much an outage as a 503."""
    if isinstance(exc, _REFUSING):
        return True
    return isinstance(exc, redis.ResponseError) and any(r in str(exc) for r in _REFUSALS)


def is_wrong_type(exc: BaseException) -> bool:
    """True for Redis' WRONGTYPE error: a key holds another type than the command's."""
    return isinstance(exc, redis.ResponseError) and "WRONGTYPE" in str(exc)


def store_unavailable(exc: BaseException) -> bool:
    """True for every Redis error the site answers with 503 rather than 500."""
    return isinstance(exc, UNREACHABLE) or refuses_writes(exc)
