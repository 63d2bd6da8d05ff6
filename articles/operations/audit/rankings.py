"""The audit, repair and backfill of the kept top-of-period rankings (votes:<period>).

The rule (selectors/rankings.py gives the design): while a period is kept, votes:<p>
holds exactly the members of votes: that come after the period's frontier in time:'s
order (score, then member), each with its votes: score. top_audit() checks that rule in
bounded chunks: time: from the frontier on (members missing or wrong), then votes:<p>
itself (members that should not be there); each suspect is then read again in one
MULTI/EXEC and reported only if still wrong, so writes racing the walk raise no alarm.
top_repair() backfills every period not kept yet (top_fill.lua, a bounded step a call)
and puts the reported members right (top_fix.lua, the writes' own rule, in one script a
batch). invariant_audit() includes top_audit()'s problems (TOP_KINDS); check_votes --repair
backfills first and calls top_repair() after its own repairs (which may rewrite votes:).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import cast

import redis

from articles.errors import StoreCorrupt
from articles.operations.audit.common import Problem, fill_steps, frontier_of
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status

FILL_STEP = 100  # articles a backfill step copies (p50 0.4 ms at 1M articles: bench/rankings.py)
FIX_BATCH = 200  # articles top_fix.lua puts right a call


def _scored(conn: redis.Redis, key: str, start: int, size: int) -> list[tuple[str, float]]:
    """Members start .. start + size - 1 of a zset (by index) with their scores."""
    rows = cast(
        list[tuple[bytes, float]], conn.zrange(key, start, start + size - 1, withscores=True)
    )
    return [(keys.text(m), float(score)) for m, score in rows]


def _after(t: float, frontier: tuple[float, str]) -> bool | None:
    """Whether an article posted at t belongs after the frontier (as after_frontier() in
    _lib.lua); None inside the tie a trim stopped in (either way is right there)."""
    ft, fm = frontier
    if t != ft:
        return t > ft
    return True if fm == "" else None


def _judge(
    t: float | None, net: float | None, have: float | None, frontier: tuple[float, str]
) -> str | None:
    """What is wrong with one member of votes:<p> (None: nothing): its time: and votes:
    scores, what votes:<p> holds, the period's frontier."""
    after = None if t is None else _after(t, frontier)
    if t is not None and after is None:
        return None  # inside the tie a trim stopped in: the next trim judges it
    if t is None or net is None or not after:
        return None if have is None else "top_extra"
    if have is None:
        return "top_missing"
    return None if have == net else "top_wrong"


def top_audit(*, batch: int = 500) -> list[Problem]:
    """Every member missing from, extra in or wrong in a kept period's zset, confirmed.
    A period not kept yet (its reads rebuild) or being backfilled is not a fault."""
    conn = get_connection()
    problems: list[Problem] = []
    for period in keys.PERIODS:
        problems += _period_audit(conn, period, batch)
    return problems


def _period_audit(conn: redis.Redis, period: str, batch: int) -> list[Problem]:
    zset = keys.period_votes(period)
    pipe = conn.pipeline(transaction=False)
    for key in (zset, keys.PERIOD_STATE, keys.TIME, keys.VOTES):
        pipe.type(key)
    pipe.hmget(keys.PERIOD_STATE, [period, f"{period}:fill"])
    *kinds, (front, fill) = pipe.execute()
    wanted = {zset: "zset", keys.PERIOD_STATE: "hash", keys.TIME: "zset", keys.VOTES: "zset"}
    wrong = [
        (key, keys.text(kind), want)
        for (key, want), kind in zip(wanted.items(), kinds, strict=True)
        if keys.text(kind) not in ("none", want)
    ]
    if wrong:  # the main audit reports time: and votes:; this one its own keys
        return [
            Problem("wrong_type", f"{key} is a {kind}, not a {want}", entry=key)
            for key, kind, want in wrong
            if key in (zset, keys.PERIOD_STATE)
        ]
    if front is None or fill is not None:
        return []
    frontier = frontier_of(front)
    suspects = _walk_time(conn, zset, frontier, batch) | _walk_period(conn, zset, frontier, batch)
    return _confirmed(conn, period, suspects)


