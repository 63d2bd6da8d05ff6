"""Article reads: one article, the listings by score and time, a user's articles and karma,
a site's articles."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from articles import validation
from articles.errors import (
    ArticleNotFound,
    ArticleRemoved,
    IdempotencyKeyReused,
)
from articles.store import keys, replicas, scripts
from articles.store.connection import get_connection
from articles.store.selectors._common import (
    _bounds,
    _execute,
    _fetch,
    _page,
    _ranked,
    _ranked_queue,
    _ranked_read,
)
from articles.store.selectors.comments import (
    _comment_rows_call,
    _comment_rows_of,
    _user_comments_bounds,
)
from articles.types import (
    Article,
    NewPost,
    Order,
    Page,
    UserPage,
)

logger = logging.getLogger("articles.store.selectors")  # the package's one logger


def article_post_replay(post: NewPost, *, idempotency_key: str) -> Article | None:
    """What an earlier post with this Idempotency-Key got (the article as it was created,
    even if deleted since), or None when there was none; one GET. Lets a retry be answered
    before the posting limit counts it. Raises InvalidInput, IdempotencyKeyReused (the key
    was used for a different request)."""
    post = validation.clean_new_post(post)
    key = validation.idempotency_key(keys.idempotency, post.user_id, idempotency_key)
    raw = get_connection().get(key)
    match = _IDEMPOTENT.fullmatch(raw) if isinstance(raw, bytes) else None
    if match is None:
        return None  # none, or kept before fingerprints: article_post answers it
    article_id, posted, fingerprint = match.groups()
    if fingerprint.decode() != _fingerprint(post):
        raise IdempotencyKeyReused(int(article_id))
    return Article.new_post(post, article_id=int(article_id), posted=int(posted))


def _fingerprint(post: NewPost) -> str:
    return validation.post_fingerprint(post.title, post.link, post.text, list(post.groups))


# idempotency:<pk>:<key> as post.lua writes it: <article id>:<post time>:<fingerprint>
_IDEMPOTENT = re.compile(rb"([1-9][0-9]*):(-?[0-9]+):([0-9a-f]+)")


@replicas.reads
def article_get(*, article_id: int, user_id: int | None = None) -> Article:
    """One article (one round trip). Raises ArticleNotFound."""
    try:
        keys.article(article_id)
    except ValueError:
        raise ArticleNotFound() from None
    found = _fetch(replicas.connection(), [article_id], user_id, strict=True)
    if not found:
        raise ArticleNotFound()
    return found[0]


def raise_if_removed(*, article_id: int) -> None:
    """Raise ArticleRemoved (410) for a missing article that staff deleted, with when and
    why (removed:, written by the deletion); nothing for one never posted or deleted by
    its poster (a plain 404). One round trip, asked only once the article is missing."""
    try:
        member = keys.article(article_id)
    except ValueError:
        return
    raw = get_connection().hget(keys.REMOVED, member)
    if raw is None:
        return
    try:
        removal = json.loads(raw)
        removed_at, reason = float(removal["time"]), str(removal["reason"])
    except (ValueError, TypeError, KeyError):
        logger.warning("%s: malformed entry for %s", keys.REMOVED, member)
        return  # the plain 404 still holds
    raise ArticleRemoved(removed_at, reason)


@replicas.reads
def article_list(
    *, order: Order = Order.SCORE, page: int | str = 1, user_id: int | None = None
) -> Page[Article]:
    """All articles by score or by time, 25 a page (two round trips), less those the
    reader `user_id` hid. Raises InvalidInput."""
    return _ranked(order.key, page, user_id)


@replicas.reads
def user_article_list(
    *, poster_id: int, page: int | str = 1, user_id: int | None = None
) -> Page[Article]:
    """A user's submissions, newest first, less those the reader `user_id` hid. Two
    round trips."""
    return _ranked(keys.submitted(poster_id), page, user_id)


@replicas.reads
def user_karma(*, user_id: int) -> int:
    """Net votes (up - down) on the user's articles that still exist. One round trip."""
    return user_karmas(user_id=user_id)[0]


# The most articles a karma not kept yet is summed over on a read (user_karma.lua): a
# store written before article_karma:<pk> existed, until check_votes --repair fills it.
KARMA_SUM_MAX = 1000


@replicas.reads
def user_karmas(*, user_id: int) -> tuple[int, int]:
    """(article karma, comment karma): the figures the write scripts keep
    (article_karma:<pk>, comment_karma:<pk>). One round trip, two GETs."""
    reply = scripts.USER_KARMA(*_karma_call(user_id), client=replicas.connection())
    return _karmas_of(reply, user_id)


def _karma_call(user_id: int) -> tuple[list[str], list[int]]:
    """user_karma.lua's keys and arguments for `user_id`."""
    names = [
        keys.article_karma(user_id),
        keys.submitted(user_id),
        keys.VOTES,
        keys.comment_karma(user_id),
    ]
    return names, [KARMA_SUM_MAX]


def _karmas_of(reply: Any, user_id: int) -> tuple[int, int]:
    """user_karmas' answer from user_karma.lua's reply."""
    scripts.raise_for_status(reply)
    if not int(reply[3]):
        logger.warning(
            "karma of user %s is summed over their newest %s articles only until "
            "check_votes --repair fills %s",
            user_id,
            KARMA_SUM_MAX,
            keys.article_karma(user_id),
        )
    return int(reply[1]), int(reply[2])


@replicas.reads
def user_page(
    *, poster_id: int, page: int | str = 1, user_id: int | None = None, comments: int
) -> UserPage:
    """A user page's reads: their submissions newest first (less those the reader
    `user_id` hid), their karma and comment karma, and their newest `comments` comments.
    Two round trips: the four reads in one (user_article_list's first, user_karmas',
    user_comments'), the articles' rows in the second. Raises InvalidInput (page)."""
    number, start, stop = _bounds(page)
    pipe = replicas.connection().pipeline(transaction=False)
    _ranked_queue(pipe, keys.submitted(poster_id), start, stop, user_id)
    scripts.queue(pipe, scripts.USER_KARMA, *_karma_call(poster_id))
    _, first, last, per_page = _user_comments_bounds(1, comments)
    rows_call = _comment_rows_call(keys.user_comments(poster_id), "list", first, last, None)
    scripts.queue(pipe, scripts.COMMENT_ROWS, *rows_call)
    replies = iter(_execute(pipe))
    count, members = _ranked_read(replies, user_id)
    karma, comment_karma = _karmas_of(next(replies), poster_id)
    found = _comment_rows_of(next(replies), first, last, None)
    return UserPage(
        articles=_page(members, number, count, user_id),
        karma=karma,
        comment_karma=comment_karma,
        comments=Page(found.items, 1, found.count, per_page),
    )


@replicas.reads
def domain_article_list(
    *, domain: str, page: int | str = 1, user_id: int | None = None
) -> Page[Article]:
    """The articles linking to a site (validation.link_domain's name), newest first, less
    those the reader `user_id` hid. Two round trips, as every listing. Raises InvalidInput
    (domain, page)."""
    return _ranked(keys.domain(validation.clean_domain(domain)), page, user_id)
