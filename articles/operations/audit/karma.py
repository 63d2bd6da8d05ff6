"""The audit and repair of comment karma (comment_karma:<pk>).

The rule: a user's figure is the net votes (up - down) on their visible comments (state
"", author user:<pk>); absent means 0. The comment scripts keep it in the step that
changes one of those comments' counts or takes it away (_lib.lua's karma_add); a store
written before the figures existed, or by a restore, is put right here.

comment_karma_audit() reads each user that has a figure or a list of comments
(user_comments:<pk>: the comment audit keeps those right), in batches, and confirms each
suspect by a consistent re-read: WATCH its figure, sum its comments, then an empty
MULTI/EXEC that fails if any write moved the figure meanwhile (every write that moves
the sum moves the figure), so no single call does work that grows with the store.
comment_karma_repair() finds them again and writes each sum under the same WATCH.
"""

from __future__ import annotations

from collections.abc import Iterable

import redis

from articles.operations.audit.common import WHOLE, Problem, chunks, wrong_type
from articles.store import keys, scripts
from articles.store.connection import get_connection

KARMA_KINDS = frozenset({"comment_karma"})
_LIST_SCAN = "user_comments:*"


def comment_karma_audit(*, batch: int = 500) -> list[Problem]:
    """Each figure that disagrees with its user's visible comments (confirmed), and each
    figure key of the wrong type. Reads only."""
    conn = get_connection()
    problems, suspects = [], []
    for chunk in chunks(_users(conn), batch):
        figures = _figures(conn, chunk)
        sums = _sums(conn, chunk, batch)
        for pk in chunk:
            figure = figures[pk]
            if isinstance(figure, Problem):
                problems.append(figure)
            elif sums[pk] is not None and figure != sums[pk]:
                suspects.append(pk)
    for pk in suspects:
        reading = _settled(conn, pk, batch, write=False)
        if reading is not None and reading[0] != reading[1]:
            problems.append(_problem(pk, *reading))
    return problems


def comment_karma_repair(problems: Iterable[Problem] | None = None, *, batch: int = 500) -> int:
    """Write each wrong figure from its user's comments (by default: what the audit finds
    now), one MULTI/EXEC under WATCH of the figure each; returns the figures written. A
    figure of the wrong type is left for a person."""
    found = comment_karma_audit(batch=batch) if problems is None else list(problems)
    conn, written = get_connection(), 0
    for problem in found:
        pk = _pk(problem.entry or "")
        if problem.kind in KARMA_KINDS and pk is not None:
            reading = _settled(conn, pk, batch, write=True)
            written += reading is not None and reading[0] != reading[1]
    return written


def _users(conn: redis.Redis) -> list[int]:
    """Every user with a figure or a list of comments (SCAN, never KEYS)."""
    found: set[int] = set()
    for pattern in (keys.COMMENT_KARMA_SCAN, _LIST_SCAN):
        for raw in conn.scan_iter(match=pattern, count=1000):
            pk = _pk(keys.text(raw))
            if pk is not None:
                found.add(pk)
    return sorted(found)


def _pk(key: str) -> int | None:
    return keys.user_id_or_none("user:" + key.partition(":")[2])


def _figures(conn: redis.Redis, pks: Iterable[int]) -> dict[int, int | Problem]:
    """Each user's figure (absent: 0); a key of the wrong type as its Problem."""
    pks = list(pks)
    pipe = conn.pipeline(transaction=False)
    for pk in pks:
        pipe.type(keys.comment_karma(pk))
        pipe.get(keys.comment_karma(pk))
    replies = pipe.execute(raise_on_error=False)
    found: dict[int, int | Problem] = {}
    for i, pk in enumerate(pks):
        kind, value = keys.text(replies[2 * i]), replies[2 * i + 1]
        if kind not in ("string", "none"):
            found[pk] = wrong_type(keys.comment_karma(pk), kind, "string")
        else:
            found[pk] = _count(value)
    return found


def _count(value: object) -> int:
    """A figure as the scripts read it; one that is not a count is -1 - 2**62 (never a
    sum), so it is reported and rewritten."""
    if value is None:
        return 0
    text = keys.text(value) if isinstance(value, bytes | str) else ""
    return int(text) if WHOLE.fullmatch(text) else -1 - 2**62


def _sums(conn: redis.Redis, pks: Iterable[int], batch: int) -> dict[int, int | None]:
    """Each user's sum: net votes on the comments user_comments:<pk> lists that are
    visible and theirs (karma_part in _lib.lua)."""
    return {pk: _sum(conn, pk, batch) for pk in pks}


def _sum(conn: redis.Redis, pk: int, batch: int) -> int | None:
    """None when user_comments:<pk> is of the wrong type (the comment audit reports it)."""
    try:
        found = conn.zscan_iter(keys.user_comments(pk), count=1000)
        members = [keys.text(m) for m, _ in found]
    except redis.ResponseError as exc:
        if "WRONGTYPE" not in str(exc):
            raise
        return None
    author, total = keys.user(pk), 0
    for chunk in chunks(members, batch):
        pipe = conn.pipeline(transaction=False)
        for member in chunk:
            pipe.hmget(member, "author", "state", "votes", "downvotes")
        for fields in pipe.execute(raise_on_error=False):
            if isinstance(fields, redis.ResponseError) or keys.text(fields[0] or b"") != author:
                continue
            total += _part(*fields[1:])
    return total


def _part(state: bytes | None, votes: bytes | None, downvotes: bytes | None) -> int:
    """A comment's part of its author's figure, as karma_part in _lib.lua counts it."""
    if state:
        return 0
    counts = [keys.text(v or b"") for v in (votes, downvotes)]
    up, down = (int(c) if WHOLE.fullmatch(c) else 0 for c in counts)
    return up - down


def _settled(conn: redis.Redis, pk: int, batch: int, *, write: bool) -> tuple[int, int] | None:
    """(figure, sum) read with no write moving the figure in between; with `write`, the
    sum is written in the same MULTI/EXEC when they differ. None when the key is of the
    wrong type, or the figure kept moving (left for the next run)."""
    key = keys.comment_karma(pk)
    with conn.pipeline(transaction=True) as pipe:
        for _ in range(scripts.ATTEMPTS):
            try:
                pipe.watch(key)
                if keys.text(pipe.type(key)) not in ("string", "none"):
                    return None
                # The sum on another connection: the WATCH stays on this one.
                figure, total = _count(pipe.get(key)), _sum(conn, pk, batch)
                if total is None:
                    return None
                pipe.multi()
                if write and figure != total and total:
                    pipe.set(key, total)
                elif write and figure != total:
                    pipe.delete(key)
                else:
                    pipe.exists(key)  # only to learn whether the figure moved
                pipe.execute()
                return figure, total
            except redis.WatchError:
                continue
    return None


def _problem(pk: int, figure: int, total: int) -> Problem:
    key = keys.comment_karma(pk)
    shown = "missing" if figure == 0 else str(figure) if figure > -(2**62) else "not a count"
    detail = f"{key} is {shown}, not {total} (net votes on the user's visible comments)"
    return Problem("comment_karma", detail, entry=key)
