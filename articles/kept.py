"""Who a credential (an API token, a session key) belongs to, kept in this process: the
token and session caches of the API and the pages share this one mechanism.

An authorization cache (articles.caches): an entry is honoured only if its user's
credentials were not revoked since it was read from the database. Each use reads the
user's credential epoch (store.people: the time of their last logout, password change,
deactivation or token revocation; one GET) and drops the entry unless it was read more
than CLOCK_SLACK after it; or, through unchecked(), the caller reads it in a round trip
of its own (the vote script of the API and the pages: http.guarded). So a revocation in
any process takes effect in every process at once. With Redis unreachable an entry is
not honoured: the caller asks the database, as with no cache. Entries also expire
(ARTICLES_TOKEN_CACHE_SECONDS, 300 s, and ARTICLES_SESSION_CACHE_SECONDS, 5 s, by
default), the bound on what no epoch records (a row deleted by hand), and at most
`limit` of them are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from articles.caches import Cache, Kind
from articles.store import people

# Clocks of different machines differ: a credential read less than this after a
# revocation (by the reader's clock) is read again from the database next time.
CLOCK_SLACK = 1.0


@dataclass(frozen=True, slots=True)
class Unchecked:
    """A kept credential (`key`) that identified a request with no epoch read: the handler
    refuses it if the user's credential epoch is at or after `revoked_since`
    (http.guarded)."""

    key: str
    revoked_since: float


class KeptUsers:
    def __init__(self, name: str, limit: int) -> None:
        # key -> (user, extra, the time.time() before the database was read)
        self.entries: Cache[str, tuple[Any, Any, float]] = Cache(
            name, Kind.AUTHORIZATION, entries=limit
        )

    def get(self, key: str, epoch: Callable[[int], float] | None = None) -> tuple[Any, Any] | None:
        """(user, extra) kept for `key`, if not expired and nothing was revoked since (by
        `epoch`, a reader of the user's credential epoch that may read more with it; by
        default people.credential_epoch)."""
        kept = self.entries.get(key)
        if kept is None:
            return None
        user, extra, read_at = kept
        if (epoch or people.credential_epoch)(user.pk) >= read_at - CLOCK_SLACK:
            self.entries.pop(key)
            return None
        return user, extra

    def unchecked(self, key: str) -> tuple[Any, Any, float] | None:
        """(user, extra, revoked_since) kept for `key`, if not expired, with no epoch read:
        the caller reads it in a round trip of its own, honours the entry only while the
        user's credential epoch is before `revoked_since`, and forgets it otherwise."""
        kept = self.entries.get(key)
        if kept is None:
            return None
        user, extra, read_at = kept
        return user, extra, read_at - CLOCK_SLACK

    def keep(
        self, key: str, user: Any, extra: Any = None, *, read_at: float, expires: float
    ) -> None:
        """Keep `user` for `key`: read from the database after `read_at` (time.time()),
        until `expires` (time.monotonic())."""
        self.entries.put(key, (user, extra, read_at), expires=expires)

    def forget(self, key: str | None) -> None:
        if key:
            self.entries.pop(key)

    def forget_user(self, pk: Any) -> None:
        self.entries.drop_where(lambda key, kept: kept[0].pk == pk)

    def clear(self) -> None:
        self.entries.clear()
