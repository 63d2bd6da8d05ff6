"""The replies inbox: a page of it, its unread count, the replies a digest would send.

Read from the primary, not a replica: marking read writes nothing anyone else sees (no
`written` signal, so no read-your-writes cookie), and the count after it must be the
new one."""

from __future__ import annotations

import logging
from typing import Any

from articles import conf, validation
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.selectors.archived import archived_comments
from articles.types import BadArticle, Comment, InboxPage, InboxReply

logger = logging.getLogger("articles.store.selectors")  # the package's one logger


def inbox_page(*, user_id: int, page: int | str = 1, per_page: int | None = None) -> InboxPage:
    """A page of the replies to the user's articles and comments, newest first, each
    with its article's title and whether it is unread; one round trip. A reply deleted
    or removed since is left out (so a page may hold fewer). Raises InvalidInput (page)."""
    per_page = per_page or conf.comment_list_per_page()
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    reply = _call(user_id, "page", start, start + per_page - 1)
    read = int(reply[3])
    items: list[InboxReply] = []
    for seq, comment in _replies(reply[6:]):
        if comment.visible:
            items.append(InboxReply(number=seq, comment=comment, unread=seq > read))
    return InboxPage(
        items, number, int(reply[1]), per_page, unread=int(reply[2]), newest=int(reply[5])
    )


def inbox_unread(*, user_id: int) -> int:
    """How many replies the user has not marked read: one script call, a ZCOUNT."""
    return int(_call(user_id, "count", 0, 0)[2])


def inbox_unread_and_epoch(*, user_id: int) -> tuple[int, bytes]:
    """The unread count and, in the same call, the user's credential epoch as stored (b""
    for none): a kept session's check and the header's count in one round trip
    (store.people.credential_epoch_and_unread)."""
    reply = _call(user_id, "count", 0, 0, keys.credential_epoch(user_id))
    return int(reply[2]), reply[6] if isinstance(reply[6], bytes) else b""


def inbox_digest_replies(*, user_id: int, limit: int = 50) -> tuple[list[InboxReply], int]:
    """The newest `limit` unread replies not yet sent in a digest (visible ones only),
    and the highest number among those looked at (0: none), what the digest then marks
    sent: one deleted since is passed over with them."""
    reply = _call(user_id, "digest", 0, limit)
    found = _replies(reply[6:])
    items = [InboxReply(number=seq, comment=c, unread=True) for seq, c in found if c.visible]
    return items, _highest(reply[6:])


def _call(user_id: int, mode: str, start: int, stop: int, *also: str) -> list[Any]:
    reply = scripts.INBOX_PAGE(
        keys=[keys.inbox(user_id), keys.inbox_state(user_id), *also],
        args=[mode, start, stop],
        client=get_connection(),
    )
    raise_for_status(reply)
    return list(reply)


def _highest(flat: list[Any]) -> int:
    """The highest reply number in the script's flat answer (the first: newest first)."""
    return int(float(flat[0])) if flat else 0


def _replies(flat: list[Any]) -> list[tuple[int, Comment]]:
    """(number, comment) of each reply in the script's flat answer; a comment gone since,
    or one no page can show, is left out (the latter logged)."""
    found: list[tuple[int, Comment | int]] = []
    gone: list[int] = []  # comments with no hash: archived, or deleted since
    at = 0
    while at < len(flat):
        seq, cid, n = int(float(flat[at])), int(flat[at + 1]), int(flat[at + 2])
        fields = flat[at + 3 : at + 3 + n]
        title = flat[at + 3 + n]
        at += 4 + n
        if not n:
            gone.append(cid)
            found.append((seq, cid))
            continue
        try:
            raw = dict(zip(fields[::2], fields[1::2], strict=True))
            found.append((seq, Comment.from_hash(cid, raw, article_title=keys.text(title))))
        except BadArticle as exc:
            logger.warning("Left out of an inbox for bad data: %s (%s)", keys.comment(cid), exc)
    archived = archived_comments(gone) if gone else {}  # one query for the page
    return [
        (seq, item if isinstance(item, Comment) else archived[item])
        for seq, item in found
        if isinstance(item, Comment) or item in archived
    ]
