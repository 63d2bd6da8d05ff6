"""The Lua scripts of the store, each loaded once (Sentry-style) and run with client=."""

from __future__ import annotations

from importlib.resources import files

from redis.commands.core import Script

# importlib.resources, not a path beside __file__: the scripts load from a wheel or zip too.
_LUA = files("articles") / "lua"
_LIB = (_LUA / "_lib.lua").read_bytes()


def _load(name: str) -> Script:
    # bytes: with no client yet, redis-py's Script refuses a str source.
    return Script(None, _LIB + (_LUA / f"{name}.lua").read_bytes())  # type: ignore[arg-type]


POST = _load("post")
VOTE = _load("vote")
GROUPS_UPDATE = _load("groups_update")
DELETE = _load("delete")
EDIT = _load("edit")
GROUP_SAVE = _load("group_save")
GROUP_DELETE = _load("group_delete")
RANKING_PAGE = _load("ranking_page")
