"""The replies inboxes (inbox:<pk>, inbox_state:<pk>): each a zset of comment:<id> numbered
from its state's `seq`, and its state hash (seq, read, digest), always together.

A fault reported: a key of the wrong type; a state whose fields are not whole numbers, or
read or digest above seq; an inbox without its state or a state without its inbox; an
entry that is not a comment:<id>, numbered above seq, or naming a comment deleted or gone
(comment_delete.lua, delete.lua and article_purge.lua take them out as they go); an inbox
longer than ARTICLES_INBOX_SIZE (a lowered bound: the next reply trims it). Each entry
fault is confirmed by an atomic re-read (MULTI/EXEC) of that entry and its comment, so a
reply deleted while the audit runs is not reported. check_votes --repair (inbox_repair)
takes entries at fault out and trims a long inbox; a key of the wrong type or a bad state
is left for a person (an entry at fault goes unshown anyway: selectors.inbox).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

import redis

from articles import conf
from articles.operations.audit.common import WHOLE, Problem, chunks, wrong_type
from articles.store import keys
from articles.store.connection import get_connection

INBOX_KINDS = frozenset({"inbox_bad", "inbox_stale", "inbox_long"})
_STATE_FIELDS = ("seq", "read", "digest")


def inbox_audit(conn: redis.Redis, *, batch: int = 500) -> list[Problem]:
    """Every fault of the replies inboxes (SCAN, bounded reads a call)."""
    owners = set(_owners(conn, keys.INBOX_SCAN, "inbox:"))
    owners |= set(_owners(conn, keys.INBOX_STATE_SCAN, "inbox_state:"))
    problems: list[Problem] = []
    for chunk in chunks(sorted(owners), batch):
        problems += _inboxes(conn, chunk, batch)
    return problems


def _owners(conn: redis.Redis, pattern: str, prefix: str) -> Iterator[int]:
    for raw in conn.scan_iter(match=pattern, count=1000):
        pk = keys.text(raw).removeprefix(prefix)
        if pk.isascii() and pk.isdigit() and pk[0] != "0" and len(pk) <= 18:
            yield int(pk)


def _inboxes(conn: redis.Redis, owners: Sequence[int], batch: int) -> list[Problem]:
    # One MULTI/EXEC: a reply's script makes (and a deletion empties) both keys at once.
    pipe = conn.pipeline(transaction=True)
    for pk in owners:
        pipe.type(keys.inbox(pk))
        pipe.type(keys.inbox_state(pk))
        pipe.hmget(keys.inbox_state(pk), *_STATE_FIELDS)
        pipe.zcard(keys.inbox(pk))
    replies = pipe.execute(raise_on_error=False)
    problems: list[Problem] = []
    readable: list[tuple[int, int]] = []  # (pk, seq) of the inboxes whose entries to read
    for n, pk in enumerate(owners):
        zkind, hkind, state, size = replies[4 * n : 4 * n + 4]
        zkind, hkind = keys.text(zkind), keys.text(hkind)
        inbox, home = keys.inbox(pk), keys.inbox_state(pk)
        if zkind not in ("zset", "none"):
            problems.append(wrong_type(inbox, zkind, "zset"))
        if hkind not in ("hash", "none"):
            problems.append(wrong_type(home, hkind, "hash"))
        if zkind not in ("zset", "none") or hkind not in ("hash", "none"):
            continue
        if (zkind == "none") != (hkind == "none"):
            lone, other = (home, inbox) if zkind == "none" else (inbox, home)
            problems.append(Problem("inbox_bad", f"{lone} without {other}", entry=lone))
            continue
        if zkind == "none":
            continue
        # As the scripts count (bad_counts): digits only, no "3.0"; none negative.
        values = [_count(v) for v in state]
        bad = [
            f for f, raw, v in zip(_STATE_FIELDS, state, values, strict=True) if raw and v is None
        ]
        seq = values[0] or 0
        if bad:
            problems.append(
                Problem("inbox_bad", f"{', '.join(bad)} not a whole number", entry=home)
            )
            continue
        if any((v or 0) > seq for v in values[1:]):
            problems.append(Problem("inbox_bad", f"read or digest above seq {seq}", entry=home))
        if int(size) > conf.inbox_size():
            detail = f"{size} replies, more than ARTICLES_INBOX_SIZE {conf.inbox_size()}"
            problems.append(Problem("inbox_long", detail, entry=inbox))
        readable.append((pk, seq))
    for pk, _ in readable:
        problems += _entries(conn, pk, batch)
    return problems


def _count(raw: bytes | None) -> int | None:
    text = keys.text(raw) if raw is not None else ""
    return int(text) if WHOLE.fullmatch(text) and int(text) >= 0 else None


def _entries(conn: redis.Redis, pk: int, batch: int) -> list[Problem]:
    """The entries of one inbox at fault: read a page at a time with the state's seq (one
    MULTI/EXEC: a reply added meanwhile is not above it), each suspect then re-read with
    its comment in one MULTI/EXEC."""
    inbox = keys.inbox(pk)
    problems: list[Problem] = []
    for start in range(0, int(conn.zcard(inbox)), batch):
        pipe = conn.pipeline(transaction=True)
        pipe.zrange(inbox, start, start + batch - 1, withscores=True)
        pipe.hget(keys.inbox_state(pk), "seq")
        raw, raw_seq = pipe.execute(raise_on_error=False)
        if isinstance(raw, Exception):
            continue  # its type changed meanwhile: the next audit reports it
        page = cast("list[tuple[bytes, float]]", raw)
        seq = _count(raw_seq) or 0
        suspects = []
        for raw, score in page:
            member = keys.text(raw)
            if keys.comment_id_or_none(member) is None:
                problems.append(Problem("inbox_bad", "not a comment", entry=inbox, member=member))
            elif score != int(score) or score > seq or score < 1:
                detail = f"numbered {score}, not 1 to seq {seq}"
                problems.append(Problem("inbox_bad", detail, entry=inbox, member=member))
            else:
                suspects.append(member)
        problems += _stale(conn, inbox, suspects)
    return problems


def _stale(conn: redis.Redis, inbox: str, members: list[str]) -> list[Problem]:
    """The entries naming a comment gone or no longer visible, as one atomic read shows."""
    pipe = conn.pipeline(transaction=False)
    for member in members:
        pipe.hget(member, "state")
        pipe.exists(member)
    first = pipe.execute(raise_on_error=False)
    found = []
    for n, member in enumerate(members):
        state, exists = first[2 * n : 2 * n + 2]
        if not exists or (isinstance(state, bytes) and state):
            found.append(member)
    problems = []
    for member in found:
        with conn.pipeline(transaction=True) as again:
            again.zscore(inbox, member)
            again.hget(member, "state")
            again.exists(member)
            score, state, exists = again.execute(raise_on_error=False)
        if score is None:
            continue  # taken out meanwhile
        if not exists:
            problems.append(Problem("inbox_stale", "names no comment", entry=inbox, member=member))
        elif isinstance(state, bytes) and state:
            what = f"names a comment {keys.text(state)}"
            problems.append(Problem("inbox_stale", what, entry=inbox, member=member))
    return problems


def inbox_repair() -> int:
    """Mend what the inbox audit finds now (check_votes --repair runs it after the comment
    repairs, which may leave entries naming comments they removed): each entry at fault
    leaves its inbox, an inbox left empty takes its state with it, and an inbox longer
    than ARTICLES_INBOX_SIZE is trimmed to its newest; each one MULTI/EXEC under WATCH.
    A key of the wrong type or a bad state is left for a person. Returns how many."""
    conn = get_connection()
    mended = 0
    for problem in inbox_audit(conn):
        inbox = problem.entry or ""
        owner = keys.user_id_or_none("user:" + inbox.removeprefix("inbox:"))
        if owner is None or not inbox.startswith("inbox:"):
            continue
        if problem.kind == "inbox_long":
            mended += _mend(conn, inbox, keys.inbox_state(owner), None)
        elif problem.member and problem.kind in ("inbox_stale", "inbox_bad"):
            mended += _mend(conn, inbox, keys.inbox_state(owner), problem.member)
    return mended


def _mend(conn: redis.Redis, inbox: str, state: str, member: str | None) -> int:
    """Take `member` out of `inbox`, and its state with it if that empties it (None: trim
    the inbox to its bound). A reply added meanwhile changes the inbox: read again."""
    with conn.pipeline() as pipe:
        while True:
            try:
                pipe.watch(inbox)
                if pipe.type(inbox) != b"zset":
                    return 0
                last = member is not None and pipe.zscore(inbox, member) is not None
                last = last and int(pipe.zcard(inbox)) == 1
                pipe.multi()
                if member is None:
                    pipe.zremrangebyrank(inbox, 0, -(conf.inbox_size() + 1))
                else:
                    pipe.zrem(inbox, member)
                if last:
                    pipe.delete(state)
                pipe.execute()
                return 1
            except redis.WatchError:
                continue
