"""The flags (flags:<item>) and the staff queue (flagged:): each item with flags is queued
with their number, and nothing else is queued. A held item (`held` on its hash) is
judged with its article or comment (article_checks: out of every ranking)."""

from __future__ import annotations

import redis

from articles.errors import Conflict
from articles.operations.audit.common import Problem, chunks
from articles.store import keys, scripts
from articles.store.connection import get_connection

FLAG_KINDS = frozenset({"flag_count"})


def flags_audit(conn: redis.Redis, batch: int = 500) -> list[Problem]:
    """Every item whose flags and queue entry disagree, confirmed by an atomic re-read
    (a flag landing between the walk's reads is no fault). Reads only; SCAN, no KEYS."""
    queued = {keys.text(m): int(s) for m, s in conn.zscan_iter(keys.FLAGGED, count=1000)}
    members = set(queued)
    for key in conn.scan_iter(match=keys.FLAGS_SCAN, count=1000):
        try:
            members.add(keys.flagged_member_of(keys.text(key)))
        except ValueError:
            continue
    suspects = []
    for chunk in chunks(sorted(members), batch):
        pipe = conn.pipeline(transaction=False)
        for member in chunk:
            pipe.hlen(keys.flags(member))
        for member, count in zip(chunk, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(count, int) and (count or None) != queued.get(member):
                suspects.append(member)
    problems = []
    for member in suspects:
        count, score = _read(conn, member)
        if count != score:
            detail = f"{count} flags, queued with {score if score is not None else 'none'}"
            problems.append(Problem("flag_count", detail, entry=keys.flags(member), member=member))
    return problems


def _read(conn: redis.Redis, member: str) -> tuple[int | None, int | None]:
    """(flags or None for none, its queue entry or None), read in one MULTI/EXEC."""
    pipe = conn.pipeline(transaction=True)
    pipe.hlen(keys.flags(member))
    pipe.zscore(keys.FLAGGED, member)
    count, score = pipe.execute()
    return (int(count) or None), (None if score is None else int(score))


def flags_repair(problems: list[Problem]) -> None:
    """Queue each item of `problems` with its flags' number, or take it out of the queue
    when it has none: one MULTI/EXEC under WATCH of its flags each."""
    conn = get_connection()
    for problem in problems:
        if problem.kind != "flag_count" or not problem.member:
            continue
        member = problem.member
        with conn.pipeline(transaction=True) as pipe:
            for _ in range(scripts.ATTEMPTS):
                try:
                    pipe.watch(keys.flags(member))
                    count = int(pipe.hlen(keys.flags(member)))
                    pipe.multi()
                    if count:
                        pipe.zadd(keys.FLAGGED, {member: count})
                    else:
                        pipe.zrem(keys.FLAGGED, member)
                    pipe.execute()
                    break
                except redis.WatchError:
                    continue
            else:
                raise Conflict()
