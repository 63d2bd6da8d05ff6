"""Comment reads: a thread a page at a time, one comment, recent and a user's comments.

A thread page decodes up to ARTICLES_COMMENT_PAGE_ROWS comment hashes (~10 us each in
Python: most of the read's CPU), so comment_thread keeps what it decoded in the content
cache "thread_comments", keyed by all a Comment is made of (its id, the value of each of
THREAD_FIELDS as the script returned them, the viewer's vote on it, `more`): never stale,
a changed hash is a new key. Bounded by MAX_THREAD_COMMENTS entries and
MAX_THREAD_COMMENT_BYTES of hash data (its values' bytes, twice: raw and decoded).
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any

from articles import conf, validation
from articles.caches import Cache, Kind
from articles.errors import (
    ArticleNotFound,
    CommentIdempotencyKeyReused,
    CommentNotFound,
    StoreCorrupt,
)
from articles.store import clock, keys, replicas, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.selectors.archived import (
    archived_articles,
    archived_comments,
    archived_feed,
    archived_thread,
    archived_titles,
)
from articles.types import (
    Article,
    BadArticle,
    Comment,
    CommentOrder,
    Page,
    Status,
    ThreadPage,
    Vote,
)

logger = logging.getLogger("articles.store.selectors")  # the package's one logger

MAX_THREAD_COMMENTS = 8192
MAX_THREAD_COMMENT_BYTES = 16 * 1024 * 1024
# The fields of a comment's hash a row reads (comment_thread.lua's and comment_rows.lua's):
# those Comment.from_hash decodes (a test holds the two together). The scripts read their
# values only: no field names.
THREAD_FIELDS = (
    "article", "parent", "author", "author_name", "text", "time", "edited", "votes",
    "downvotes", "depth", "replies", "state", "reason", "held",
)  # fmt: skip
_FIELD_NAMES = tuple(name.encode() for name in THREAD_FIELDS)
_decoded: Cache[tuple[Any, ...], Comment] = Cache(
    "thread_comments",
    Kind.CONTENT,
    entries=MAX_THREAD_COMMENTS,
    max_bytes=MAX_THREAD_COMMENT_BYTES,
)


@replicas.reads
def comment_thread(
    *,
    article_id: int,
    order: CommentOrder = CommentOrder.BEST,
    page: int | str = 1,
    user_id: int | None = None,
    focus_id: int | None = None,
    now: float | None = None,
) -> ThreadPage:
    """A page of an article's comments, in ONE script call whatever the thread's size:
    the article, ARTICLES_COMMENTS_PER_PAGE top-level comments (with `focus_id`, that
    comment and a page of its replies: a permalink, "continue this thread") in `order`,
    each followed depth-first by its replies in the same order, down to
    ARTICLES_COMMENT_DISPLAY_DEPTH levels and at most ARTICLES_COMMENT_PAGE_ROWS reply
    rows; a comment with replies left out has `more`. With `user_id`, the viewer's vote
    on the article and each comment. Raises InvalidInput (page), ArticleNotFound,
    CommentNotFound (a focus not on this article)."""
    number = validation.clean_page(page, conf.max_page())
    size = conf.comments_per_page()
    start = (number - 1) * size
    try:
        article_key = keys.article(article_id)
    except ValueError:
        raise ArticleNotFound() from None
    new = order is CommentOrder.NEW
    if focus_id is not None:
        try:
            focus_key = keys.comment(focus_id)
        except ValueError:
            raise CommentNotFound() from None
        root = keys.replies_new(focus_id) if new else keys.replies(focus_id)
    else:
        focus_key = article_key
        root = keys.article_comments_new(article_id) if new else keys.article_comments(article_id)
    viewer = keys.user(user_id) if user_id else ""
    reply = scripts.COMMENT_THREAD(
        keys=[
            article_key,
            root,
            keys.voted(article_id),
            keys.voted_down(article_id),
            focus_key,
        ],
        args=[
            order.value,
            start,
            start + size - 1,
            conf.comment_display_depth(),
            conf.comment_page_rows(),
            viewer,
            *THREAD_FIELDS,
        ],
        client=replicas.connection(),
    )
    status = raise_for_status(reply, allow=(Status.NOT_FOUND, Status.COMMENT_NOT_FOUND))
    if status is Status.NOT_FOUND:
        archived = archived_articles([article_id], user_id).get(article_id)
        if archived is None:
            raise ArticleNotFound()
        thread = archived_thread(
            article=archived,
            order=order,
            number=number,
            size=size,
            focus_id=focus_id,
            user_id=user_id,
            now=now,
        )
        if thread is None:
            raise CommentNotFound()
        return thread
    if status is Status.COMMENT_NOT_FOUND:
        raise CommentNotFound()
    count = int(reply[1])
    n = int(reply[2])
    flat = reply[3 : 3 + n]
    at = 3 + n
    up, down = reply[at : at + 2]
    at += 2
    try:
        article = Article.from_hash(
            article_id,
            dict(zip(flat[::2], flat[1::2], strict=True)),
            score=None,
            window=conf.window(),
            vote_score=conf.vote_score(),
            my_vote=_my_vote(viewer, up, down),
        )
    except BadArticle as exc:
        raise StoreCorrupt(article_key, str(exc)) from None
    items: list[Comment] = []
    skipped: list[str] = []
    while at < len(reply):
        cid, more, values, up, down = reply[at : at + 5]
        at += 5
        _add_kept(items, skipped, int(cid), values, _my_vote(viewer, up, down), bool(more))
    if skipped:
        logger.warning("Left out of a thread for bad data: %s", "; ".join(skipped))
    focus = None
    if focus_id is not None:
        if not items or items[0].id != focus_id:
            raise CommentNotFound()
        focus, items = items[0], items[1:]
    moment = clock.now(now)
    return ThreadPage(
        items=items,
        number=number,
        count=count,
        per_page=size,
        article=article,
        order=order,
        focus=focus,
        voting_open=article.voting_open(moment),
        commenting_open=moment < article.time + conf.comment_open_seconds(),
    )


def comment_get(*, comment_id: int, user_id: int | None = None) -> Comment:
    """One comment, with its article's title and the viewer's vote (one round trip).
    Raises CommentNotFound."""
    try:
        member = keys.comment(comment_id)
    except ValueError:
        raise CommentNotFound() from None
    found = _comment_rows(member, "one", 0, 0, user_id)
    if not found.items:
        archived = archived_comments([comment_id], user_id).get(comment_id)
        if archived is None:
            raise CommentNotFound()
        return archived
    return found.items[0]


def comment_post_replay(
    *,
    article_id: int,
    user_id: int,
    idempotency_key: str,
    text: str,
    parent_id: int | None = None,
    author_name: str | None = None,
) -> Comment | None:
    """What an earlier comment_post with this Idempotency-Key made, as it was created
    (even if deleted since), or None when there was none; one GET, so a retry can be
    answered before the rate limit counts it. Raises InvalidInput,
    CommentIdempotencyKeyReused (the key was used for a different request). Without
    `author_name` the comment is read as it is now instead (CommentNotFound if deleted
    since)."""
    text = validation.clean_comment_text(text)
    key = validation.idempotency_key(keys.comment_idempotency, user_id, idempotency_key)
    raw = get_connection().get(key)
    match = _COMMENT_IDEMPOTENT.fullmatch(raw) if isinstance(raw, bytes) else None
    if match is None:
        return None
    comment_id, posted, depth, fingerprint = match.groups()
    if fingerprint.decode() != validation.comment_fingerprint(article_id, parent_id, text):
        raise CommentIdempotencyKeyReused(int(comment_id))
    if author_name is None:
        return comment_get(comment_id=int(comment_id), user_id=user_id)
    return Comment.new_post(
        comment_id=int(comment_id),
        article_id=article_id,
        parent_id=parent_id,
        user_id=user_id,
        author_name=author_name,
        text=text,
        posted=float(posted),
        depth=int(depth),
    )


# comment_idempotency:<pk>:<key> as comment_post.lua writes it: <id>:<time>:<depth>:<fingerprint>
_COMMENT_IDEMPOTENT = re.compile(rb"([1-9][0-9]*):([0-9]+):([0-9]+):([0-9a-f]+)")


@replicas.reads
def recent_comments(
    *, page: int | str = 1, per_page: int | None = None, user_id: int | None = None
) -> Page[Comment]:
    """The site's newest visible comments, with their articles' titles (one round trip),
    ARTICLES_COMMENT_LIST_PER_PAGE a page. Raises InvalidInput (page)."""
    per_page = per_page or conf.comment_list_per_page()
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    found = _comment_rows(keys.COMMENTS, "list", start, start + per_page - 1, user_id)
    return Page(found.items, number, found.count, per_page)


@replicas.reads
def user_comments(
    *, user_id: int, page: int | str = 1, per_page: int | None = None
) -> Page[Comment]:
    """A user's visible comments, newest first, with their articles' titles (one round
    trip), ARTICLES_COMMENT_LIST_PER_PAGE a page. Raises InvalidInput (page)."""
    number, start, stop, per_page = _user_comments_bounds(page, per_page)
    found = _comment_rows(keys.user_comments(user_id), "list", start, stop, None)
    return Page(found.items, number, found.count, per_page)


def _user_comments_bounds(page: int | str, per_page: int | None) -> tuple[int, int, int, int]:
    """(page number, start, stop, per page) of a page of a user's comments."""
    per_page = per_page or conf.comment_list_per_page()
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    return number, start, start + per_page - 1, per_page


