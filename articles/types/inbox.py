"""The replies inbox: a reply as its recipient sees it, and a page of them."""

from __future__ import annotations

from dataclasses import dataclass

from articles.types.comments import Comment
from articles.types.pages import Page


@dataclass(frozen=True, slots=True)
class InboxReply:
    """A reply to one of the user's articles or comments: `number` is its place in the
    inbox (marking read goes up to a number), `unread` whether it is above `read`."""

    number: int
    comment: Comment
    unread: bool


@dataclass(frozen=True, slots=True)
class InboxPage(Page[InboxReply]):
    """A page of the inbox (newest first; a reply deleted since is left out), with the
    unread count and the newest reply's number (what "mark all read" marks up to, so a
    reply that arrives meanwhile stays unread)."""

    unread: int = 0
    newest: int = 0
