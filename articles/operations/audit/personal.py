"""The audit of the readers' own lists (hidden:<pk>, saved:<pk>, saved_comments:<pk>,
upvoted:<pk>): each a zset of items of the one kind it holds (article:<id>, or
comment:<id> for saved comments), no longer than its cap (keys.*_KEEP).

An item deleted since it went in is no fault: the lists outlive their items (a read
leaves it out) until the cap pushes it out. A list of the wrong type is reported and left
alone (REPORT_ONLY as every wrong_type); personal_repair() trims a list past its cap to
its newest and takes out members that name no item, each one command (atomic).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import redis

from articles.operations.audit.common import Problem, wrong_type
from articles.store import keys
from articles.store.connection import get_connection

PERSONAL_KINDS = frozenset({"personal_over_cap", "personal_bad_member"})


def _parser(pattern: str) -> Callable[[str], int | None]:
    return (
        keys.comment_id_or_none
        if pattern.startswith("saved_comments:")
        else keys.article_id_or_none
    )


def _lists(conn: redis.Redis) -> Iterable[tuple[str, int, Callable[[str], int | None]]]:
    """(key, cap, member parser) of every list keys.py forms (SCAN, never KEYS); a key of
    the same prefix naming no user is none of ours."""
    for pattern, keep in keys.PERSONAL_SCANS.items():
        prefix = pattern.removesuffix("*")
        for raw in conn.scan_iter(match=pattern, count=1000):
            key = keys.text(raw)
            if keys.user_id_or_none("user:" + key.removeprefix(prefix)) is not None:
                yield key, keep, _parser(pattern)


def personal_audit(conn: redis.Redis | None = None) -> list[Problem]:
    """The lists of the wrong type, past their cap, or holding a member of another kind."""
    conn = conn or get_connection()
    problems: list[Problem] = []
    for key, keep, parse in _lists(conn):
        kind = keys.text(conn.type(key))
        if kind not in ("zset", "none"):
            problems.append(wrong_type(key, kind, "zset"))
            continue
        size = int(conn.zcard(key))
        if size > keep:
            detail = f"{key} holds {size} items, more than its cap of {keep}"
            problems.append(Problem("personal_over_cap", detail, entry=key))
        for raw, _ in conn.zscan_iter(key, count=1000):
            member = keys.text(raw)
            if parse(member) is None:
                detail = f"{key} holds {member!r}, which names no item it can list"
                problems.append(Problem("personal_bad_member", detail, entry=key, member=member))
    return problems


def personal_repair(problems: Iterable[Problem]) -> int:
    """Mend what personal_audit() found: trim a list to its newest `cap`, take out a bad
    member. Returns how many problems were mended."""
    conn = get_connection()
    caps = {pattern.removesuffix("*"): keep for pattern, keep in keys.PERSONAL_SCANS.items()}
    mended = 0
    for problem in problems:
        key = problem.entry or ""
        try:
            if problem.kind == "personal_over_cap":
                keep = next(c for prefix, c in caps.items() if key.startswith(prefix))
                conn.zremrangebyrank(key, 0, -keep - 1)
            elif problem.kind == "personal_bad_member" and problem.member is not None:
                conn.zrem(key, problem.member)
            else:
                continue
        except redis.ResponseError:
            continue  # another type since: the next audit reports it
        mended += 1
    return mended
