"""The replies inbox's writes: marking replies read, and sent in a digest.

A reply enters the inbox in comment_post's own script (comment_post.lua) and leaves it in
comment_delete's, so the inbox never disagrees with the thread for long; the account's
inbox goes with it when the account is forgotten (accounts.user_forget)."""

from __future__ import annotations

from django.utils.translation import gettext

from articles import conf
from articles.errors import InvalidInput
from articles.operations.replication import replicated
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status


@replicated
def inbox_mark_read(*, user_id: int, up_to: int | None = None) -> int:
    """Mark the user's replies read up to the reply numbered `up_to` (None: all so far);
    what is already read stays read. Returns how many are unread now. Raises
    InvalidInput (up_to)."""
    return _mark(user_id, "read", up_to)


@replicated
def inbox_mark_digested(*, user_id: int, up_to: int) -> None:
    """Note that the replies up to `up_to` went out in an e-mail digest."""
    _mark(user_id, "digest", up_to)


def _mark(user_id: int, field: str, up_to: int | None) -> int:
    if up_to is not None and (isinstance(up_to, bool) or not isinstance(up_to, int) or up_to < 0):
        raise InvalidInput("up_to", gettext("A reply's number is a whole number from 0."))
    reply = scripts.INBOX_MARK(
        keys=[keys.inbox(user_id), keys.inbox_state(user_id), keys.LIVE],
        args=[field, "" if up_to is None else up_to, user_id, conf.live_events()],
        client=get_connection(),
    )
    raise_for_status(reply)
    return int(reply[2])
