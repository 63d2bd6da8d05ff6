"""A reader's own lists: the articles they hid, saved and voted up, the comments they saved.

Each list is a zset of its user's (keys.hidden, saved, saved_comments, upvoted), newest
first and capped (keys.*_KEEP), so a page is one ZCARD + ZREVRANGE and the rows' read:
two round trips. An item deleted since it went in is left out of the page (its hash is
gone) and still counted until the list's cap pushes it out.
"""

from __future__ import annotations

from articles import conf, validation
from articles.store import keys, replicas
from articles.store.selectors._common import _bounds, _execute, _page
from articles.store.selectors.comments import _comment_rows
from articles.types import Article, Comment, Page


def _own(key: str, page: int | str, user_id: int) -> Page[Article]:
    number, start, stop = _bounds(page)
    pipe = replicas.connection().pipeline(transaction=False)
    pipe.zcard(key)
    pipe.zrevrange(key, start, stop)
    count, members = _execute(pipe)
    return _page(members, number, count, user_id)


@replicas.reads
def hidden_article_list(*, user_id: int, page: int | str = 1) -> Page[Article]:
    """The articles `user_id` hid, the last hidden first. Raises InvalidInput (page)."""
    return _own(keys.hidden(user_id), page, user_id)


@replicas.reads
def saved_article_list(*, user_id: int, page: int | str = 1) -> Page[Article]:
    """The articles `user_id` saved, the last saved first. Raises InvalidInput (page)."""
    return _own(keys.saved(user_id), page, user_id)


@replicas.reads
def upvoted_article_list(*, user_id: int, page: int | str = 1) -> Page[Article]:
    """The articles `user_id` voted up, the latest vote first (votes cast here since the
    list was kept; an up-vote withdrawn or turned down leaves it). Raises InvalidInput."""
    return _own(keys.upvoted(user_id), page, user_id)


@replicas.reads
def saved_comment_list(
    *, user_id: int, page: int | str = 1, per_page: int | None = None
) -> Page[Comment]:
    """The comments `user_id` saved, the last saved first, with their articles' titles
    (one round trip), ARTICLES_COMMENT_LIST_PER_PAGE a page. Raises InvalidInput (page)."""
    per_page = per_page or conf.comment_list_per_page()
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    found = _comment_rows(
        keys.saved_comments(user_id), "list", start, start + per_page - 1, user_id
    )
    return Page(found.items, number, found.count, per_page)
