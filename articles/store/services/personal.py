"""A reader's own lists: hide an article from their listings, save articles and comments.

One script (personal.lua) puts an item in or takes it out, checking that an item added
exists and trimming the list to its cap (keys.HIDDEN_KEEP, SAVED_KEEP) in the same step.
Both are safe to repeat: adding again keeps the first time, removing again changes
nothing. The list of up-voted articles is written by the vote itself (vote.lua).
"""

from __future__ import annotations

from articles.errors import CommentNotFound
from articles.operations.replication import replicated
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.selectors.archived import comment_archived, is_archived
from articles.store.services._common import _article_member, _given
from articles.types import Status


def _change(key: str, member: str, keep: int, *, add: bool, now: float | None) -> bool:
    """personal.lua on `key` for `member`, which also names the item's hash; an item not
    in Redis is looked for in the archive (one query) and added if it is there."""
    args = ["add" if add else "remove", member, keep, _given(now)]
    reply = scripts.PERSONAL(keys=[key, member], args=args, client=get_connection())
    missing = (Status.NOT_FOUND, Status.COMMENT_NOT_FOUND)
    if raise_for_status(reply, allow=missing) in missing:
        article_id, comment_id = keys.article_id_or_none(member), keys.comment_id_or_none(member)
        if (article_id and is_archived(article_id)) or (
            comment_id and comment_archived(comment_id)
        ):
            reply = scripts.PERSONAL(
                keys=[key, member], args=[*args, "archived"], client=get_connection()
            )
        raise_for_status(reply)
    return bool(int(reply[1]))


@replicated
def article_hide(
    *, article_id: int, user_id: int, hide: bool = True, now: float | None = None
) -> bool:
    """Take an article out of `user_id`'s listings (hide=False: put it back). Returns
    whether that changed anything. Raises ArticleNotFound (hiding one that is not there)."""
    member = _article_member(article_id)
    return _change(keys.hidden(user_id), member, keys.HIDDEN_KEEP, add=hide, now=now)


@replicated
def article_save(
    *, article_id: int, user_id: int, save: bool = True, now: float | None = None
) -> bool:
    """Save an article to `user_id`'s saved list (save=False: take it off). Returns
    whether that changed anything. Raises ArticleNotFound (saving one that is not there)."""
    member = _article_member(article_id)
    return _change(keys.saved(user_id), member, keys.SAVED_KEEP, add=save, now=now)


@replicated
def comment_save(
    *, comment_id: int, user_id: int, save: bool = True, now: float | None = None
) -> bool:
    """Save a comment to `user_id`'s saved comments (save=False: take it off). Returns
    whether that changed anything. Raises CommentNotFound (saving one that is not there)."""
    try:
        member = keys.comment(comment_id)
    except ValueError:
        raise CommentNotFound() from None
    key = keys.saved_comments(user_id)
    return _change(key, member, keys.SAVED_KEEP, add=save, now=now)
