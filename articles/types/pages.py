"""Pages of results: a generic page, and those of groups, good articles, search, threads, modlog."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Generic, TypeVar

from articles.types.articles import Article
from articles.types.comments import Comment, CommentOrder

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
    count_exact: bool = True  # False: `count` is an estimate (the search stopped early)
    complete: bool = True  # False: this page may lack results the search has not reached


@dataclass(frozen=True, slots=True)
class CommentSearchPage(Page[Comment]):
    """A page of comments found by a search (newest first), with the words looked for
    (to mark them in each excerpt) and those left out."""

    words: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    count_exact: bool = True  # False: `count` is an estimate (the search stopped early)
    complete: bool = True  # False: this page may lack results the search has not reached


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


@dataclass(frozen=True, slots=True)
class UserPage:
    """What a user's page shows of the store, read together (selectors.user_page): a page
    of their articles, their karma and comment karma, their newest comments."""

    articles: Page[Article]
    karma: int
    comment_karma: int
    comments: Page[Comment]
