"""The audit as a whole: each family of checks in turn, then the re-read of its suspects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis

from articles.operations.audit import article_checks, comment_confirm, comment_lists, comments
from articles.operations.audit.archive import archive_audit, archived_left_out
from articles.operations.audit.article_karma import article_karma_audit
from articles.operations.audit.comment_search import comment_search_audit
from articles.operations.audit.common import (
    Problem,
    chunks,
    cid,
    index_types,
    indexed_article_ids,
    redis_now,
    wrong_type,
)
from articles.operations.audit.confirm import Judge, Unit, confirmed, identity
from articles.operations.audit.domains import domain_audit, domain_read
from articles.operations.audit.flags import flags_audit
from articles.operations.audit.group_rankings import group_rank_audit
from articles.operations.audit.groups import group_read, groups_audit
from articles.operations.audit.inboxes import inbox_audit
from articles.operations.audit.indexes import (
    link_and_poster_audit,
    link_read,
    linked_read,
    submitted_read,
)
from articles.operations.audit.karma import comment_karma_audit
from articles.operations.audit.live import live_audit
from articles.operations.audit.personal import personal_audit
from articles.operations.audit.rankings import top_audit
from articles.operations.audit.search_index import (
    search_index_audit,
    search_read,
    search_stale_read,
)
from articles.store import keys
from articles.store.connection import get_connection


def invariant_audit(
    *,
    now: float | None = None,
    batch: int = 500,
    progress: Callable[[int, int], None] | None = None,
) -> list[Problem]:
    """Every broken invariant of SPEC §1, plus voter sets without their expiry, indexes
    that disagree with the article hashes, keys of the wrong type and values that are not
    counts or times, and the replies inboxes' faults (inboxes.INBOX_KINDS). Reads only;
    works on book data too; never stops at bad data.
    The window is judged by Redis' clock, as the scripts judge it (`now` fixes it).
    `progress(done, total)` is called after each batch of articles (check_votes' bar)."""
    conn = get_connection()
    fixed, now = now, redis_now(conn) if now is None else now
    problems, broken = index_types(conn)
    ids = indexed_article_ids(conn, broken)
    found, memberships = groups_audit(conn, broken)
    problems += found
    ids.update(memberships)
    ordered = sorted(ids)
    done = 0
    for chunk in chunks(ordered, batch):
        problems += article_checks.audit_chunk(conn, chunk, memberships, now, broken)
        done += len(chunk)
        if progress is not None:
            progress(done, len(ordered))
    problems += link_and_poster_audit(conn, ordered, now, batch)
    problems += search_index_audit(conn, ordered, batch)
    problems += domain_audit(conn, ordered, batch)
    problems = confirmed(
        conn,
        problems,
        fixed,
        unit_of=_found_unit,
        start=lambda unit: frozenset(memberships.get(unit[1], ())) if unit[0] == "article" else "",
        read=lambda pipe, unit, guess: _found_read(pipe, unit, guess, broken),
    )
    return archived_left_out(
        problems
        + comment_audit(conn, now=fixed, batch=batch)
        + comment_search_audit(conn, batch)
        + top_audit(batch=batch)
        + group_rank_audit(batch=batch)
        + comment_karma_audit(batch=batch)
        # a figure follows its submitted:<pk>: one reported wrong is repaired first
        + article_karma_audit(
            batch=batch,
            skip={p.entry for p in problems if p.kind in ("unsubmitted", "submitted_stale")},
        )
        + personal_audit(conn)
        + inbox_audit(conn, batch=batch)
        + flags_audit(conn, batch)
        + live_audit(conn)
        + archive_audit(conn, batch)
    )


# The family of an article, index or search problem: what a re-read of it covers.
_UNITS: dict[str, str] = {
    **dict.fromkeys(article_checks.ARTICLE_KINDS, "article"),
    "link_stale": "link",
    "link_unindexed": "linked",
    "link_shared": "linked",
    "submitted_stale": "submitted",
    "unsubmitted": "submitted",
    "search_unindexed": "search",
    "search_stale": "search_stale",
    "unregistered_group": "group",
    "domain_stale": "domain",
    "domain_unindexed": "domain",
}


def _found_unit(problem: Problem) -> Unit | None:
    """What a re-read of an article, index or search problem covers (None: keep it)."""
    family, article_id, entry = _UNITS.get(problem.kind), problem.article_id, problem.entry
    if family in ("article", "linked", "search") and article_id is not None:
        return (family, article_id)
    if family == "link" and entry:
        return (family, entry)
    if family in ("submitted", "search_stale", "domain") and article_id and entry:
        return (family, entry, article_id)
    if family == "group" and problem.group:
        return (family, problem.group)
    return None


def _found_read(pipe: redis.client.Pipeline, unit: Unit, guess: Any, broken: set[str]) -> Judge:
    kind = unit[0]
    if kind == "article":
        return article_checks.article_read(pipe, unit[1], guess, broken)
    if kind == "link":
        return link_read(pipe, unit[1], guess)
    if kind == "linked":
        return linked_read(pipe, unit[1], guess or ("", ""))
    if kind == "submitted":
        return submitted_read(pipe, unit[1], unit[2])
    if kind == "search":
        return search_read(pipe, unit[1], guess or ())
    if kind == "search_stale":
        return search_stale_read(pipe, unit[1], unit[2])
    if kind == "domain":
        return domain_read(pipe, unit[1], unit[2])
    return group_read(pipe, unit[1])


def comment_audit(
    conn: redis.Redis, *, now: float | None = None, batch: int = 500
) -> list[Problem]:
    """Every broken comment invariant (COMMENT_KINDS), plus comment keys of the wrong
    type and comment hashes no script can use (report only). Reads only; each fault is
    confirmed by a consistent re-read of its comment before it is reported (see
    confirm). `now` fixes the clock the windows are judged by (else Redis')."""
    at = redis_now(conn) if now is None else now
    ids = sorted({i for k in conn.scan_iter(match=keys.COMMENT_SCAN, count=1000) if (i := cid(k))})
    problems, rows, unknown = _comment_hashes(conn, ids, batch)
    article_ids = sorted({row.article_id for row in rows.values()})
    pipe = conn.pipeline(transaction=False)
    for article_id in article_ids:
        pipe.hmget(keys.article(article_id), "time", "comments")
    replies = pipe.execute(raise_on_error=False)
    found = comments.comment_articles(zip(article_ids, replies, strict=True))
    faults, expected, live = comments.comment_rules(rows, found)
    problems += faults
    problems += comment_lists.comment_indexes_audit(conn, expected, unknown, batch)
    problems += comment_lists.comment_voters_audit(conn, live, found, rows, at, batch)
    return _comments_confirmed(conn, problems, rows, now)


def _comment_hashes(
    conn: redis.Redis, ids: list[int], batch: int
) -> tuple[list[Problem], dict[int, comments.CommentRow], set[str]]:
    """The problems of the comment hashes that cannot be read, the rows of the others, and
    the members of the former (their entries are left alone)."""
    problems: list[Problem] = []
    rows: dict[int, comments.CommentRow] = {}
    unknown: set[str] = set()
    for chunk in chunks(ids, batch):
        pipe = conn.pipeline(transaction=False)
        for comment_id in chunk:
            pipe.hgetall(keys.comment(comment_id))
        replies = pipe.execute(raise_on_error=False)
        read, bad = comments.comment_rows(zip(chunk, replies, strict=True))
        rows.update(read)
        unknown.update(bad)
        for member, fault in bad.items():
            if fault is None:
                problems.append(wrong_type(member, keys.text(conn.type(member)), "hash"))
            else:
                problems.append(Problem("comment_bad", fault, entry=member))
    return problems, rows, unknown


def _comments_confirmed(
    conn: redis.Redis,
    problems: list[Problem],
    rows: dict[int, comments.CommentRow],
    now: float | None,
) -> list[Problem]:
    """The comment problems a consistent re-read shows, in the order they were found."""
    related = comment_confirm.related_ids(rows)

    def start(unit: Unit) -> comment_confirm.Reads:
        return comment_confirm.needed(unit, rows, related=related)

    counts = [p for p in problems if p.kind == "comment_count"]
    kept = confirmed(
        conn,
        [p for p in problems if p.kind != "comment_count"],
        now,
        unit_of=comment_confirm.comment_unit,
        start=start,
        read=comment_confirm.comment_read,
    )
    # A count is re-read against the lists in one step (comment_tally.lua) where they
    # hold nothing wrong, else with its article's comments (writes may outrun that).
    listed_right = comment_lists.lists_right(kept, rows)
    kept += confirmed(
        conn,
        counts,
        now,
        unit_of=comment_confirm.comment_unit,
        start=lambda unit: comment_confirm.TALLY if listed_right(unit[1]) else start(unit),
        read=comment_confirm.comment_read,
    )
    order = {identity(p): i for i, p in reversed(list(enumerate(problems)))}
    return sorted(kept, key=lambda p: order.get(identity(p), len(problems)))
