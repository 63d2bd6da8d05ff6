"""Round-trip counting: a redis-py connection that counts what it sends.

Every command sent alone, every pipeline and every EVALSHA goes out through one call of
`send_packed_command`, so the count is the number of round trips. Health-check PINGs and
connection set-up are sent with check_health=False and are not counted (they happen once
per connection and at most once per 30 s).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import redis
from redis.connection import UnixDomainSocketConnection

_lock = threading.Lock()
_count = 0


def sent() -> int:
    """Round trips sent so far by every counting connection of this process."""
    return _count


def _count_one(check_health: bool) -> None:
    global _count
    if check_health:
        with _lock:
            _count += 1


class CountingConnection(redis.Connection):
    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        _count_one(check_health)
        super().send_packed_command(command, check_health)


class CountingUnixConnection(UnixDomainSocketConnection):
    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        _count_one(check_health)
        super().send_packed_command(command, check_health)


def connection_class(url: str) -> type[redis.Connection] | type[UnixDomainSocketConnection]:
    return CountingUnixConnection if url.startswith("unix:") else CountingConnection


def round_trips(func: Callable[[], object], repeat: int = 3) -> int:
    """The fewest round trips one call of `func` made over `repeat` calls."""
    counts = []
    for _ in range(repeat):
        before = sent()
        func()
        counts.append(sent() - before)
    return min(counts)
