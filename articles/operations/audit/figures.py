"""What the audits of the kept per-user figures share (comment_karma:<pk>,
article_karma:<pk>): finding the users, reading the figures, and the consistent re-read
of one figure against its sum (WATCH the figure, sum on another connection, then a
MULTI/EXEC that fails if a write moved the figure meanwhile: every write that moves the
sum moves a kept figure)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import redis

from articles.operations.audit.common import WHOLE, Problem, wrong_type
from articles.store import keys, scripts

NOT_A_COUNT = -1 - 2**62  # a figure that is not a count: never a sum, so always reported


def users(conn: redis.Redis, patterns: Iterable[str]) -> list[int]:
    """Every user with a key of one of the SCAN `patterns` (<prefix>:<pk>), never KEYS."""
    found: set[int] = set()
    for pattern in patterns:
        for raw in conn.scan_iter(match=pattern, count=1000):
            pk = key_pk(keys.text(raw))
            if pk is not None:
                found.add(pk)
    return sorted(found)


def key_pk(key: str) -> int | None:
    """The pk of a "<prefix>:<pk>" key, or None."""
    return keys.user_id_or_none("user:" + key.partition(":")[2])


def count(value: object, absent: int | None) -> int | None:
    """A figure as the scripts read it: `absent` when there is none, NOT_A_COUNT when it
    is not a whole number."""
    if value is None:
        return absent
    text = keys.text(value) if isinstance(value, bytes | str) else ""
    return int(text) if WHOLE.fullmatch(text) else NOT_A_COUNT


def figures(
    conn: redis.Redis, key_of: Callable[[int], str], pks: Sequence[int], absent: int | None
) -> dict[int, int | Problem | None]:
    """Each user's figure (see count); a key of the wrong type as its Problem."""
    pipe = conn.pipeline(transaction=False)
    for pk in pks:
        pipe.type(key_of(pk))
        pipe.get(key_of(pk))
    replies = pipe.execute(raise_on_error=False)
    found: dict[int, int | Problem | None] = {}
    for i, pk in enumerate(pks):
        kind, value = keys.text(replies[2 * i]), replies[2 * i + 1]
        if kind not in ("string", "none"):
            found[pk] = wrong_type(key_of(pk), kind, "string")
        else:
            found[pk] = count(value, absent)
    return found


def settled(
    conn: redis.Redis,
    key: str,
    total: Callable[[], int | None],
    *,
    absent: int | None,
    write: Callable[[redis.client.Pipeline, int], None] | None,
) -> tuple[int, int] | None:
    """(figure, sum) read with no write moving the figure in between; with `write`, it
    writes the sum in the same MULTI/EXEC when they differ. None when a key is of the
    wrong type, the figure is absent and `absent` None (not kept), or it kept moving
    (left for the next run)."""
    with conn.pipeline(transaction=True) as pipe:
        for _ in range(scripts.ATTEMPTS):
            try:
                pipe.watch(key)
                if keys.text(pipe.type(key)) not in ("string", "none"):
                    return None
                # The sum on another connection: the WATCH stays on this one.
                figure, summed = count(pipe.get(key), absent), total()
                if figure is None or summed is None:
                    return None
                pipe.multi()
                if write is not None and figure != summed:
                    write(pipe, summed)
                else:
                    pipe.exists(key)  # only to learn whether the figure moved
                pipe.execute()
                return figure, summed
            except redis.WatchError:
                continue
    return None


def rewritten(
    problems: Iterable[Problem],
    kinds: frozenset[str],
    settle: Callable[[int], tuple[int, int] | None],
) -> int:
    """How many figures of the `kinds` among `problems` `settle(pk)` (a write under
    WATCH) found wrong and wrote."""
    written = 0
    for problem in problems:
        pk = key_pk(problem.entry or "")
        if problem.kind in kinds and pk is not None:
            reading = settle(pk)
            written += reading is not None and reading[0] != reading[1]
    return written


def confirmed(
    suspects: Iterable[int],
    settle: Callable[[int], tuple[int, int] | None],
    problem: Callable[[int, int, int], Problem],
) -> list[Problem]:
    """The `problem(pk, figure, sum)` of each suspect a consistent re-read (`settle`,
    writing nothing) still finds wrong."""
    found = []
    for pk in suspects:
        reading = settle(pk)
        if reading is not None and reading[0] != reading[1]:
            found.append(problem(pk, *reading))
    return found
