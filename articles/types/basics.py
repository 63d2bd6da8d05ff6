"""The store's vocabulary: statuses, vote states, orders, periods, scores, raw field readers."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from articles.store import keys

# What an item of a deleted account shows as its author (user_forget rewrites the names).
DELETED_NAME = "[deleted]"


class Status(enum.IntEnum):
    """The first element of every Lua script's reply, shared by all of them: scripts.py
    hands these names to the Lua code as the table `S` (S.OK, S.NOT_FOUND, ...), and
    services.raise_for_status() is the one map from a status to its error."""

    OK = 1  # done
    REPEATED = 2  # an identical earlier request already did it (idempotency key)
    NOT_FOUND = -1  # no such article
    VOTING_CLOSED = -2  # the article's voting window is over
    RETRY = -3  # what the caller read has changed since: read again and retry
    NO_GROUP = -4  # no such group (detail: its name)
    GROUP_EXISTS = -5  # a group with this name exists already
    ID_TAKEN = -6  # an article with this id exists already (detail: its poster)
    DUPLICATE_LINK = -7  # the link is posted and still open (detail: article:<id>)
    BAD_DATA = -8  # a key the script would write holds the wrong type or value
    #                (detail: the key, then what is wrong); nothing was written
    KEY_REUSED = -9  # the idempotency key was used for a different request (detail: its id)
    COMMENT_NOT_FOUND = -10  # no such comment
    COMMENTING_CLOSED = -11  # the article's commenting time is over
    TOO_DEEP = -12  # a reply deeper than ARTICLES_COMMENT_MAX_DEPTH
    EDIT_CLOSED = -13  # the comment's edit window is over
    NOT_AUTHOR = -14  # only the comment's author may do that
    COMMENT_GONE = -15  # the comment was deleted or removed (detail: its state)


def article_score(posted: float, votes: int, downvotes: int, *, vote_score: int) -> float:
    """The one score rule (SPEC §1): post time + VOTE_SCORE x (up-votes - down-votes)."""
    return posted + vote_score * (votes - downvotes)


# Reddit's "best" comment order: the lower bound of the Wilson score interval of the
# share of up-votes, at 80 % confidence (z = 1.281551565545), as Reddit computes it.
WILSON_Z = 1.281551565545


# The stored score packs the bound, in steps of 1/10,000, above a tie-break that puts
# the older of two equal comments first: bound_steps x 2^38 + (2^38 - 1 - id). Both parts
# are whole numbers below 2^53, so the zset holds it exactly and Lua and Python agree.
BEST_STEPS = 10_000


BEST_TIE = 2**38


def wilson_lower_bound(up: int, down: int) -> float:
    """The lower bound of the Wilson score interval for up / (up + down); 0 with no votes.
    The same operations in the same order as comment_best() in _lib.lua."""
    n = up + down
    if n <= 0 or up <= 0:
        return 0.0
    z = WILSON_Z
    p = up / n
    return (p + z * z / (2 * n) - z * math.sqrt((p * (1 - p) + z * z / (4 * n)) / n)) / (
        1 + z * z / n
    )


def comment_best(comment_id: int, up: int, down: int) -> float:
    """The score of a comment in its parent's best order (comments:<aid>, replies:<cid>).

    Why Wilson and not the articles' time + 432 x net votes: comments of one article are
    all written within its voting week and read together, so a time term mostly ranks the
    newest first (an hour outweighs 8 up-votes), which the "new" order already does. The
    Wilson bound ranks by how sure we are that readers like a comment: 10 up / 1 down
    beats 1 up / 0 down, and a comment few have seen is not buried by early ones' counts.
    """
    steps = math.floor(wilson_lower_bound(up, down) * BEST_STEPS)
    tie = BEST_TIE - 1 - comment_id if comment_id < BEST_TIE else 0
    return float(steps * BEST_TIE + tie)


class Vote(enum.Enum):
    """A user's vote on an article; the value is what a vote moves the net count by."""

    UP = 1
    NONE = 0
    DOWN = -1

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str) -> Vote:
        try:
            return cls[label.upper()]
        except (KeyError, AttributeError):
            raise ValueError(f"vote must be up, down or none, not {label!r}") from None


class Order(enum.Enum):
    """A listing order and the global zset that carries it (Tildes' TopicSortOption)."""

    SCORE = "score"
    TIME = "time"

    @property
    def key(self) -> str:
        return keys.SCORE if self is Order.SCORE else keys.TIME


class SearchOrder(enum.Enum):
    """How search results are ordered: by score (the default), newest first, or by net
    votes (up - down, which score: - time: holds x 432: no index of its own)."""

    SCORE = "score"
    NEWEST = "newest"
    VOTES = "votes"

    @classmethod
    def from_word(cls, word: str) -> SearchOrder | None:
        """The order a word people type names (any case): the values, the article lists'
        `time`, and the words of other sites (`new`, `top`, `points`, ...); else None."""
        return _SEARCH_ORDER_WORDS.get(word.strip().casefold())


# "top" and "points" rank by votes as on Reddit and Hacker News; "hot" is the score.
_SEARCH_ORDER_WORDS = {
    **dict.fromkeys(["score", "hot", "rank", "ranking", "best"], SearchOrder.SCORE),
    **dict.fromkeys(["newest", "new", "time", "date", "recent", "latest"], SearchOrder.NEWEST),
    **dict.fromkeys(["votes", "vote", "top", "points"], SearchOrder.VOTES),
}


class Period(enum.Enum):
    """Top-of-period listings, ranked by net votes (`votes:`); ALL is all of `votes:`."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"
    ALL = "all"

    @property
    def seconds(self) -> int | None:
        return _PERIOD_SECONDS.get(self.value)


_PERIOD_SECONDS = {"day": 86_400, "week": 7 * 86_400, "month": 30 * 86_400, "year": 365 * 86_400}


def _text(raw: dict[bytes, bytes], name: str, default: str = "") -> str:
    value = raw.get(name.encode())
    return default if value is None else value.decode("utf-8", "replace")


# The post times the store's rules can use (the scripts' bad_time() in _lib.lua): Unix
# seconds from 1970 to the year 5138, which EXPIREAT and datetime both accept.
LATEST_TIME = 1e11


class BadArticle(ValueError):
    """An article hash no page can show (a count or time that is not a finite number,
    a time out of range): its listings skip it, check_votes reports it."""


def _number(raw: dict[bytes, bytes], name: str) -> float:
    value = raw.get(name.encode())
    if value is None:
        return 0.0
    try:
        number = float(value)
    except ValueError:
        raise BadArticle(f"{name} is {value!r}, not a number") from None
    if not math.isfinite(number):
        raise BadArticle(f"{name} is {value!r}, not a finite number")
    return number


def _time_or_none(value: bytes | None) -> float | None:
    """A time the store may hold in an optional field: None when absent or unusable (a bad
    one is no reason to leave an article out)."""
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and valid_time(number) else None


def _whole_or_zero(value: bytes | None) -> int:
    """An optional count: 0 when absent or not a whole number (check_votes reports it)."""
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0


def valid_time(value: float) -> bool:
    """A post time the rules, EXPIREAT and datetime all accept."""
    return math.isfinite(value) and 0 <= value <= LATEST_TIME


@dataclass(frozen=True, slots=True)
class RateLimit:
    """The state of one rate-limit window after a request was counted."""

    allowed: bool
    limit: int
    remaining: int
    reset: int  # seconds until the window ends
