"""Acknowledged writes reach the replicas (ARTICLES_WAIT_REPLICAS), and a Redis that
refuses writes (failover, out of memory) is a 503, for every write service."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import redis

from articles import conf
from articles.errors import StoreUnavailable
from articles.store import keys
from articles.store.connection import get_connection, refuses_writes

# WAIT counts the replicas holding every write *this connection* made. The services may
# write on another pooled connection, so the barrier first PUBLISHes on this one: PUBLISH
# is replicated, which moves this connection's offset past every write already done.
_P = ParamSpec("_P")
_T = TypeVar("_T")


def replicas_confirm() -> None:
    """Block until ARTICLES_WAIT_REPLICAS replicas hold every write done so far.

    Raises StoreUnavailable (503) when fewer confirm within ARTICLES_WAIT_TIMEOUT_MS: the
    write is on the primary but could be lost in a failover, so the client should retry
    (every write here is safe to repeat).
    """
    needed = conf.wait_replicas()
    if needed <= 0:
        return
    pipe = get_connection().pipeline(transaction=False)
    pipe.publish(keys.REPLICATION_BARRIER, b"")
    pipe.wait(needed, conf.wait_timeout_ms())
    _, confirmed = pipe.execute()
    if int(confirmed) < needed:
        raise StoreUnavailable(
            f"The change reached {confirmed} of {needed} replica(s) in time; please retry."
        )


def replicated(write: Callable[_P, _T]) -> Callable[_P, _T]:
    """Every write service: a Redis refusing writes (READONLY after a failover, NOREPLICAS,
    out of memory) becomes StoreUnavailable (503), and with ARTICLES_WAIT_REPLICAS the
    write returns only once that many replicas hold it."""

    @functools.wraps(write)
    def confirmed_write(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            result = write(*args, **kwargs)
            # Inside the try: the node may be demoted between the write and its WAIT.
            replicas_confirm()
        except redis.ResponseError as exc:
            if not refuses_writes(exc):
                raise
            if any(reason in str(exc) for reason in ("NOREPLICAS", "MASTERDOWN")):
                raise StoreUnavailable(
                    "The article store cannot reach its replicas; please retry."
                ) from exc
            raise StoreUnavailable(
                "The article store is read-only or full right now (failover?); please retry."
            ) from exc
        return result

    return confirmed_write
