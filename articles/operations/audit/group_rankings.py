"""The audit, repair and backfill of the groups' kept rankings (score:<g>, time:<g>).

The rule (ranking_page.lua gives the design): while a group is kept (groups:ranked names
it, no fill running), time:<g> holds exactly the members of group:<g> that time: holds,
with their time: scores, and score:<g> likewise from score:. Our votes carry a score into
the groups the article's `groups` field names at once (group_scores in _lib.lua), so a
score may lag score: only after a vote by the book's code (which leaves votes: short of
the counts, or joined the group without the field naming it), on an article still open
to votes since the group's last vote sweep began (the next sweep takes it in).
group_rank_audit() walks the group's set and both rankings in bounded chunks; each
suspect (any difference) is read again in one MULTI/EXEC, with what tells whose vote
came last, and reported only if still wrong.
group_backfill() fills every registered group not kept yet (group_fill.lua, a bounded
step a call), so no reader pays for it; group_repair() backfills, then puts the reported
members right (group_fix.lua, the writes' own rule).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any, cast

import redis

from articles import conf
from articles.errors import StoreCorrupt
from articles.operations.audit.common import Problem, fill_steps
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status

FILL_STEP = 200  # members a backfill step copies (as a group's first read: its FILL_STEP)
FIX_BATCH = 200  # members group_fix.lua puts right a call
GROUP_RANK_KINDS = frozenset({"group_rank_missing", "group_rank_extra", "group_rank_wrong"})


def _names(conn: redis.Redis) -> list[str]:
    """The groups the registry names or keeps, valid names only (a registry of the wrong
    type is the main audit's report, and read no further)."""
    names: set[str] = set()
    for registry in (keys.GROUPS, keys.GROUP_RANKS):
        if keys.text(conn.type(registry)) == "hash":
            names |= {keys.text(f) for f in conn.hkeys(registry) if b":" not in f}
    return sorted(n for n in names if keys.GROUP_NAME.fullmatch(n))


def _state(raw: list[Any]) -> tuple[float | None, float | None, bool]:
    """began, the running sweep's cursor time (None: none runs), filling."""
    began, at, fill = raw
    return (
        None if began is None else float(began),
        None if at is None else float(keys.text(at).partition(" ")[0]),
        fill is not None,
    )


def _judge(
    inside: bool,
    source: float | None,
    have: float | None,
    t: float | None,
    state: tuple[float | None, float | None, bool],
    scored: bool,
    book: bool,
) -> str | None:
    """What is wrong with a member of one ranking (None: nothing): in the group or not,
    its score: / time: score, what the ranking holds, its post time, the group's state;
    `scored`: the score ranking, whose values may lag a vote still to be swept in, but
    only one by the book's code (`book`: the last vote may be the book's)."""
    want = source if inside else None
    if want is None:
        return None if have is None else "group_rank_extra"
    if have is None:
        return "group_rank_missing"
    if have == want or not scored or not book:
        return None if have == want else "group_rank_wrong"
    began, at, _ = state
    settled = began is None or t is None or t <= began - conf.window()
    if at is not None and t is not None and t >= at:
        settled = False  # the running sweep has not reached it yet
    return "group_rank_wrong" if settled else None


def group_rank_audit(*, batch: int = 500) -> list[Problem]:
    """Every member missing from, extra in or wrong in a kept group's rankings, confirmed.
    A group not kept yet (its first read fills it) or being filled is not a fault."""
    conn = get_connection()
    problems: list[Problem] = []
    for name in _names(conn):
        problems += _group_audit(conn, name, batch)
    return problems


def _group_audit(conn: redis.Redis, name: str, batch: int) -> list[Problem]:
    group, score, time = keys.group_keys(name)[:3]
    wanted = {group: "set", score: "zset", time: "zset", keys.GROUP_RANKS: "hash"}
    pipe = conn.pipeline(transaction=False)
    for key in wanted:
        pipe.type(key)
    pipe.hmget(keys.GROUP_RANKS, [name, f"{name}:at", f"{name}:fill"])
    *kinds, raw = pipe.execute()
    wrong = [
        Problem("wrong_type", f"{key} is a {keys.text(k)}, not a {want}", entry=key)
        for (key, want), k in zip(wanted.items(), kinds, strict=True)
        if keys.text(k) not in ("none", want)
    ]
    if wrong:  # the groups' audit reports group:<g>; this one the rankings
        return [p for p in wrong if p.entry != group]
    state = _state(raw)
    if state[0] is None or state[2]:
        return []
    suspects: set[str] = set()
    cursor = 0
    while True:
        cursor, found = conn.sscan(group, cursor, count=batch)
        suspects |= _suspects(conn, name, [keys.text(m) for m in found], state)
        if not cursor:
            break
    for ranking in (score, time):
        start = 0
        while rows := cast(list[bytes], conn.zrange(ranking, start, start + batch - 1)):
            suspects |= _suspects(conn, name, [keys.text(m) for m in rows], state)
            start += len(rows)
    return _confirmed(conn, name, suspects)


def _read(pipe: redis.client.Pipeline, name: str, members: list[str]) -> None:
    group, score, time = keys.group_keys(name)[:3]
    pipe.smismember(group, members)
    pipe.zmscore(keys.SCORE, members)
    pipe.zmscore(keys.TIME, members)
    pipe.zmscore(score, members)
    pipe.zmscore(time, members)


def _read_votes(pipe: redis.client.Pipeline, members: list[str]) -> None:
    """What tells whose vote came last: each hash's counts and groups, and votes:, which
    our vote scripts set from the counts and the book's code leaves as it was."""
    pipe.zmscore(keys.VOTES, members)
    for member in members:
        pipe.hmget(member, ["votes", "downvotes", "groups"])


def _books(name: str, net_idx: list[Any], rows: list[Any]) -> list[bool]:
    """Per member: may its last vote be the book's (not carried into score:<name> at once)?
    So when votes: is not its net count, or its `groups` field does not name the group."""
    out = []
    for net, row in zip(net_idx, rows, strict=True):
        if isinstance(row, Exception):  # not a hash: the articles' audit reports it
            out.append(True)
            continue
        up, down, groups = row
        try:
            counted = int(up or 0) - int(down or 0)
        except ValueError:
            counted = None
        named = name in keys.text(groups or b"").split(",")
        out.append(net is None or counted is None or net != counted or not named)
    return out


def _faults(
    name: str, members: list[str], replies: list[Any], state: Any, books: list[bool]
) -> Iterable[tuple[str, str, str, float | None, float | None]]:
    """(kind, member, ranking, has, should have) of each fault in one read of members."""
    inside, scores, times, held_s, held_t = replies
    score, time = keys.group_keys(name)[1:3]
    for i, member in enumerate(members):
        for ranking, source, have, scored in (
            (score, scores[i], held_s[i], True),
            (time, times[i], held_t[i], False),
        ):
            kind = _judge(bool(inside[i]), source, have, times[i], state, scored, books[i])
            if kind:
                yield kind, member, ranking, have, source if inside[i] else None


def _suspects(conn: redis.Redis, name: str, members: list[str], state: Any) -> set[str]:
    """Members any of whose entries differs from the rule (a lag included)."""
    if not members:
        return set()
    pipe = conn.pipeline(transaction=False)
    _read(pipe, name, members)
    return {f[1] for f in _faults(name, members, pipe.execute(), state, [False] * len(members))}


def _confirmed(conn: redis.Redis, name: str, suspects: Iterable[str]) -> list[Problem]:
    """The suspects still wrong when read again with the group's state in one MULTI/EXEC."""
    ordered = sorted(suspects, key=lambda m: (keys.article_id_or_none(m) or 0, m))
    problems = []
    for offset in range(0, len(ordered), FIX_BATCH):
        members = ordered[offset : offset + FIX_BATCH]
        pipe = conn.pipeline(transaction=True)
        pipe.hmget(keys.GROUP_RANKS, [name, f"{name}:at", f"{name}:fill"])
        _read(pipe, name, members)
        _read_votes(pipe, members)
        raw, *replies = pipe.execute(raise_on_error=False)
        errors = [r for r in [raw, *replies[:6]] if isinstance(r, Exception)]
        if errors:  # only an article's hash may be of the wrong type here (_books)
            raise errors[0]
        state = _state(raw)
        if state[0] is None or state[2]:
            return []
        books = _books(name, replies[5], replies[6:])
        for kind, member, ranking, have, should in _faults(
            name, members, replies[:5], state, books
        ):
            problems.append(
                Problem(
                    kind,
                    f"{ranking} has {'nothing' if have is None else f'{have:g}'} for "
                    f"{member}, the rule says {'nothing' if should is None else f'{should:g}'}",
                    keys.article_id_or_none(member),
                    group=name,
                    entry=ranking,
                    member=member,
                )
            )
    return problems


def group_backfill(
    *, now: float | None = None, step: int = FILL_STEP, client: redis.Redis | None = None
) -> int:
    """Fill every group not kept yet, a bounded step (group_fill.lua) a call, until all
    are kept. Returns the members read. Safe while the site writes and reads, and to run
    again after an interruption (it goes on from its cursor). `client`: another store than
    the site's (the benchmarks' stores)."""
    conn = client or get_connection()
    copied = 0
    for name in _names(conn):
        call_keys = [*keys.group_keys(name)[:3], keys.SCORE, keys.TIME, keys.GROUP_RANKS]
        args = [name, step, "" if now is None else now]
        copied += fill_steps(partial(scripts.GROUP_FILL, keys=call_keys, args=args, client=conn))
    return copied


def group_repair(problems: Iterable[Problem] | None = None) -> int:
    """Fill the groups not kept yet, then put right the members of `problems` (by default:
    what group_rank_audit() finds), FIX_BATCH a script call. Returns the entries changed.
    A key of the wrong type is left for a person (reported, never written)."""
    group_backfill()
    found = group_rank_audit() if problems is None else list(problems)
    by_group: dict[str, set[str]] = {}
    for p in found:
        if p.kind in GROUP_RANK_KINDS and p.group and p.member:
            by_group.setdefault(p.group, set()).add(p.member)
    conn, changed = get_connection(), 0
    for name, members in sorted(by_group.items()):
        ordered = sorted(members, key=lambda m: (keys.article_id_or_none(m) or 0, m))
        for offset in range(0, len(ordered), FIX_BATCH):
            reply = scripts.GROUP_FIX(
                keys=[*keys.group_keys(name), keys.SCORE, keys.TIME],
                args=ordered[offset : offset + FIX_BATCH],
                client=conn,
            )
            try:
                raise_for_status(reply)
            except StoreCorrupt:
                break
            changed += int(reply[1])
    return changed
