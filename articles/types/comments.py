"""Comments as read: their order, state and values."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime

from articles import conf
from articles.store import keys
from articles.types.basics import (
    DELETED_NAME,
    BadArticle,
    Vote,
    _number,
    _text,
    _time_or_none,
    comment_best,
    valid_time,
)


class CommentOrder(enum.Enum):
    """The orders of a thread: best (comment_best) or new (newest first); a comment's
    replies come under it in the same order."""

    BEST = "best"
    NEW = "new"


class CommentState:
    """The values of a comment hash's `state`."""

    VISIBLE = ""
    DELETED = "deleted"  # by its author, kept as "[deleted]" because it has replies
    REMOVED = "removed"  # by staff, with a reason in the moderation log


@dataclass(frozen=True, slots=True)
class Comment:
    id: int
    article_id: int
    parent_id: int | None
    author: str  # user:<pk>
    author_name: str  # "[deleted]" for a deleted account or a deleted comment
    text: str  # raw Markdown source; "" when state != ""
    time: float
    edited: float | None
    votes: int  # up
    downvotes: int
    depth: int
    replies: int  # direct children, tombstones included
    state: str  # "" | "deleted" | "removed"
    my_vote: Vote | None = None
    more: bool = False  # has replies this page does not show: "continue this thread"
    article_title: str = ""  # filled by listings outside a thread (recent, user, feed)
    reason: str = ""  # a staff removal's reason
    held: bool = False  # flagged past ARTICLES_FLAG_THRESHOLD: folded until staff decide

    @classmethod
    def new_post(
        cls,
        *,
        comment_id: int,
        article_id: int,
        parent_id: int | None,
        user_id: int,
        author_name: str,
        text: str,
        posted: float,
        depth: int,
    ) -> Comment:
        """The comment as its post created it (no votes, no replies)."""
        return cls(
            id=comment_id,
            article_id=article_id,
            parent_id=parent_id,
            author=keys.user(user_id),
            author_name=author_name,
            text=text,
            time=posted,
            edited=None,
            votes=0,
            downvotes=0,
            depth=depth,
            replies=0,
            state=CommentState.VISIBLE,
            my_vote=Vote.NONE,
        )

    @classmethod
    def from_hash(
        cls,
        comment_id: int,
        raw: dict[bytes, bytes],
        *,
        my_vote: Vote | None = None,
        more: bool = False,
        article_title: str = "",
    ) -> Comment:
        """Decode a comment hash. Raises BadArticle for one no page can show (no article,
        a count or time that is not a number)."""
        try:
            article_id = keys.article_id_of(_text(raw, "article"))
        except ValueError:
            raise BadArticle(f"article is {raw.get(b'article')!r}, not an article") from None
        parent = _text(raw, "parent")
        try:
            parent_id = keys.comment_id_of(parent) if parent else None
        except ValueError:
            raise BadArticle(f"parent is {parent!r}, not a comment") from None
        posted = _number(raw, "time")
        if not valid_time(posted):
            raise BadArticle(f"time is {posted!r}, not a post time")
        state = _text(raw, "state")
        visible = state == CommentState.VISIBLE
        return cls(
            id=comment_id,
            article_id=article_id,
            parent_id=parent_id,
            author=_text(raw, "author") if visible else "",
            author_name=_text(raw, "author_name") if visible else DELETED_NAME,
            text=_text(raw, "text") if visible else "",
            time=posted,
            edited=_time_or_none(raw.get(b"edited")) if raw.get(b"edited") else None,
            votes=int(_number(raw, "votes")),
            downvotes=int(_number(raw, "downvotes")),
            depth=int(_number(raw, "depth")),
            replies=int(_number(raw, "replies")),
            state=state,
            my_vote=my_vote,
            more=more,
            article_title=article_title,
            reason=_text(raw, "reason"),
            held=bool(raw.get(b"held")),
        )

    @property
    def points(self) -> int:
        return self.votes - self.downvotes

    @property
    def author_id(self) -> int | None:
        return keys.user_id_or_none(self.author)

    @property
    def visible(self) -> bool:
        return self.state == CommentState.VISIBLE

    @property
    def posted_at(self) -> datetime:
        return datetime.fromtimestamp(self.time, tz=UTC)

    @property
    def edited_at(self) -> datetime | None:
        return datetime.fromtimestamp(self.edited, tz=UTC) if self.edited else None

    @property
    def best(self) -> float:
        return comment_best(self.id, self.votes, self.downvotes)

    def editable_by(self, user_id: int | None, now: float) -> bool:
        """May `user_id` edit it now: its author, while it is visible and within
        ARTICLES_COMMENT_EDIT_SECONDS of its posting. Pages use it to offer the edit;
        comment_edit.lua decides again, by Redis' clock, when it writes."""
        return (
            user_id is not None
            and self.visible
            and self.author_id == user_id
            and now < self.time + conf.comment_edit_seconds()
        )
