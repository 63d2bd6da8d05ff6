"""The audit of archiving (store/archive.py): archived rows and their ranking entries agree.

An archived article has no hash, its comments none, by design: what the other checks
report of it (a ranking member with no hash, a submitted:<pk> or domain:<d> entry whose
hash does not place it there, a comment list naming a comment with no hash) is judged
here against its database row instead, and left out when the row places it there.
archive_audit() walks every archived row in batches (one query and one pipeline each):
each must be in score: and time: with the scores its row gives; one whose hash is still
in Redis is a run that stopped between its two steps (manage.py archive completes it).
"""

from __future__ import annotations

from collections.abc import Iterable

import redis

from articles import conf, validation
from articles.operations.audit.common import Problem, chunks, wrong_type
from articles.store import keys

ARCHIVE_KINDS = frozenset({"archive_unranked", "archive_wrong", "archive_unfinished"})
# What the other checks say of an archived article or comment, judged here instead.
_EXPECTED = frozenset({"missing_hash", "submitted_stale", "domain_stale", "comment_stale"})
_LISTED = frozenset({"comment_stale", "inbox_stale"})  # a comment list naming a comment


def archive_audit(conn: redis.Redis, batch: int = 500) -> list[Problem]:
    """Each archived row not ranked as its row says, or still with its hash; archive: and
    archive:at of the wrong type. Reads only; no rows while archiving is off (the pages
    read none then either)."""
    from articles.models import ArchivedArticle

    problems = []
    pipe = conn.pipeline(transaction=False)
    pipe.type(keys.ARCHIVE)
    pipe.type(keys.ARCHIVE_AT)
    for key, kind, expected in zip(
        (keys.ARCHIVE, keys.ARCHIVE_AT), pipe.execute(), ("set", "string"), strict=True
    ):
        if keys.text(kind) not in (expected, "none"):
            problems.append(wrong_type(key, keys.text(kind), expected))
    if conf.archive_after() is None:
        return problems  # off: the database is not read (rows are read only while on)
    last = 0
    while True:
        rows = list(
            ArchivedArticle.objects.filter(id__gt=last)
            .order_by("id")
            .values_list("id", "time", "score")[:batch]
        )
        if not rows:
            return problems
        last = rows[-1][0]
        pipe = conn.pipeline(transaction=False)
        for article_id, _, _ in rows:
            member = keys.article(article_id)
            pipe.zscore(keys.SCORE, member)
            pipe.zscore(keys.TIME, member)
            pipe.exists(member)
        replies = pipe.execute()
        for i, (article_id, posted, score) in enumerate(rows):
            ranked, timed, there = replies[3 * i : 3 * i + 3]
            problems += _row_problems(article_id, posted, score, ranked, timed, there)


def _row_problems(
    article_id: int, posted: float, score: float, ranked: object, timed: object, there: object
) -> list[Problem]:
    if there:
        detail = "archived, but its hash is still in Redis: manage.py archive completes it"
        return [Problem("archive_unfinished", detail, article_id)]
    if ranked is None or timed is None:
        return [
            Problem("archive_unranked", "archived, but missing from score: or time:", article_id)
        ]
    if float(ranked) != score or float(timed) != posted:  # type: ignore[arg-type]
        detail = f"archived with score {score} and time {posted}, ranked {ranked} and {timed}"
        return [Problem("archive_wrong", detail, article_id)]
    return []


def archived_left_out(problems: Iterable[Problem], batch: int = 500) -> list[Problem]:
    """`problems` less what the other checks say of an archived article or comment that
    its row explains (a few queries, one a batch of the problems' ids)."""
    from articles.models import ArchivedArticle, ArchivedComment

    problems = list(problems)
    if conf.archive_after() is None:
        return problems
    article_ids = sorted({p.article_id for p in problems if p.kind in _EXPECTED and p.article_id})
    comment_ids = sorted(
        {i for p in problems if p.kind in _LISTED and (i := _comment_id(p.member))}
    )
    articles: dict[int, tuple[str, str]] = {}
    for chunk in chunks(article_ids, batch):
        for article_id, poster, fields in ArchivedArticle.objects.filter(id__in=chunk).values_list(
            "id", "poster", "fields"
        ):
            articles[article_id] = (poster, validation.link_domain(str(fields.get("link", ""))))
    authors: dict[int, str] = {}
    for chunk in chunks(comment_ids, batch):
        authors.update(ArchivedComment.objects.filter(id__in=chunk).values_list("id", "author"))
    return [p for p in problems if not _explained(p, articles, authors)]


def _explained(p: Problem, articles: dict[int, tuple[str, str]], authors: dict[int, str]) -> bool:
    if p.kind in _LISTED:
        cid = _comment_id(p.member)
        if cid is None or cid not in authors:
            return False
        entry = p.entry or ""
        if p.kind == "inbox_stale":  # its hash gone, its row there: the inbox reads it
            return p.detail == "names no comment"
        return entry == keys.COMMENTS or entry == f"user_comments:{authors[cid][5:]}"
    if p.kind not in _EXPECTED or p.article_id not in articles:
        return False
    poster, domain = articles[p.article_id]
    if p.kind == "submitted_stale":
        return p.entry == f"submitted:{poster[5:]}"
    if p.kind == "domain_stale":
        return bool(domain) and p.entry == f"domain:{domain}"
    return True  # missing_hash: its row is its hash now


def _comment_id(member: str | None) -> int | None:
    return keys.comment_id_or_none(member or "")
