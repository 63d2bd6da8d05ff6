"""Flags on articles and comments: their reasons, and an item of the staff queue."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from articles.types.articles import Article
from articles.types.comments import Comment


class FlagReason(enum.StrEnum):
    """Why a reader flags an item: the values the store keeps and the API takes; their
    words for people are in templatetags (FLAG_REASON_WORDS)."""

    SPAM = "spam"
    OFF_TOPIC = "off-topic"
    BROKEN_LINK = "broken-link"
    DUPLICATE = "duplicate"
    ABUSIVE = "abusive"


@dataclass(frozen=True, slots=True)
class Flagged:
    """One item of the staff queue: what was flagged (`member`, article:<id> or
    comment:<id>), how many flags it has and for which reasons, whether it is held (out
    of the listings, or folded), and the item itself (None when it is gone since)."""

    member: str
    kind: str  # "article" | "comment"
    id: int
    flags: int
    reasons: dict[str, int] = field(default_factory=dict)
    held: bool = False
    article: Article | None = None
    comment: Comment | None = None

    @property
    def exists(self) -> bool:
        return self.article is not None or self.comment is not None


@dataclass(frozen=True, slots=True)
class FlagResult:
    """What one flag did: the item's flags now, and whether it is held (this flag may have
    been the one that held it)."""

    member: str
    flags: int
    held: bool
