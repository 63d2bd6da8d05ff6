"""Comment reads: a thread a page at a time, one comment, recent and a user's comments.

A thread page decodes up to ARTICLES_COMMENT_PAGE_ROWS comment hashes (~10 us each in
Python: most of the read's CPU), so comment_thread keeps what it decoded in the content
cache "thread_comments", keyed by all a Comment is made of (its id, every field and value
of its hash as the script returned them, the viewer's vote on it, `more`): never stale,
a changed hash is a new key. Bounded by MAX_THREAD_COMMENTS entries and
MAX_THREAD_COMMENT_BYTES of hash data (its values' bytes, twice: raw and decoded).
"""

from __future__ import annotations

import logging
import re
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
        ],
        client=replicas.connection(),
    )
    status = raise_for_status(reply, allow=(Status.NOT_FOUND, Status.COMMENT_NOT_FOUND))
    if status is Status.NOT_FOUND:
        raise ArticleNotFound()
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
        cid, more, n = int(reply[at]), int(reply[at + 1]), int(reply[at + 2])
        flat = reply[at + 3 : at + 3 + n]
        up, down = reply[at + 3 + n : at + 5 + n]
        at += 5 + n
        _add_kept(items, skipped, cid, flat, _my_vote(viewer, up, down), bool(more))
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
        raise CommentNotFound()
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
    per_page = per_page or conf.comment_list_per_page()
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    found = _comment_rows(keys.user_comments(user_id), "list", start, start + per_page - 1, None)
    return Page(found.items, number, found.count, per_page)


@replicas.reads
def article_comments_feed(*, article_id: int, limit: int = 50) -> list[Comment]:
    """The newest visible comments of an article, of every depth, for its feed (one
    round trip)."""
    try:
        key = keys.article_comments_all(article_id)
    except ValueError:
        raise ArticleNotFound() from None
    return _comment_rows(key, "visible", 0, max(1, limit), None).items


def _comment_rows(
    key: str | list[str], mode: str, start: int, stop: int, user_id: int | None
) -> Page[Comment]:
    viewer = keys.user(user_id) if user_id else ""
    reply = scripts.COMMENT_ROWS(
        keys=[key] if isinstance(key, str) else key,
        args=[mode, start, stop, viewer],
        client=replicas.connection(),
    )
    if raise_for_status(reply, allow=(Status.COMMENT_NOT_FOUND,)) is not Status.OK:
        return Page([], 1, 0, 1)
    items: list[Comment] = []
    skipped: list[str] = []
    at = 2
    while at < len(reply):
        cid, n = int(reply[at]), int(reply[at + 1])
        flat = reply[at + 2 : at + 2 + n]
        title, up, down = reply[at + 2 + n : at + 5 + n]
        at += 5 + n
        vote = _my_vote(viewer, up, down)
        _add_comment(items, skipped, cid, flat, vote, article_title=keys.text(title))
    if skipped:
        logger.warning("Left out of a comment listing for bad data: %s", "; ".join(skipped))
    return Page(items, 1, int(reply[1]), max(1, stop - start + 1))


def _add_comment(
    items: list[Comment],
    skipped: list[str],
    cid: int,
    flat: list[Any],
    my_vote: Vote | None,
    **extra: Any,
) -> None:
    """Decode one comment of a script's flat reply (field, value, ...) onto `items`, or
    name it in `skipped` when its data is bad (the caller logs them once)."""
    try:
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        items.append(Comment.from_hash(cid, fields, my_vote=my_vote, **extra))
    except BadArticle as exc:
        skipped.append(f"{keys.comment(cid)} ({exc})")


def _add_kept(
    items: list[Comment],
    skipped: list[str],
    cid: int,
    flat: list[Any],
    my_vote: Vote | None,
    more: bool,
) -> None:
    """_add_comment() of a thread's comment, from "thread_comments" when it was decoded
    before from the same fields and values."""
    key = (cid, my_vote, more, *flat)
    comment = _decoded.get(key)
    if comment is not None:
        items.append(comment)
        return
    before = len(items)
    _add_comment(items, skipped, cid, flat, my_vote, more=more)
    if len(items) > before:
        size = 2 * sum(len(v) for v in flat if isinstance(v, bytes)) + 512
        _decoded.put(key, items[-1], size=size)


def _my_vote(viewer: str, up: object, down: object) -> Vote | None:
    if not viewer:
        return None
    return Vote.UP if up else Vote.DOWN if down else Vote.NONE
