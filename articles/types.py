"""Values the store returns: decoded once from Redis, typed, free of Django."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Any, Generic, Protocol, TypeVar

from articles import conf
from articles.errors import NotAllowed
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
class NewPost:
    """One article as its poster sends it: what article_post, article_post_many and the
    idempotent replay take. `now` fixes the post time (tests and tools)."""

    user_id: int
    poster_name: str
    title: str
    link: str = ""
    text: str = ""
    groups: Sequence[str] = ()
    now: float | None = None

    @classmethod
    def by(cls, actor: Actor, sent: Mapping[str, Any]) -> NewPost:
        """What a logged-in user sent: a form's or serializer's title, link, text, groups."""
        return cls(
            user_id=actor.pk,
            poster_name=actor.name,
            title=sent["title"],
            link=sent["link"],
            text=sent["text"],
            groups=tuple(sent["groups"]),
        )


class _User(Protocol):
    """What Actor.of reads of a Django user (kept Django-free here)."""

    @property
    def pk(self) -> object: ...
    @property
    def is_staff(self) -> bool: ...
    def get_username(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Actor:
    """Who asks a service for a write: the services decide from it what is allowed (staff
    only, owner or staff), so no front end does. `name` goes into the moderation log; a
    tool acting as staff with no name ("") writes no entry, as the book's scripts."""

    pk: int
    name: str
    is_staff: bool

    @classmethod
    def of(cls, user: _User) -> Actor:
        """The logged-in user behind a request; NotAllowed for a visitor."""
        pk = user.pk
        if not isinstance(pk, int) or isinstance(pk, bool):
            raise NotAllowed("Log in first.")
        return cls(pk=pk, name=user.get_username(), is_staff=bool(user.is_staff))

    def as_poster(self) -> Actor:
        """The same user acting as a poster, not as staff (the poster's own edit and
        delete pages): their own article, while voting is open, unlogged."""
        return replace(self, is_staff=False)


@dataclass(frozen=True, slots=True)
class Article:
    id: int
    title: str
    link: str
    text: str
    poster: str  # user:<pk>, as the book stores it
    poster_name: str
    time: float  # Unix seconds (the book writes a float, votesite an int)
    votes: int
    downvotes: int
    score: float
    groups: tuple[str, ...]
    voting_closes_at: float
    my_vote: Vote | None = None  # None when nobody is asking
    last_vote: float | None = None  # Unix seconds of the last counted vote, when known
    comments: int = 0  # visible comments (the hash's `comments`; the book's articles: 0)
    edited: float | None = None  # Unix seconds of the last edit of its title, link or text

    @classmethod
    def new_post(cls, post: NewPost, *, article_id: int, posted: int) -> Article:
        """The article as its (cleaned) post created it: the poster's own up-vote, nothing
        else."""
        return cls(
            id=article_id,
            title=post.title,
            link=post.link,
            text=post.text,
            poster=keys.user(post.user_id),
            poster_name=post.poster_name,
            time=posted,
            votes=1,
            downvotes=0,
            score=article_score(posted, 1, 0, vote_score=conf.vote_score()),
            groups=tuple(post.groups),
            voting_closes_at=posted + conf.window(),
            my_vote=Vote.UP,
        )

    @classmethod
    def from_hash(
        cls,
        article_id: int,
        raw: dict[bytes, bytes],
        *,
        score: float | None,
        window: int,
        vote_score: int,
        my_vote: Vote | None = None,
    ) -> Article:
        """Decode an article hash; fields the book does not write get their defaults.
        Raises BadArticle for a count or time no page can show."""
        posted = _number(raw, "time")
        if not valid_time(posted):
            raise BadArticle(f"time is {posted!r}, not a post time")
        votes = int(_number(raw, "votes"))
        downvotes = int(_number(raw, "downvotes"))
        poster = _text(raw, "poster")
        groups = tuple(g for g in _text(raw, "groups").split(",") if g)
        return cls(
            id=article_id,
            title=_text(raw, "title"),
            link=_text(raw, "link"),
            text=_text(raw, "text"),
            poster=poster,
            poster_name=_text(raw, "poster_name") or poster,
            time=posted,
            votes=votes,
            downvotes=downvotes,
            score=score
            if score is not None
            else article_score(posted, votes, downvotes, vote_score=vote_score),
            groups=groups,
            voting_closes_at=posted + window,
            my_vote=my_vote,
            last_vote=_time_or_none(raw.get(b"last_vote")),
            comments=max(0, _whole_or_zero(raw.get(b"comments"))),
            edited=_time_or_none(raw.get(b"edited")),
        )

    @property
    def poster_id(self) -> int | None:
        return keys.user_id_or_none(self.poster)

    @property
    def posted_at(self) -> datetime:
        return datetime.fromtimestamp(self.time, tz=UTC)

    @property
    def updated_at(self) -> datetime:
        """When its counts last changed: the last vote, else the posting."""
        return datetime.fromtimestamp(max(self.time, self.last_vote or 0.0), tz=UTC)

    @property
    def closes_at(self) -> datetime:
        return datetime.fromtimestamp(self.voting_closes_at, tz=UTC)

    def voting_open(self, now: float) -> bool:
        return now < self.voting_closes_at

    def poster_may_change(self, user_id: int | None, now: float) -> bool:
        """May `user_id`, as its poster, edit or delete it now: only while voting is open
        (the scripts decide again, by Redis' clock, when they write)."""
        return user_id is not None and self.poster_id == user_id and self.voting_open(now)


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


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing: `items`, and `count` of the whole listing. Every listing
    selector returns one, so no view pages or slices by itself."""

    items: list[T]
    number: int
    count: int
    per_page: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.count // self.per_page))

    @property
    def has_next(self) -> bool:
        return self.number < self.pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1


@dataclass(frozen=True, slots=True)
class Group:
    name: str
    description: str
    size: int


@dataclass(frozen=True, slots=True)
class GroupPage(Page[Article]):
    """A page of a group's articles, with the group itself (read in the same round trip)."""

    group: Group = Group("", "", 0)


