"""Fail fast while Redis is hung: the retry policy of every connection to the store.

A hung Redis (SIGSTOP, a stalled host) accepts connections and never answers, so each
command waits its whole `socket_timeout`. A request sending several commands, or redis-py
retrying one, waited that many times over, and under load every thread waiting on the
hung server held its place while the requests behind it queued (5-7 s under 2 sync
workers). `FailFastRetry` bounds that:

- a timeout is never retried (a command that timed out may well have run: a retried
  INCR counted twice), and it *opens* the breaker of that server for this process;
- while the breaker is open, every command to the server fails at once with a
  `redis.ConnectionError` (a 503 like any outage) instead of waiting again;
- once `cooldown` seconds have passed, one command at a time is let through to probe the
  server: its answer (any answer, even an error reply) closes the breaker, its timeout
  opens it again. Meanwhile the others still fail at once.

So a request waits on a hung Redis at most once: one `socket_timeout` (plus
`socket_connect_timeout` when it had to open a connection), and a request arriving after
the first timeout waits not at all. A refused or dropped connection is still retried once
(it fails at once, and a restarted server takes the second attempt).

One breaker per server and process, shared by every pool to it (`breaker_for`): the
project's two aliases, two databases of one server, fail and recover together.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from redis.backoff import AbstractBackoff, ExponentialBackoff
from redis.exceptions import ConnectionError, RedisError, TimeoutError
from redis.retry import Retry

T = TypeVar("T")

# How long a process leaves a server that timed out alone before probing it again.
COOLDOWN = 1.0
_TIMEOUTS = (TimeoutError, socket.timeout)


class Breaker:
    """Whether a server is to be asked now; thread-safe, one per server and process."""

    def __init__(self, name: str, cooldown: float = COOLDOWN) -> None:
        self.name = name
        self.cooldown = cooldown
        self._lock = threading.Lock()
        self._open_until: float | None = None  # None: closed
        self._probing = False

    @property
    def is_open(self) -> bool:
        return self._open_until is not None

    def enter(self) -> bool:
        """May this command go to the server? Returns True when it is the probe (the one
        command let through after the cooldown); raises ConnectionError when it may not."""
        if self._open_until is None:
            return False
        with self._lock:
            if self._open_until is None:
                return False
            if self._probing or time.monotonic() < self._open_until:
                raise ConnectionError(
                    f"Redis ({self.name}) did not answer in time; not asking it again for now."
                )
            self._probing = True
            return True

    def answered(self, probe: bool) -> None:
        if self._open_until is not None:
            with self._lock:
                self._open_until = None
                if probe:
                    self._probing = False

    def timed_out(self, probe: bool) -> None:
        with self._lock:
            self._open_until = time.monotonic() + self.cooldown
            if probe:
                self._probing = False

    def left(self, probe: bool) -> None:
        """The probe ended some other way (a refused connection, an interrupt)."""
        if probe:
            with self._lock:
                self._probing = False


_breakers: dict[str, Breaker] = {}
_inside = threading.local()
_lock = threading.Lock()


def server_of(url: str) -> str:
    """The server a Redis URL names, without its database: unix:///path, host:port, or
    sentinel://<service> for the primary a Sentinel names."""
    parts = urlsplit(url)
    if parts.scheme == "unix" or not parts.netloc:
        return f"unix://{parts.path}"
    if parts.scheme == "sentinel":
        return f"sentinel://{parts.netloc}"
    return f"{parts.hostname}:{parts.port or 6379}"


def breaker_for(server: str) -> Breaker:
    breaker = _breakers.get(server)
    if breaker is None:
        with _lock:
            breaker = _breakers.setdefault(server, Breaker(server))
    return breaker


def close_all() -> None:
    """Close every breaker of this process (tests, between servers they hung)."""
    with _lock:
        for breaker in _breakers.values():
            with breaker._lock:
                breaker._open_until, breaker._probing = None, False


class FailFastRetry(Retry):
    """redis-py's Retry, behind a Breaker; timeouts are not retried (see the module)."""

    def __init__(
        self,
        breaker: Breaker,
        retries: int = 1,
        backoff: AbstractBackoff | None = None,
    ) -> None:
        super().__init__(
            backoff or ExponentialBackoff(cap=0.05, base=0.01),
            retries,
            supported_errors=(ConnectionError,),
        )
        self.breaker = breaker

    def __deepcopy__(self, memo: dict[int, Any]) -> FailFastRetry:
        # Each connection deep-copies its pool's retry: the copies share the breaker.
        return FailFastRetry(self.breaker, self._retries, self._backoff)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FailFastRetry):
            return NotImplemented
        return self.breaker is other.breaker and super().__eq__(other)

    __hash__ = Retry.__hash__

    def update_supported_errors(self, specified_errors: Any) -> None:
        # retry_on_timeout / retry_on_error must not bring timeouts back.
        errors = [e for e in specified_errors if not issubclass(e, _TIMEOUTS)]
        super().update_supported_errors(errors)

    def call_with_retry(
        self,
        do: Callable[[], T],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        if getattr(_inside, "call", False):
            # A health check or connect inside a command's call: the outer call decides.
            return super().call_with_retry(do, fail, is_retryable, with_failure_count)
        probe = self.breaker.enter()
        _inside.call = True
        try:
            result = super().call_with_retry(do, fail, is_retryable, with_failure_count)
        except _TIMEOUTS:
            # Not retried (not among the supported errors); redis-py has already closed
            # the connection, whose reply may still come.
            self.breaker.timed_out(probe)
            raise
        except RedisError as error:
            if isinstance(error, ConnectionError):
                self.breaker.left(probe)
            else:
                self.breaker.answered(probe)  # an error reply is an answer
            raise
        except BaseException:
            self.breaker.left(probe)
            raise
        finally:
            _inside.call = False
        self.breaker.answered(probe)
        return result


def fail_fast_retry(url: str, retries: int = 1) -> FailFastRetry:
    """The retry policy for a pool to the server of `url`."""
    return FailFastRetry(breaker_for(server_of(url)), retries)
