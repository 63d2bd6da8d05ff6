"""The checks of the groups: the registry (groups:) against the group:<name> sets."""

from __future__ import annotations

from typing import Any

import redis

from articles.operations.audit.common import Problem, scan_groups, wrong_type
from articles.operations.audit.confirm import Judge
from articles.store import keys
from articles.store.connection import get_connection


def group_memberships() -> dict[int, set[str]]:
    """Article id -> the groups whose sets hold it, read from every group:* set."""
    return scan_groups(get_connection())[0]


def groups_audit(conn: redis.Redis, broken: set[str]) -> tuple[list[Problem], dict[int, set[str]]]:
    """The problems of the registry and the group sets, and the memberships those sets
    hold (article id -> the groups)."""
    registry = set() if keys.GROUPS in broken else {keys.text(k) for k in conn.hkeys(keys.GROUPS)}
    problems = _registered_bad_names(registry)
    memberships, names, bad, wrong = scan_groups(conn)
    problems += [Problem("bad_group_name", f"group key {key!r}") for key in bad]
    problems += [wrong_type(key, kind, "set") for key, kind in wrong]
    if keys.GROUPS not in broken:
        problems += _unregistered(names - registry)
    return problems, memberships


def _registered_bad_names(registry: set[str]) -> list[Problem]:
    return [
        Problem(
            "bad_group_name", f"groups: registers {name!r}, not a group name", entry=keys.GROUPS
        )
        for name in sorted(registry)
        if not keys.GROUP_NAME.fullmatch(name)
    ]


def _unregistered(names: set[str]) -> list[Problem]:
    return [
        Problem("unregistered_group", f"group {name} has no registry entry", group=name)
        for name in sorted(names)
    ]


def group_read(pipe: redis.client.Pipeline, name: str) -> Judge:
    """The re-read of an unregistered group: its set and its registry entry."""
    pipe.type(keys.group(name))
    pipe.hexists(keys.GROUPS, name)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        kind, registered = replies
        if keys.text(kind) != "set" or registered:
            return None, []
        return None, _unregistered({name})

    return judge
