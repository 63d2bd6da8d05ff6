"""Reads from Redis replicas (ARTICLES_REDIS_READ_URLS), while writes, and the reads of
whoever wrote in the last few seconds, go to the primary.

A selector marked `@reads` runs on a replica when its request allows it (`begin()`, from
articles.http.middleware.ReplicaReadsMiddleware: a GET or HEAD without credentials in an
Authorization header and without the cookie a recent write sets) and a replica is fit;
else, and outside requests (commands, jobs), on the primary exactly as without replicas.
A read that fails on a replica (gone, hung, refusing) marks it down and runs again on the
primary: a replica going away costs a retry, never a 503.

Fit means: a replica of the primary's current replication history (same replid), its link
up, and holding everything the primary held at most ARTICLES_REPLICA_MAX_LAG_SECONDS ago.
Each process checks this once a second (INFO replication on the primary, then on each
replica): a sample (time, primary offset) is kept for each check, and a replica whose
offset reaches the sample taken at time t holds every write acknowledged before t. A
replica that falls behind, or stops replicating, is left until it catches up.

Read-your-writes: a write's cookie sends its browser's reads to the primary for
ARTICLES_READ_YOUR_WRITES_SECONDS, longer than a fit replica can be behind (a check refuses
settings that break this), so no one reads a page older than their own last write.
"""

from __future__ import annotations

import contextvars
import functools
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import redis
from django.core.signals import setting_changed
from django.dispatch import receiver

from articles import conf
from articles.store import scripts
from articles.store.connection import client_for_url, get_connection, store_unavailable

# How often a process looks at its replicas' replication, and how long one that failed a
# read is left alone.
CHECK_SECONDS = 1.0
DOWN_SECONDS = 5.0
# The cookie a response to a write sets: its browser reads from the primary meanwhile.
WROTE_COOKIE = "articles_wrote"

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(eq=False)
class _Replica:
    url: str
    client: redis.Redis
    fit: bool = False
    down_until: float = 0.0


@dataclass
class _Request:
    """What the current request allows: replica reads, until it writes."""

    replicas: bool
    wrote: bool = False


# None outside a request that went through the middleware: every read on the primary.
_request: contextvars.ContextVar[_Request | None] = contextvars.ContextVar(
    "articles_replica_request", default=None
)
# The replica the running @reads selector reads from (None: the primary).
_current: contextvars.ContextVar[_Replica | None] = contextvars.ContextVar(
    "articles_replica", default=None
)


def begin(*, replicas: bool) -> contextvars.Token[_Request | None]:
    return _request.set(_Request(replicas=replicas))


def end(token: contextvars.Token[_Request | None]) -> bool:
    """Close the request begun with `token`; True if it wrote."""
    state = _request.get()
    _request.reset(token)
    return bool(state and state.wrote)


def _noted(sender: str, **kwargs: Any) -> None:
    state = _request.get()
    if state is not None:
        state.wrote, state.replicas = True, False


scripts.written.connect(_noted, dispatch_uid="articles-replica-reads-wrote")


def connection() -> redis.Redis:
    """The client a selector reads with: its replica inside `@reads`, else the primary."""
    replica = _current.get()
    return replica.client if replica is not None else get_connection()


def reads(selector: Callable[P, R]) -> Callable[P, R]:
    """Run `selector` (which reads through `connection()` only) on a fit replica when the
    request allows it, and on the primary if the replica fails it."""

    @functools.wraps(selector)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        state = _request.get()
        if state is None or not state.replicas or _current.get() is not None:
            return selector(*args, **kwargs)
        replica = _pool().pick()
        if replica is None:
            return selector(*args, **kwargs)
        token = _current.set(replica)
        try:
            return selector(*args, **kwargs)
        except redis.RedisError as exc:
            if not (store_unavailable(exc) or isinstance(exc, redis.ResponseError)):
                raise
            replica.down_until = time.monotonic() + DOWN_SECONDS
        finally:
            _current.reset(token)
        return selector(*args, **kwargs)

    return run


class _Pool:
    """The replicas of the settings, with what this process last saw of them."""

    def __init__(self, urls: tuple[str, ...]) -> None:
        self.urls = urls
        self.replicas = [_Replica(url, client_for_url(url)) for url in urls]
        self.samples: deque[tuple[float, str, int]] = deque(maxlen=64)
        self.checked = -CHECK_SECONDS
        self.lock = threading.Lock()
        self.turn = itertools.count()

    def pick(self) -> _Replica | None:
        if not self.replicas:
            return None
        now = time.monotonic()
        if now - self.checked >= CHECK_SECONDS and self.lock.acquire(blocking=False):
            try:
                self.check(now)
            finally:
                self.lock.release()
        fit = [r for r in self.replicas if r.fit and r.down_until <= now]
        return fit[next(self.turn) % len(fit)] if fit else None

    def check(self, now: float) -> None:
        self.checked = now
        try:
            primary = get_connection().info("replication")
        except redis.RedisError:
            for replica in self.replicas:
                replica.fit = False  # nothing to measure them against
            return
        self.samples.append(
            (now, str(primary["master_replid"]), int(primary["master_repl_offset"]))
        )
        oldest = now - conf.replica_max_lag_seconds()
        for replica in self.replicas:
            replica.fit = self._fit(replica, oldest)

    def _fit(self, replica: _Replica, oldest: float) -> bool:
        if replica.down_until > time.monotonic():
            return False
        try:
            info = replica.client.info("replication")
        except redis.RedisError:
            replica.down_until = time.monotonic() + DOWN_SECONDS
            return False
        if info.get("role") != "slave" or info.get("master_link_status") != "up":
            return False
        replid, offset = str(info.get("master_replid")), int(info.get("slave_repl_offset", -1))
        return any(
            at >= oldest and their_replid == replid and their_offset <= offset
            for at, their_replid, their_offset in self.samples
        )


_pools: dict[tuple[str, ...], _Pool] = {}
_pools_lock = threading.Lock()


def _pool() -> _Pool:
    urls = conf.redis_read_urls()
    pool = _pools.get(urls)
    if pool is None:
        with _pools_lock:
            pool = _pools.setdefault(urls, _Pool(urls))
    return pool


@receiver(setting_changed)
def _forget_pools(*, setting: str, **kwargs: object) -> None:
    if setting.startswith("ARTICLES_REDIS") or setting in ("REDIS_URL", "CACHES"):
        _pools.clear()


def in_use() -> bool:
    """Are replicas configured (and so is the middleware needed)?"""
    return bool(conf.redis_read_urls())