@replicas.reads
def article_comments_feed(*, article_id: int, limit: int = 50) -> list[Comment]:
    """The newest visible comments of an article, of every depth, for its feed (one
    round trip)."""
    try:
        key = keys.article_comments_all(article_id)
    except ValueError:
        raise ArticleNotFound() from None
    found = _comment_rows(key, "visible", 0, max(1, limit), None).items
    if not found and conf.archive_after() is not None:
        return archived_feed(article_id, max(1, limit))
    return found


def _comment_rows(
    key: str | list[str], mode: str, start: int, stop: int, user_id: int | None
) -> Page[Comment]:
    reply = scripts.COMMENT_ROWS(
        *_comment_rows_call(key, mode, start, stop, user_id), client=replicas.connection()
    )
    return _comment_rows_of(reply, start, stop, user_id)


def _comment_rows_call(
    key: str | list[str], mode: str, start: int, stop: int, user_id: int | None
) -> tuple[list[str], list[Any]]:
    """comment_rows.lua's keys and arguments."""
    viewer = keys.user(user_id) if user_id else ""
    return [key] if isinstance(key, str) else key, [mode, start, stop, viewer, *THREAD_FIELDS]


def _comment_rows_of(reply: Any, start: int, stop: int, user_id: int | None) -> Page[Comment]:
    """The page of comments in comment_rows.lua's reply."""
    viewer = keys.user(user_id) if user_id else ""
    if raise_for_status(reply, allow=(Status.COMMENT_NOT_FOUND,)) is not Status.OK:
        return Page([], 1, 0, 1)
    items: list[Comment | int] = []
    skipped: list[str] = []
    at = 2
    while at < len(reply):
        cid, values, title, up, down = reply[at : at + 5]
        at += 5
        if not isinstance(values, list):
            items.append(int(cid))  # listed, its hash gone: archived (or deleted since)
            continue
        vote = _my_vote(viewer, up, down)
        fields = _named(values)
        _add_comment(items, skipped, int(cid), fields, vote, article_title=keys.text(title))
    if skipped:
        logger.warning("Left out of a comment listing for bad data: %s", "; ".join(skipped))
    return Page(_with_archived(items, user_id), 1, int(reply[1]), max(1, stop - start + 1))


