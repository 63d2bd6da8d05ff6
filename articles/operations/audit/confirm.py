"""Confirming what the audit suspects, by an atomic re-read of each suspect's item.

The audit reads in batches while the site writes, so an invariant spanning several keys
read at different moments can look broken when a write landed between the reads. Each
suspect is therefore read again, just the keys of its one item, inside a MULTI/EXEC (no
write lands inside it), judged by the same rules, and reported only if that consistent
read shows the fault too. When the read names other keys than those it read (a
comment's parent, a link's holder, an article's search words), it is repeated with
those, at most RECHECKS times; an item still changing then is left for the next run.
Up to RECHECK_BATCH items share one MULTI/EXEC: its work is bounded by that many items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import redis

from articles.operations.audit.common import Problem, chunks

RECHECKS = 5
RECHECK_BATCH = 100
Unit = tuple[Any, ...]  # what one re-read covers: ("article", id), ("comment", id), ...
# Given the replies of what a reader queued and the clock, (None, the problems) or (the
# keys to read instead, []).
Judge = Callable[[list[Any], float], tuple[Any, list[Problem]]]
Reader = Callable[[redis.client.Pipeline, Unit, Any], Judge]


def confirmed(
    conn: redis.Redis,
    problems: list[Problem],
    now: float | None,
    *,
    unit_of: Callable[[Problem], Unit | None],
    start: Callable[[Unit], Any],
    read: Reader,
) -> list[Problem]:
    """The problems a consistent re-read of their item shows (as it shows them). One with
    no unit (a fault of one key, seen in one read: a wrong type, a bad value) is kept.
    `start(unit)` is the keys to read first; `read(pipe, unit, those)` queues the reads
    and returns their judge. `now` fixes the clock (else Redis' TIME, read alongside)."""
    pending: dict[Unit, Any] = {}
    for problem in problems:
        unit = unit_of(problem)
        if unit is not None and unit not in pending:
            pending[unit] = start(unit)
    reread: dict[Unit, list[Problem]] = {}
    for _ in range(RECHECKS):
        for chunk in chunks(list(pending.items()), RECHECK_BATCH):
            _reread(conn, chunk, now, read, pending, reread)
    kept: list[Problem] = []
    for problem in problems:
        unit = unit_of(problem)
        if unit is None:
            kept.append(problem)
        else:
            kept += [again for again in reread.get(unit, ()) if same(problem, again)]
    return kept


def _reread(
    conn: redis.Redis,
    chunk: Sequence[tuple[Unit, Any]],
    now: float | None,
    read: Reader,
    pending: dict[Unit, Any],
    reread: dict[Unit, list[Problem]],
) -> None:
    """Re-read the items of `chunk` in one MULTI/EXEC: each judged one leaves `pending`
    for `reread`, each that names other keys stays pending with those."""
    pipe = conn.pipeline(transaction=True)
    pipe.time()
    judges = []
    for unit, guess in chunk:
        first = len(pipe)
        judge = read(pipe, unit, guess)
        judges.append((unit, judge, first, len(pipe)))
    replies = pipe.execute(raise_on_error=False)
    at = _clock(now, replies[0])
    for unit, judge, first, end in judges:
        again, found = judge(replies[first:end], at)
        if again is None:
            reread[unit] = found
            del pending[unit]
        else:
            pending[unit] = again


def same(a: Problem, b: Problem) -> bool:
    return identity(a) == identity(b)


def identity(p: Problem) -> tuple[object, ...]:
    """What a problem is about (its detail may change between reads)."""
    return (p.kind, p.article_id, p.group, p.entry, p.member)


def _clock(now: float | None, reply: object) -> float:
    """The fixed `now`, else the TIME read in the same MULTI/EXEC."""
    if now is not None:
        return now
    seconds, micros = cast(tuple[int, int], reply)
    return seconds + micros / 1_000_000