def _walk_time(conn: redis.Redis, zset: str, frontier: tuple[float, str], batch: int) -> set[str]:
    """Members of time: from the frontier on whose votes:<p> entry is not what votes: says."""
    start = conn.zcount(keys.TIME, "-inf", f"({frontier[0]!r}")
    suspects: set[str] = set()
    while rows := _scored(conn, keys.TIME, start, batch):
        members = [m for m, _ in rows]
        pipe = conn.pipeline(transaction=False)
        pipe.zmscore(keys.VOTES, members)
        pipe.zmscore(zset, members)
        nets, held = pipe.execute()
        for (member, t), net, have in zip(rows, nets, held, strict=True):
            if _judge(t, net, have, frontier):
                suspects.add(member)
        start += len(rows)
    return suspects


def _walk_period(conn: redis.Redis, zset: str, frontier: tuple[float, str], batch: int) -> set[str]:
    """Members of votes:<p> that should not be there or hold the wrong score."""
    suspects: set[str] = set()
    start = 0
    while rows := _scored(conn, zset, start, batch):
        members = [m for m, _ in rows]
        pipe = conn.pipeline(transaction=False)
        pipe.zmscore(keys.TIME, members)
        pipe.zmscore(keys.VOTES, members)
        times, nets = pipe.execute()
        for (member, have), t, net in zip(rows, times, nets, strict=True):
            if _judge(t, net, have, frontier):
                suspects.add(member)
        start += len(rows)
    return suspects


def _confirmed(conn: redis.Redis, period: str, suspects: Iterable[str]) -> list[Problem]:
    """The suspects still wrong when read again with the frontier in one MULTI/EXEC."""
    zset = keys.period_votes(period)
    problems = []
    ordered = sorted(suspects, key=lambda m: (keys.article_id_or_none(m) or 0, m))
    for offset in range(0, len(ordered), FIX_BATCH):
        members = ordered[offset : offset + FIX_BATCH]
        pipe = conn.pipeline(transaction=True)
        pipe.hget(keys.PERIOD_STATE, period)
        pipe.zmscore(keys.TIME, members)
        pipe.zmscore(keys.VOTES, members)
        pipe.zmscore(zset, members)
        front, times, nets, held = pipe.execute()
        if front is None:
            return []
        frontier = frontier_of(front)
        for member, t, net, have in zip(members, times, nets, held, strict=True):
            kind = _judge(t, net, have, frontier)
            if kind:
                shown = "nothing" if have is None else f"{have:g}"
                should = "nothing" if kind == "top_extra" else f"{net:g}"
                problems.append(
                    Problem(
                        kind,
                        f"{zset} has {shown} for {member}, the rule says {should}",
                        keys.article_id_or_none(member),
                        entry=zset,
                        member=member,
                    )
                )
    return problems


def top_backfill(
    *, now: float | None = None, step: int = FILL_STEP, client: redis.Redis | None = None
) -> int:
    """Build every period not kept yet, a bounded step (top_fill.lua) a call, until all
    are kept. Returns the articles copied. Safe to run while the site writes and reads,
    and to run again after an interruption (it goes on from its cursor). `client`: another
    store than the site's (the benchmarks' stores)."""
    conn = client or get_connection()
    copied = 0
    for period in keys.PERIODS:
        call_keys = [keys.TIME, keys.VOTES, keys.period_votes(period), keys.PERIOD_STATE]
        args = [period, "" if now is None else now, step]
        copied += fill_steps(partial(scripts.TOP_FILL, keys=call_keys, args=args, client=conn))
    return copied


def top_repair(
    problems: Iterable[Problem] | None = None,
    *,
    now: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Backfill the periods not kept yet, then put right the members of `problems` (by
    default: what top_audit() finds), FIX_BATCH a script call. Returns the entries
    changed. A key of the wrong type is left for a person (reported, never written)."""
    top_backfill(now=now)
    found = top_audit() if problems is None else list(problems)
    members = sorted(
        {p.member for p in found if p.kind in TOP_KINDS and p.member},
        key=lambda m: (keys.article_id_or_none(m) or 0, m),
    )
    conn, changed = get_connection(), 0
    for offset in range(0, len(members), FIX_BATCH):
        chunk = members[offset : offset + FIX_BATCH]
        reply = scripts.TOP_FIX(
            keys=[keys.TIME, keys.VOTES, *keys.PERIOD_KEYS], args=chunk, client=conn
        )
        try:
            raise_for_status(reply)
        except StoreCorrupt:  # as in top_backfill: reported by the audit, never written
            break
        changed += int(reply[1])
        if progress is not None:
            progress(offset + len(chunk))
    return changed


TOP_KINDS = frozenset({"top_missing", "top_extra", "top_wrong"})
