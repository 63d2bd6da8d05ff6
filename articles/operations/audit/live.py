"""The live events stream (live:): of its type, and no longer than ARTICLES_LIVE_EVENTS
with the slack of an approximate trim. The events are ephemeral (a page that resumes
from a trimmed one reloads), so nothing here is repaired: the next write trims the stream
to its setting; a stream left after the setting went to 0 can simply be deleted."""

from __future__ import annotations

import redis

from articles import conf
from articles.operations.audit.common import Problem
from articles.store import keys

# XADD's MAXLEN ~ drops whole stream nodes only: up to stream-node-max-entries (100 by
# default) more than asked stay, until a later write trims them.
SLACK = 100
LIVE_KINDS = frozenset({"live_too_long"})


def live_audit(conn: redis.Redis) -> list[Problem]:
    """live: longer than its setting allows (its type is checked with the indexes')."""
    if keys.text(conn.type(keys.LIVE)) != "stream":
        return []
    length, keep = int(conn.xlen(keys.LIVE)), conf.live_events()
    allowed = keep + SLACK if keep else 0
    if length <= allowed:
        return []
    return [
        Problem(
            "live_too_long",
            f"{keys.LIVE} holds {length} events; ARTICLES_LIVE_EVENTS allows about {keep}",
            entry=keys.LIVE,
        )
    ]
