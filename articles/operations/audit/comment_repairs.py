"""The repairs of the comments (check_votes --repair): each step one small script that
judges from what the store holds when it runs (comment_repair.lua)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from redis import Redis

from articles import conf
from articles.errors import StoreCorrupt
from articles.operations.audit.comments import COMMENT_KINDS
from articles.operations.audit.common import Problem, redis_now
from articles.operations.audit.runner import comment_audit
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.services import comment_content
from articles.types import Status

# The kinds mended by re-deriving one whole comment from its hash.
_WHOLE_COMMENT = frozenset(
    {"comment_orphan", "comment_parent", "comment_tombstone", "comment_votes"}
)


def comment_repair(problems: Iterable[Problem], *, now: float | None = None) -> int:
    """Mend the comment problems of an audit, each with one small script that judges
    from what the store holds when it runs (comment_repair.lua). Returns how many
    steps changed something. Counts go last, after the entries they count."""
    conn = get_connection()
    now = redis_now(conn) if now is None else now
    changed = 0
    for key, args in _comment_steps([p for p in problems if p.kind in COMMENT_KINDS], now):
        for _ in range(scripts.ATTEMPTS):
            reply = _step(conn, key, args)
            if int(reply[0]) != Status.RETRY:
                break
        if int(reply[0]) == Status.OK:
            changed += int(reply[1])
    return changed


# The comments of a thread one step of an article's count reads (a few ms of HMGETs).
COUNT_STEP = 500


def _step(conn: Redis, key: str, args: list[object]) -> list[Any]:
    """One repair, by as many script calls as it takes: a count walks its thread a
    COUNT_STEP at a time, each call going on from where the one before stopped."""
    if args[0] != "count":
        return list(scripts.COMMENT_REPAIR(keys=[key], args=_as_read(args), client=conn))
    args = ["count", 0, 0, "", "", COUNT_STEP]
    while True:
        reply = scripts.COMMENT_REPAIR(keys=[key], args=args, client=conn)
        if int(reply[0]) != Status.OK or len(reply) == 2:
            return list(reply)
        args = ["count", *reply[2:], COUNT_STEP]


def _as_read(args: list[object]) -> list[object]:
    """A "comment" step's arguments with the words and seen of its text as read (a
    comment removed entirely leaves comment search by them: comment_repair.lua)."""
    if args[0] != "comment":
        return args
    try:
        return [*args, *comment_content(int(str(args[3])))]
    except StoreCorrupt:
        return [*args, "", ""]  # not a hash: the script reports it


def _comment_steps(problems: list[Problem], now: float) -> Iterator[tuple[str, list[object]]]:
    """(key, args) of each comment_repair.lua call, in order: whole comments, then stale
    entries and voter sets, then the counts."""
    window = conf.window()
    members = {p.entry for p in problems if p.kind in _WHOLE_COMMENT and p.entry}
    members |= {p.member for p in problems if p.kind == "comment_index" and p.member}
    for member in sorted(members, key=lambda m: keys.comment_id_or_none(m) or 0):
        comment_id = keys.comment_id_or_none(member)
        if comment_id is not None:
            yield member, ["comment", now, window, comment_id]
    for p in problems:
        if p.kind == "comment_stale" and p.entry and p.member is not None:
            yield p.entry, ["stale", p.member]
        elif p.kind == "comment_stale_voters" and p.entry:
            yield p.entry, ["voters", p.member or ""]
    for p in problems:
        step = _count_step(p)
        if step is not None:
            yield step


def _count_step(p: Problem) -> tuple[str, list[object]] | None:
    if p.kind == "comment_replies" and p.entry:
        comment_id = keys.comment_id_or_none(p.entry)
        return (p.entry, ["replies", comment_id]) if comment_id is not None else None
    if p.kind == "comment_count" and p.entry:
        return p.entry, ["count"]
    return None


def comments_repair_all(*, rounds: int = 4) -> list[Problem]:
    """Audit and repair the comments until the audit finds nothing a repair can mend (a
    removal can leave a count to fix), at most `rounds` times; returns what is left."""
    conn = get_connection()
    left: list[Problem] = []
    for _ in range(rounds):
        left = [p for p in comment_audit(conn) if p.kind in COMMENT_KINDS]
        if not left:
            return left
        comment_repair(left)
    return left
