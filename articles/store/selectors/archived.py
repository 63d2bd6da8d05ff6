"""Reads of archived articles (store/archive.py): the database rows of articles whose hash
left Redis, decoded exactly as their hashes were (Article.from_hash, Comment.from_hash), so
every page shows them as before. Each read is one query for the rows a page needs (a
listing's missing ids, one article, a search's words), a thread a few a level."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db.models import CharField, Count
from django.db.models.functions import Cast

from articles import conf
from articles.store import keys
from articles.types import (
    Article,
    BadArticle,
    Comment,
    CommentOrder,
    ThreadPage,
    Vote,
)


def _raw(fields: dict[str, str]) -> dict[bytes, bytes]:
    return {k.encode(): str(v).encode() for k, v in fields.items()}


def _article(article_id: int, fields: dict[str, str], user_id: int | None) -> Article | None:
    try:
        found = Article.from_hash(
            article_id,
            _raw(fields),
            score=None,
            window=conf.window(),
            vote_score=conf.vote_score(),
            my_vote=Vote.NONE if user_id else None,  # its voter sets expired with voting
        )
    except BadArticle:
        return None
    return replace(found, archived=True)


def archived_articles(ids: list[int], user_id: int | None = None) -> dict[int, Article]:
    """The archived articles among `ids`, by id: one query (none while archiving is off)."""
    if not ids or conf.archive_after() is None:
        return {}
    from articles.models import ArchivedArticle

    rows = ArchivedArticle.objects.filter(id__in=ids).values_list("id", "fields")
    found = {i: _article(i, f, user_id) for i, f in rows}
    return {i: a for i, a in found.items() if a is not None}


def archived_comments(ids: list[int], user_id: int | None = None) -> dict[int, Comment]:
    """The archived comments among `ids` with their articles' titles, by id: one query."""
    if not ids or conf.archive_after() is None:
        return {}
    from articles.models import ArchivedComment

    rows = ArchivedComment.objects.filter(id__in=ids).values_list("id", "fields", "article__fields")
    found: dict[int, Comment] = {}
    for cid, fields, article in rows:
        try:
            found[cid] = Comment.from_hash(
                cid,
                _raw(fields),
                my_vote=Vote.NONE if user_id else None,
                article_title=str(article.get("title", "")),
            )
        except BadArticle:
            continue
    return found


def archived_titles(article_ids: list[int]) -> dict[int, str]:
    """The titles of the archived articles among `article_ids`: one query."""
    return {i: a.title for i, a in archived_articles(article_ids).items()}


