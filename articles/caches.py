"""Every cache a process keeps, and the policy they all follow.

Each is a `Cache` made here: named, bounded (entries, and bytes where values vary in size;
least recently used out first), locked (gunicorn's gthread workers share it), counted
(hits, misses, evictions: articles_cache_*{cache=name} on /metrics) and emptied by
clear_all() (the tests, and any settings change). Each declares one kind, and its module
writes the bound down:

- CONTENT, content-addressed: keyed by everything the value is made of (a digest of a
  text, an article as read with the viewer's facts, the settings and script prefix), so
  never stale; bounded only for memory.
- TTL: may be stale, by at most its stated seconds (the anonymous pages: 2 s).
- AUTHORIZATION: who a credential belongs to. Honoured only while the user's credential
  epoch in Redis (store.people) says nothing was revoked since it was read, so a logout,
  a password change or a revoked token takes effect in every process at once.

Anything else (a value that can go stale with no bound) is not to be kept in a process.
"""

from __future__ import annotations

import enum
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

from django.core.signals import setting_changed
from django.dispatch import receiver

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Kind(enum.StrEnum):
    CONTENT = "content"
    TTL = "ttl"
    AUTHORIZATION = "authorization"


class Cache(Generic[K, V]):
    """A bounded, locked LRU map of `name`, of one `kind`. `entries` bounds the count,
    `max_bytes` (with each put's `size`) the memory; an entry put with `expires` (a
    time.monotonic() value) is gone from then on."""

    def __init__(
        self, name: str, kind: Kind, *, entries: int, max_bytes: int | None = None
    ) -> None:
        self.name, self.kind = name, kind
        self.max_entries, self.max_bytes = entries, max_bytes
        self.hits = self.misses = self.evictions = 0
        self.bytes = 0
        self._items: OrderedDict[K, tuple[V, int, float | None]] = OrderedDict()
        self._lock = threading.Lock()
        _ALL.append(self)

    def get(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return default
            if item[2] is not None and item[2] <= time.monotonic():
                self._drop(key)
                self.misses += 1
                return default
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key: K, value: V, *, size: int = 0, expires: float | None = None) -> None:
        if self.max_bytes is not None and size > self.max_bytes:
            return  # would push out everything else
        with self._lock:
            if key in self._items:
                self._drop(key)
            self._items[key] = (value, size, expires)
            self.bytes += size
            while len(self._items) > self.max_entries or (
                self.max_bytes is not None and self.bytes > self.max_bytes
            ):
                self._drop(next(iter(self._items)))
                self.evictions += 1

    def pop(self, key: K) -> None:
        with self._lock:
            if key in self._items:
                self._drop(key)

    def drop_where(self, test: Callable[[K, V], bool]) -> int:
        """Drop every entry for which test(key, value) is true; returns how many."""
        with self._lock:
            gone = [k for k, (v, _, _) in self._items.items() if test(k, v)]
            for key in gone:
                self._drop(key)
            return len(gone)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items  # not counted: a look, not a use

    def __iter__(self) -> Iterator[K]:
        with self._lock:
            return iter(list(self._items))

    def _drop(self, key: K) -> None:
        self.bytes -= self._items.pop(key)[1]


_ALL: list[Cache[Any, Any]] = []


def every() -> tuple[Cache[Any, Any], ...]:
    return tuple(_ALL)


def clear_all() -> None:
    for cache in every():
        cache.clear()


@receiver(setting_changed)
def _settings_changed(**kwargs: Any) -> None:
    # A setting may be part of what a value is made of (templates, URLconf, site name).
    clear_all()
