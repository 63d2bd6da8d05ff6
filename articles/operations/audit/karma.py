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

from articles import conf
from articles.operations.audit import figures
from articles.operations.audit.common import WHOLE, Problem, chunks
from articles.store import keys
from articles.store.connection import get_connection, is_wrong_type

KARMA_KINDS = frozenset({"comment_karma"})
_LIST_SCAN = "user_comments:*"


def comment_karma_audit(*, batch: int = 500) -> list[Problem]:
    """Each figure that disagrees with its user's visible comments (confirmed), and each
    figure key of the wrong type. Reads only."""
    conn = get_connection()
    problems, suspects = [], []
    for chunk in chunks(_users(conn), batch):
        found = _figures(conn, chunk)
        sums = _sums(conn, chunk, batch)
        for pk in chunk:
            figure = found[pk]
            if isinstance(figure, Problem):
                problems.append(figure)
            elif sums[pk] is not None and figure != sums[pk]:
                suspects.append(pk)
    settle = lambda pk: _settled(conn, pk, batch, write=False)  # noqa: E731
    return problems + figures.confirmed(suspects, settle, _problem)


def comment_karma_repair(problems: Iterable[Problem] | None = None, *, batch: int = 500) -> int:
    """Write each wrong figure from its user's comments (by default: what the audit finds
    now), one MULTI/EXEC under WATCH of the figure each; returns the figures written. A
    figure of the wrong type is left for a person."""
    found = comment_karma_audit(batch=batch) if problems is None else list(problems)
    conn = get_connection()
    written = figures.rewritten(
        found, KARMA_KINDS, lambda pk: _settled(conn, pk, batch, write=True)
    )
    return written


def _users(conn: redis.Redis) -> list[int]:
    """Every user with a figure or a list of comments."""
    return figures.users(conn, (keys.COMMENT_KARMA_SCAN, _LIST_SCAN))


def _figures(conn: redis.Redis, pks: Iterable[int]) -> dict[int, int | Problem]:
    """Each user's figure (absent: 0); a key of the wrong type as its Problem."""
    found = figures.figures(conn, keys.comment_karma, list(pks), 0)
    return {pk: figure for pk, figure in found.items() if figure is not None}


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
        if not is_wrong_type(exc):
            raise
        return None
    author, total = keys.user(pk), 0
    for chunk in chunks(members, batch):
        pipe = conn.pipeline(transaction=False)
        for member in chunk:
            pipe.hmget(member, "author", "state", "votes", "downvotes")
        gone = []
        for member, fields in zip(chunk, pipe.execute(raise_on_error=False), strict=True):
            if not isinstance(fields, redis.ResponseError) and fields == [None] * 4:
                gone.append(member)
            if isinstance(fields, redis.ResponseError) or keys.text(fields[0] or b"") != author:
                continue
            total += _part(*fields[1:])
        total += _archived_part(author, gone)
    return total


def _archived_part(author: str, members: list[str]) -> int:
    """The part of archived comments (their rows: store/archive.py) among `members`, whose
    hashes are gone; one query, none while archiving is off."""
    if not members or conf.archive_after() is None:
        return 0
    from articles.models import ArchivedComment

    ids = [i for m in members if (i := keys.comment_id_or_none(m)) is not None]
    rows = ArchivedComment.objects.filter(id__in=ids, author=author).values_list(
        "fields", flat=True
    )
    total = 0
    for fields in rows:
        raw = [fields.get(f) for f in ("state", "votes", "downvotes")]
        total += _part(*(v.encode() if isinstance(v, str) else None for v in raw))
    return total


def _part(state: bytes | None, votes: bytes | None, downvotes: bytes | None) -> int:
    """A comment's part of its author's figure, as karma_part in _lib.lua counts it."""
    if state:
        return 0
    counts = [keys.text(v or b"") for v in (votes, downvotes)]
    up, down = (int(c) if WHOLE.fullmatch(c) else 0 for c in counts)
    return up - down


def _settled(conn: redis.Redis, pk: int, batch: int, *, write: bool) -> tuple[int, int] | None:
    """(figure, sum) read with no write moving the figure in between (figures.settled);
    with `write`, the sum is written (the key deleted at 0)."""

    def written(pipe: redis.client.Pipeline, total: int) -> None:
        if total:
            pipe.set(keys.comment_karma(pk), total)
        else:
            pipe.delete(keys.comment_karma(pk))

    return figures.settled(
        conn,
        keys.comment_karma(pk),
        lambda: _sum(conn, pk, batch),
        absent=0,
        write=written if write else None,
    )


def _problem(pk: int, figure: int, total: int) -> Problem:
    key = keys.comment_karma(pk)
    shown = "missing" if figure == 0 else str(figure) if figure > -(2**62) else "not a count"
    detail = f"{key} is {shown}, not {total} (net votes on the user's visible comments)"
    return Problem("comment_karma", detail, entry=key)