def archived_thread(
    *,
    article: Article,
    order: CommentOrder,
    number: int,
    size: int,
    focus_id: int | None,
    user_id: int | None,
    now: float | None,
) -> ThreadPage | None:
    """comment_thread's page of an archived article, built as comment_thread.lua builds it:
    the root ordering's page, each comment followed depth-first by its replies in the same
    order down to the display depth, replies taken while the row budget lasts; `more` where
    replies were left out. None when the focus is not one of its comments.

    The rows read are bounded by the page, not the thread: the page's roots, then a level
    at a time (at most the display depth) the reply counts of that level's comments and
    the replies the budget may take. Depth-first, the replies taken at one level are, in
    that level's order, whole lists of replies and then one part of a list, never more
    than the budget; so a level reads at most that many, some perhaps not shown (the
    budget the levels below use first is known only once they are read)."""
    from articles.models import ArchivedComment

    comments = ArchivedComment.objects.filter(article_id=article.id)
    listed = comments.filter(best__gte=0)  # in no ordering: the thread never showed it
    if order is CommentOrder.NEW:
        ordering: tuple[str, ...] = ("-id",)
    else:
        # ZREVRANGE: highest score first, equal scores by member (comment:<id>), in reverse
        listed = listed.annotate(member=Cast("id", CharField()))
        ordering = ("-best", "-member")
    fields_of: dict[int, dict[str, str]] = {}
    if focus_id is not None:
        focus_fields = comments.filter(id=focus_id).values_list("fields", flat=True).first()
        if focus_fields is None:
            return None
        fields_of[focus_id] = focus_fields
    count = listed.filter(parent=focus_id).count()
    start = (number - 1) * size
    level = [
        _keep(fields_of, cid, fields)
        for cid, fields in listed.filter(parent=focus_id)
        .order_by(*ordering)[start : start + size]
        .values_list("id", "fields")
    ]
    roots, depth = level, 1 if focus_id is not None else 0
    budget, display = conf.comment_page_rows(), conf.comment_display_depth()
    counts: dict[int | None, int] = {}  # by parent: every parent read is a comment
    kids: dict[int | None, list[int]] = {}
    while level:
        counts.update(
            listed.filter(parent__in=level)
            .order_by()
            .values("parent")
            .annotate(n=Count("id"))
            .values_list("parent", "n")
        )
        if depth + 1 >= display:
            break  # their replies are never shown: the counts say where `more` goes
        whole, part, left = [], None, budget
        for cid in level:
            n = counts.get(cid, 0)
            if n and left > 0:
                if n <= left:
                    whole.append(cid)
                else:
                    part = cid
                left -= min(n, left)
        read = listed.order_by(*ordering).values_list("id", "parent", "fields")
        found = list(read.filter(parent__in=whole)) if whole else []
        if part is not None:
            found += read.filter(parent=part)[: budget - sum(counts[c] for c in whole)]
        for cid, parent, fields in found:
            kids.setdefault(parent, []).append(_keep(fields_of, cid, fields))
        level, depth = [kid for cid in level for kid in kids.get(cid, [])], depth + 1

    viewer = Vote.NONE if user_id else None
    items: list[Comment] = []

    def row(cid: int, more: bool = False) -> int:
        try:
            items.append(Comment.from_hash(cid, _raw(fields_of[cid]), my_vote=viewer, more=more))
        except BadArticle:
            return -1
        return len(items) - 1

    def emit(cid: int, level: int) -> None:
        nonlocal budget
        at = row(cid)
        replies = counts.get(cid, 0)
        if at < 0 or not replies:
            return
        if level + 1 >= display or budget <= 0:
            items[at] = replace(items[at], more=True)
            return
        taken = kids.get(cid, [])[:budget]  # every reply the budget takes was read
        budget -= len(taken)
        if replies > len(taken):
            items[at] = replace(items[at], more=True)
        for kid in taken:
            emit(kid, level + 1)

    if focus_id is not None:
        row(focus_id)
    for cid in roots:
        emit(cid, 1 if focus_id is not None else 0)
    focus = None
    if focus_id is not None:
        if not items or items[0].id != focus_id:
            return None
        focus, items = items[0], items[1:]
    del now  # an archived article's voting and commenting closed for good
    return ThreadPage(
        items=items,
        number=number,
        count=count,
        per_page=size,
        article=article,
        order=order,
        focus=focus,
        voting_open=False,
        commenting_open=False,
    )


def _keep(fields_of: dict[int, dict[str, str]], cid: int, fields: dict[str, str]) -> int:
    fields_of[cid] = fields
    return cid


def archived_feed(article_id: int, limit: int) -> list[Comment]:
    """article_comments_feed of an archived article: its newest visible comments of every
    depth (one query)."""
    from articles.models import ArchivedComment

    rows = ArchivedComment.objects.filter(article_id=article_id).order_by("-time", "-id")
    found: list[Comment] = []
    for cid, fields, article in rows.values_list("id", "fields", "article__fields").iterator():
        if fields.get("state"):
            continue
        title = str(article.get("title", ""))
        try:
            found.append(Comment.from_hash(cid, _raw(fields), article_title=title))
        except BadArticle:
            continue
        if len(found) >= limit:
            break
    return found


