"""The moderation log, a page at a time, its targets named."""

from __future__ import annotations

import json
import logging

from articles import conf, validation
from articles.store import keys, replicas
from articles.store.selectors._common import _execute
from articles.types import (
    ModlogEntry,
    ModlogPage,
    valid_time,
)

logger = logging.getLogger("articles.store.selectors")  # the package's one logger


@replicas.reads
def modlog_page(*, page: int | str = 1, per_page: int | None = None) -> ModlogPage:
    """Staff actions, newest first, ARTICLES_MODLOG_PER_PAGE a page, with which of their
    articles, groups and comments still exist. Two round trips (the entries, then their
    targets). Raises InvalidInput."""
    per_page = per_page or conf.modlog_per_page()
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    pipe = replicas.connection().pipeline(transaction=False)
    pipe.llen(keys.MODLOG)
    pipe.lrange(keys.MODLOG, start, start + per_page - 1)
    count, raw = _execute(pipe)
    entries = [entry for entry in map(_modlog_entry, raw) if entry is not None]
    if len(entries) < len(raw):
        logger.warning("modlog: skipped %d malformed entries", len(raw) - len(entries))
    members, comments, names = _modlog_targets(entries)
    live_members: set[str] = set()
    live_names: set[str] = set()
    live_comments: dict[str, int | None] = {}
    if members or comments or names:
        pipe = replicas.connection().pipeline(transaction=False)
        for member in [*members, *comments]:
            pipe.exists(member)
        if names:
            pipe.hmget(keys.GROUPS, names)
        replies = _execute(pipe)
        live_members = {m for m, found in zip(members, replies, strict=False) if found}
        found_comments = replies[len(members) : len(members) + len(comments)]
        live_comments = {
            c: article
            for (c, article), found in zip(comments.items(), found_comments, strict=True)
            if found
        }
        if names:
            live_names = {n for n, d in zip(names, replies[-1], strict=True) if d is not None}
    return ModlogPage(
        items=entries,
        number=number,
        count=int(count),
        per_page=per_page,
        articles=frozenset(live_members),
        groups=frozenset(live_names),
        comments=live_comments,
    )


def _modlog_targets(
    entries: list[ModlogEntry],
) -> tuple[list[str], dict[str, int | None], list[str]]:
    """The article members, comment members (each with the id of the article its entry
    names, if any) and group names a page of log entries names, each once."""
    members: dict[str, None] = {}
    comments: dict[str, int | None] = {}
    names: dict[str, None] = {}
    for entry in entries:
        if keys.article_id_or_none(entry.target) is not None:
            members[entry.target] = None
        elif keys.comment_id_or_none(entry.target) is not None:
            article = entry.details.get("article")
            found = keys.article_id_or_none(article) if isinstance(article, str) else None
            comments[entry.target] = comments.get(entry.target) or found
        elif entry.target.startswith("group:"):
            names[entry.target.removeprefix("group:")] = None
        for side in ("add", "remove"):
            listed = entry.details.get(side)
            for name in listed if isinstance(listed, list) else ():
                names[name] = None
    valid = [n for n in names if validation.is_group_name(n)]
    return list(members), comments, valid


def _modlog_entry(item: bytes) -> ModlogEntry | None:
    """One entry of ours, or None for anything else (written by hand or by other code)."""
    try:
        data = json.loads(item)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    when, details = data.get("time", 0), data.get("details") or {}
    if isinstance(when, bool) or not isinstance(when, int | float) or not valid_time(when):
        return None
    if not isinstance(details, dict):
        return None
    fields = {name: data.get(name, "") for name in ("actor", "action", "target", "reason")}
    if not all(isinstance(value, str) for value in fields.values()):
        return None
    return ModlogEntry(time=float(when), details=details, **fields)