def _with_archived(items: list[Comment | int], user_id: int | None) -> list[Comment]:
    """A listing's comments with those read from the database (one query for the ids
    whose hash is gone, one for the titles of archived articles), in the listing's order."""
    gone = [i for i in items if isinstance(i, int)]
    kept = [c for c in items if isinstance(c, Comment)]
    if conf.archive_after() is None:
        return kept
    found = archived_comments(gone, user_id)
    untitled = [c.article_id for c in kept if not c.article_title]
    titles = archived_titles(untitled) if untitled else {}
    shown = []
    for item in items:
        if isinstance(item, int):
            if item in found:
                shown.append(found[item])
        elif not item.article_title and item.article_id in titles:
            shown.append(replace(item, article_title=titles[item.article_id]))
        else:
            shown.append(item)
    return shown


def _add_comment(
    items: list[Any],
    skipped: list[str],
    cid: int,
    fields: dict[bytes, Any],
    my_vote: Vote | None,
    **extra: Any,
) -> None:
    """Decode one comment's hash, as a script read it, onto `items`, or name it in
    `skipped` when its data is bad (the caller logs them once)."""
    try:
        items.append(Comment.from_hash(cid, fields, my_vote=my_vote, **extra))
    except BadArticle as exc:
        skipped.append(f"{keys.comment(cid)} ({exc})")


def _named(values: list[Any]) -> dict[bytes, Any]:
    """A comment's hash as Comment.from_hash reads it, from the values of THREAD_FIELDS
    a script's HMGET gave (None where the hash has no such field)."""
    return {name: v for name, v in zip(_FIELD_NAMES, values, strict=True) if v is not None}


def _add_kept(
    items: list[Comment],
    skipped: list[str],
    cid: int,
    values: list[Any],
    my_vote: Vote | None,
    more: bool,
) -> None:
    """_add_comment() of a thread's comment (the values of THREAD_FIELDS, None where the
    hash has no such field), from "thread_comments" when it was decoded before from the
    same values."""
    key = (cid, my_vote, more, *values)
    comment = _decoded.get(key)
    if comment is not None:
        items.append(comment)
        return
    before = len(items)
    _add_comment(items, skipped, cid, _named(values), my_vote, more=more)
    if len(items) > before:
        size = 2 * sum(len(v) for v in values if isinstance(v, bytes)) + 512
        _decoded.put(key, items[-1], size=size)


def _my_vote(viewer: str, up: object, down: object) -> Vote | None:
    if not viewer:
        return None
    return Vote.UP if up else Vote.DOWN if down else Vote.NONE
