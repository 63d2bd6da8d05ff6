"""The audit, repair and backfill of the kept article karma (article_karma:<pk>).

The rule: a user's figure is the sum of the votes: scores of the articles in
submitted:<pk> (an article held for its flags is out of votes:, so counts 0 until it is
put back); the write scripts keep it in the step that moves one of those scores or
entries (article_karma_open/close in _lib.lua). No figure means not kept yet: a store
written before the figure existed, or by the book's code. Reads then sum at most
selectors.KARMA_SUM_MAX articles (exact below that), so article_karma_backfill() builds
each missing figure in bounded steps (karma_fill.lua, FILL_STEP articles a call),
which the writes keep right as it goes.

article_karma_audit() reads each user with a figure or a submitted:<pk>, in batches, and
confirms each figure that disagrees with its sum by a consistent re-read: WATCH the
figure, sum the articles (ZRANGE and ZMSCORE in chunks, each call bounded), then an empty
MULTI/EXEC that fails if a write moved the figure meanwhile (every script that moves the
sum moves a kept figure). article_karma_repair() backfills first, then writes each wrong
figure under the same WATCH. The audit's own repairs of votes: and submitted:<pk>
(article_repair, index_entries_repair) do not move figures: check_votes --repair runs
this after them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import redis

from articles.operations.audit import figures
from articles.operations.audit.common import Problem, chunks, wrong_type
from articles.store import keys, scripts
from articles.store.connection import get_connection, is_wrong_type
from articles.types import Status

ARTICLE_KARMA_KINDS = frozenset({"article_karma"})
FILL_STEP = 500  # articles a karma_fill.lua call adds up (one ZMSCORE of that many)
_SUBMITTED_SCAN = "submitted:*"


def article_karma_audit(*, batch: int = 500, skip: Iterable[str | None] = ()) -> list[Problem]:
    """Each kept figure that disagrees with its sum (confirmed), and each figure key (or
    the fill state) of the wrong type. A figure not kept yet is no fault, nor one whose
    submitted:<pk> is in `skip` (reported wrong itself: the repair rebuilds the figure
    after mending it). Reads only."""
    conn = get_connection()
    problems: list[Problem] = []
    kind = keys.text(conn.type(keys.ARTICLE_KARMA_FILL))
    if kind not in ("hash", "none"):
        problems.append(wrong_type(keys.ARTICLE_KARMA_FILL, kind, "hash"))
    suspects, skipped = [], set(skip)
    for chunk in chunks(_users(conn), batch):
        for pk, figure in figures.figures(conn, keys.article_karma, chunk, None).items():
            if isinstance(figure, Problem):
                problems.append(figure)
            elif figure is None or keys.submitted(pk) in skipped:
                continue
            elif figure != _sum(conn, pk, batch):
                suspects.append(pk)
    settle = lambda pk: _settled(conn, pk, batch, write=False)  # noqa: E731
    return problems + figures.confirmed(suspects, settle, _problem)


def article_karma_backfill(*, step: int = FILL_STEP, client: redis.Redis | None = None) -> int:
    """Build every figure not kept yet (a user with a submitted:<pk> and no
    article_karma:<pk>), a bounded karma_fill.lua step a call; returns the figures
    built. Safe while the site writes, and to run again after an interruption (it goes
    on from its cursor). A user whose keys are of the wrong type is left to the audit's
    report. `client`: another store than the site's (the benchmarks' stores)."""
    conn, built = client or get_connection(), 0
    for chunk in chunks(_users(conn), 500):
        pipe = conn.pipeline(transaction=False)
        for pk in chunk:
            pipe.exists(keys.article_karma(pk))
        kept = pipe.execute()
        built += sum(_fill(conn, pk, step) for pk, k in zip(chunk, kept, strict=True) if not k)
    return built


def _fill(conn: redis.Redis, pk: int, step: int) -> bool:
    """Run karma_fill.lua for one user until its figure is kept; False when refused."""
    while True:
        reply = scripts.KARMA_FILL(
            keys=[keys.article_karma(pk), keys.submitted(pk), keys.VOTES, keys.ARTICLE_KARMA_FILL],
            args=[pk, step],
            client=conn,
        )
        if reply[0] != Status.OK:  # BAD_DATA: the audit reports it, nothing is written over
            return False
        if int(reply[1]):
            return True


def article_karma_repair(problems: Iterable[Problem] | None = None, *, batch: int = 500) -> int:
    """Backfill the figures not kept yet, then write each wrong one from its sum (by
    default: what the audit finds now), one MULTI/EXEC under WATCH of the figure each;
    returns the figures built or written. A key of the wrong type is left for a person."""
    built = article_karma_backfill()
    found = article_karma_audit(batch=batch) if problems is None else list(problems)
    conn = get_connection()
    written = figures.rewritten(
        found, ARTICLE_KARMA_KINDS, lambda pk: _settled(conn, pk, batch, write=True)
    )
    return built + written


def _users(conn: redis.Redis) -> list[int]:
    """Every user with a figure or a submitted:<pk>."""
    return figures.users(conn, (keys.ARTICLE_KARMA_SCAN, _SUBMITTED_SCAN))


def _sum(conn: redis.Redis, pk: int, batch: int) -> int | None:
    """The votes: scores of the articles in submitted:<pk>, `batch` a call (two bounded
    calls each); None when a key is of the wrong type (the other audits report it)."""
    total, start = 0, 0
    try:
        while True:
            found = cast(list[bytes], conn.zrange(keys.submitted(pk), start, start + batch - 1))
            members = [keys.text(m) for m in found]
            if members:
                scores = conn.zmscore(keys.VOTES, members)
                total += sum(int(s) for s in scores if s is not None)
            if len(members) < batch:
                return total
            start += batch
    except redis.ResponseError as exc:
        if not is_wrong_type(exc):
            raise
        return None


def _settled(conn: redis.Redis, pk: int, batch: int, *, write: bool) -> tuple[int, int] | None:
    """(figure, sum) read with no write moving the figure in between (figures.settled);
    with `write`, the sum is written. None too when the figure is not kept."""

    def written(pipe: redis.client.Pipeline, total: int) -> None:
        pipe.set(keys.article_karma(pk), total)

    return figures.settled(
        conn,
        keys.article_karma(pk),
        lambda: _sum(conn, pk, batch),
        absent=None,
        write=written if write else None,
    )


def _problem(pk: int, figure: int, total: int) -> Problem:
    key = keys.article_karma(pk)
    shown = "not a count" if figure == figures.NOT_A_COUNT else str(figure)
    detail = f"{key} is {shown}, not {total} (net votes on the user's articles)"
    return Problem("article_karma", detail, entry=key)
