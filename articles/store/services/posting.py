"""New articles and comments: the post protocol every front end follows (idempotent replay,
then the rate limit, then the write), and the article's post script."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TypedDict, TypeVar

from articles import conf, validation
from articles.errors import Conflict
from articles.operations import metrics
from articles.operations.replication import replicated
from articles.store import keys, scripts, search, selectors
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import (
    _BATCH,
    _decode,
    _domain_key,
    _given,
    _idempotency_key,
    _link_owner,
)
from articles.store.services.comments import comment_post
from articles.types import Article, Comment, NewPost, Status

logger = logging.getLogger("articles.store.services")  # the package's one logger

T = TypeVar("T")

# Counts a new post against its rate limit: raises RateLimited, or answers False to stop
# quietly (a form that shows the refusal itself); anything else lets the post go on.
Limit = Callable[[], object]


def _submit(
    replay: Callable[[], T | None] | None, limit: Limit, write: Callable[[], T]
) -> T | None:
    """A repeat of a request with an Idempotency-Key gets what the first one got, before
    the rate limit counts it (a retry after a lost answer is never a 429); a new request
    is counted, then written."""
    found = replay() if replay is not None else None
    if found is not None:
        return found
    if limit() is False:
        return None
    return write()


def article_submit(post: NewPost, *, idempotency_key: str | None, limit: Limit) -> Article | None:
    """Post an article as the pages and the API do: replay, limit, post. None when `limit`
    stopped it. Raises what article_post_replay and article_post raise."""

    def replay() -> Article | None:
        return selectors.article_post_replay(post, idempotency_key=idempotency_key or "")

    return _submit(
        replay if idempotency_key else None,
        limit,
        lambda: article_post(post, idempotency_key=idempotency_key),
    )


class NewComment(TypedDict):
    """A comment as its author sends it: comment_post's arguments."""

    article_id: int
    user_id: int
    author_name: str
    text: str
    parent_id: int | None


def comment_submit(
    comment: NewComment, *, idempotency_key: str | None, limit: Limit
) -> Comment | None:
    """Comment as the pages and the API do: replay (the comment as it was made), limit,
    post. None when `limit` stopped it. Raises what comment_post_replay and comment_post
    raise."""

    def replay() -> Comment | None:
        return selectors.comment_post_replay(idempotency_key=idempotency_key or "", **comment)

    return _submit(
        replay if idempotency_key else None,
        limit,
        lambda: comment_post(idempotency_key=idempotency_key, **comment),
    )


@replicated
def article_post(post: NewPost, *, idempotency_key: str | None = None) -> Article:
    """Post an article with its poster's own up-vote (1 vote, score time + 432).

    Raises InvalidInput, GroupNotFound, DuplicateLink (the link is already posted and
    still open for voting). With `idempotency_key`, a repeat of the same request gets what
    the first one got: the article as it was created, even if it was deleted since;
    the key with a different request raises IdempotencyKeyReused.
    The post time is Redis' clock (see _given); `post.now` fixes it, for tests and tools.
    """
    post = validation.clean_new_post(post)
    user_id = post.user_id
    idem_key = _idempotency_key(keys.idempotency, user_id, idempotency_key)
    norm = validation.normalize_link(post.link) if post.link else ""
    conn = get_connection()
    # The id comes first (the book's INCR). A retried INCR only skips an id; the script
    # itself refuses to overwrite an existing article, so a retried script is harmless.
    article_id = int(conn.incr(keys.ARTICLE_IDS))
    for _ in range(scripts.ATTEMPTS):
        seen = _link_owner(conn, norm)
        result = scripts.POST(
            *_post_call(article_id, post, norm, seen=seen, idem_key=idem_key), client=conn
        )
        status = raise_for_status(result, allow=(Status.RETRY, Status.ID_TAKEN))
        if status is Status.OK or (status is Status.REPEATED and len(result) > 2):
            if status is Status.OK:
                metrics.POSTS.inc()
            first = article_id if status is Status.OK else int(result[1])
            posted = int(result[2] if status is Status.REPEATED else result[1])
            return Article.new_post(post, article_id=first, posted=posted)
        if status is Status.REPEATED:  # a key kept before fingerprints: the article now
            return selectors.article_get(article_id=int(result[1]), user_id=user_id)
        if status is Status.ID_TAKEN:
            if _decode(result[1]) == keys.user(user_id):
                # our own request, re-sent after a stall, already ran
                return selectors.article_get(article_id=article_id, user_id=user_id)
            raise Conflict()
    raise Conflict()


def _post_call(
    article_id: int, post: NewPost, norm: str, *, seen: str, idem_key: str | None
) -> tuple[list[str], list[str | int | float | bytes]]:
    """KEYS and ARGV of post.lua for one cleaned article. The search words go in the same
    script as the article: no moment, crash or not, when the article exists unfound or the
    index names an article not yet written."""
    member = keys.article(article_id)
    names = list(post.groups)
    group_keys = [key for name in names for key in keys.group_keys(name)]
    words = search.article_words(post.title, post.text, post.link)
    links_key, link_field = keys.link_keys(norm, member)
    script_keys = [
        member,
        keys.voted(article_id),
        keys.SCORE,
        keys.TIME,
        keys.GOOD,
        keys.submitted(post.user_id),
        links_key,
        keys.GROUPS,
        keys.STATS_POSTS,
        keys.member_key(seen) or member,
        idem_key or member,
        keys.VOTES,
        *keys.PERIOD_KEYS,
        _domain_key(post.link) or member,
        keys.LIVE,
        *group_keys,
        *map(keys.postings, words),
    ]
    args: list[str | int | float | bytes] = [
        member,
        keys.user(post.user_id),
        post.title,
        post.link,
        post.text,
        post.poster_name,
        _given(post.now, whole=True),
        conf.vote_score(),
        conf.window(),
        conf.good_votes(),
        link_field,
        conf.idempotency_seconds() if idem_key else 0,
        ",".join(names),
        article_id,
        seen,
        validation.post_fingerprint(post.title, post.link, post.text, names),
        " ".join(words),
        conf.live_events(),
    ]
    return script_keys, args


@replicated
def article_post_many(*, posts: Sequence[NewPost]) -> list[int]:
    """Post many articles with article_post's script and checks, in pipelined batches: one
    round trip per batch instead of two per article (load_demo --articles). Returns the new
    ids in order. Raises what article_post raises; links must be new and distinct (a link
    posted twice in one batch raises Conflict)."""
    conn = get_connection()
    last = int(conn.incrby(keys.ARTICLE_IDS, len(posts)))  # one INCR for every id
    ids = list(range(last - len(posts) + 1, last + 1))
    for start in range(0, len(posts), _BATCH):
        pipe = conn.pipeline(transaction=False)
        for article_id, post in zip(
            ids[start : start + _BATCH], posts[start : start + _BATCH], strict=True
        ):
            cleaned = validation.clean_new_post(post)
            norm = validation.normalize_link(cleaned.link) if cleaned.link else ""
            call = _post_call(article_id, cleaned, norm, seen="", idem_key=None)
            scripts.POST(*call, client=pipe)
        for reply in pipe.execute():
            raise_for_status(reply)
    metrics.POSTS.inc(len(posts))
    return ids