@dataclass(frozen=True, slots=True)
class GoodPage(Page[Article]):
    """A page of the newest good articles, with the UTC days of all of them (for links to
    each day's archive)."""

    days: tuple[date, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchPage(Page[Article]):
    """A page of search results, with the words looked for (to highlight them) and
    those left out."""

    words: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FrontPage(GoodPage):
    """The home page: `items` are a page of the newest good articles, `rising` the same
    page of the score ranking without those; `count` covers the longer of the two."""

    rising: tuple[Article, ...] = ()
    good_count: int = 0


@dataclass(frozen=True, slots=True)
class ThreadPage(Page[Comment]):
    """A page of an article's comment thread: `items` in display order (depth-first, each
    comment's replies under it); number/count/per_page count the top-level comments (or
    the focus comment's replies). Each comment's `depth` is its stored depth (0 = top
    level), so under a focus the indent is depth - focus.depth - 1. Read in one script
    call (comment_thread)."""

    article: Article | None = None
    order: CommentOrder = CommentOrder.BEST
    focus: Comment | None = None  # the comment whose subthread this is (permalink)
    voting_open: bool = True
    commenting_open: bool = True


@dataclass(frozen=True, slots=True)
class RateLimit:
    """The state of one rate-limit window after a request was counted."""

    allowed: bool
    limit: int
    remaining: int
    reset: int  # seconds until the window ends


@dataclass(frozen=True, slots=True)
class ModlogEntry:
    time: float
    actor: str
    action: str
    target: str
    reason: str = ""
    details: dict[str, object] = field(default_factory=dict)

    @property
    def at(self) -> datetime:
        return datetime.fromtimestamp(self.time, tz=UTC)


@dataclass(frozen=True, slots=True)
class ModlogPage(Page[ModlogEntry]):
    """A page of the moderation log, with which of its articles (`article:<id>`), groups
    (names) and comments still exist: the others are shown as tombstones, not links to a
    404. `comments` maps each live `comment:<id>` to its article's id (None when its log
    entry does not name one)."""

    articles: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    comments: dict[str, int | None] = field(default_factory=dict)