def merged_search(
    conn: Any,
    members: list[bytes],
    count: int,
    *,
    order: str,
    include: tuple[str, ...] | list[str],
    exclude: tuple[str, ...] | list[str],
    group: str,
    earliest: str,
    start: int,
    stop: int,
) -> tuple[list[bytes], int]:
    """Ranks start..stop of a search over Redis and the archive together, and the count
    of both: `members` are Redis' ranks 0..stop in `order` ("score", "time", "votes");
    the archive gives its top stop + 1 (two queries: the rows, the count), and both are
    merged by the order's value, equal values by member in reverse, as ZREVRANGE orders
    them. One more round trip reads the Redis members' score: and time:."""
    from articles.models import ArchivedArticle, ArchivedWord

    rows = ArchivedArticle.objects.all()
    for word in include:
        rows = rows.filter(id__in=ArchivedWord.objects.filter(word=word).values("article_id"))
    for word in exclude:
        rows = rows.exclude(id__in=ArchivedWord.objects.filter(word=word).values("article_id"))
    if group:
        rows = rows.filter(groups__contains=f",{group},")
    if earliest:
        rows = rows.filter(time__gte=float(earliest))
    column = {"score": "score", "time": "time", "votes": "net"}[order]
    top = list(rows.order_by(f"-{column}", "-id").values_list("id", column)[: stop + 1])
    total = rows.count() if len(top) > stop else len(top)
    if not top:
        return members[start : stop + 1], count
    pipe = conn.pipeline(transaction=False)
    pipe.zmscore(keys.SCORE, members or [b""])
    pipe.zmscore(keys.TIME, members or [b""])
    scores, times = pipe.execute()
    values = []
    for score, posted in zip(scores, times, strict=False):
        value = {"score": score, "time": posted}.get(order)
        if order == "votes" and score is not None and posted is not None:
            value = (score - posted) / conf.vote_score()
        values.append(value)
    found = [(float(v), keys.article(i).encode()) for i, v in top]
    return _merged(members, values, found, count, total, start, stop)


def _merged(
    members: list[bytes],
    values: list[Any],
    found: list[tuple[float, bytes]],
    count: int,
    total: int,
    start: int,
    stop: int,
) -> tuple[list[bytes], int]:
    """Ranks start..stop of Redis' `members` (with their order's `values`) and the
    archive's `found` (value, member) together, highest first, equal values by member in
    reverse (as ZREVRANGE); and the count of both (`count` Redis', `total` the archive's)."""
    ranked = [(float(v or 0.0), m) for v, m in zip(values, members, strict=False)]
    listed = set(members)
    for value, member in found:
        if member in listed:  # a search cached while it was archived names it
            total -= 1
        else:
            ranked.append((value, member))
    ranked.sort(reverse=True)
    return [m for _, m in ranked[start : stop + 1]], count + total


def merged_comment_search(
    conn: Any,
    members: list[bytes],
    count: int,
    *,
    include: tuple[str, ...] | list[str],
    exclude: tuple[str, ...] | list[str],
    earliest: str,
    start: int,
    stop: int,
) -> tuple[list[bytes], int]:
    """merged_search of comments, newest first: Redis' ranks 0..stop of the visible
    comments holding the words (comments: gives their times), the archive's top stop + 1
    (ArchivedCommentWord: the postings comment_postings:<word> held)."""
    from articles.models import ArchivedComment, ArchivedCommentWord

    rows = ArchivedComment.objects.all()
    for word in include:
        found = ArchivedCommentWord.objects.filter(word=word).values("comment_id")
        rows = rows.filter(id__in=found)
    for word in exclude:
        found = ArchivedCommentWord.objects.filter(word=word).values("comment_id")
        rows = rows.exclude(id__in=found)
    if earliest:
        rows = rows.filter(time__gte=float(earliest))
    top = list(rows.order_by("-time", "-id").values_list("id", "time")[: stop + 1])
    total = rows.count() if len(top) > stop else len(top)
    if not top:
        return members[start : stop + 1], count
    times = conn.zmscore(keys.COMMENTS, members) if members else []
    found_rows = [(float(t), keys.comment(i).encode()) for i, t in top]
    return _merged(members, times, found_rows, count, total, start, stop)


def is_archived(article_id: int) -> bool:
    """Whether the article is archived (one query; False while archiving is off): what a
    write finding no hash asks before it answers."""
    if conf.archive_after() is None:
        return False
    from articles.models import ArchivedArticle

    return ArchivedArticle.objects.filter(id=article_id).exists()


def comment_archived(comment_id: int) -> bool:
    """Whether the comment is one of an archived article's (one query)."""
    if conf.archive_after() is None:
        return False
    from articles.models import ArchivedComment

    return ArchivedComment.objects.filter(id=comment_id).exists()
