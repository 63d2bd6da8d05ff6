"""Who a credential (an API token, a session key) belongs to, kept in this process for a few
seconds: the token and session caches of the API and the pages share this one mechanism.

Shared by a process's threads (gunicorn's gthread workers): changes take a lock, and a user
read before a forget in this process is not kept after it (`forgets` counts them), so a
thread that read a credential just before it was revoked cannot bring it back.
"""

from __future__ import annotations

import threading
from typing import Any


class KeptUsers:
    def __init__(self, limit: int) -> None:
        self.entries: dict[str, tuple[float, Any, Any]] = {}  # key -> (expires, user, extra)
        self.limit = limit
        self.forgets = 0  # how many forgets this process has seen
        self._lock = threading.Lock()

    def get(self, key: str, now: float) -> tuple[Any, Any] | None:
        """(user, extra) kept for `key` and not yet expired at `now` (monotonic), else None."""
        kept = self.entries.get(key)
        return (kept[1], kept[2]) if kept is not None and kept[0] > now else None

    def keep(self, key: str, expires: float, user: Any, extra: Any = None, *, seen: int) -> None:
        """Keep `user` for `key` unless something was forgotten since `seen` (self.forgets
        when the user was read): it may be this very credential that was revoked."""
        with self._lock:
            if self.forgets != seen:
                return
            if len(self.entries) >= self.limit:
                self.entries.clear()
            self.entries[key] = (expires, user, extra)

    def forget(self, key: str | None) -> None:
        if not key:
            return
        with self._lock:
            self.forgets += 1
            self.entries.pop(key, None)

    def forget_user(self, pk: Any) -> None:
        with self._lock:
            self.forgets += 1
            for key in [k for k, (_, user, _) in self.entries.items() if user.pk == pk]:
                del self.entries[key]

    def clear(self) -> None:
        with self._lock:
            self.forgets += 1
            self.entries.clear()
