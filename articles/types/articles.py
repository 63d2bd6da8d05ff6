"""Articles and who acts on them: a post as sent, the Actor, an article as read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from articles import conf
from articles.errors import LoginRequired
from articles.store import keys
from articles.types.basics import (
    BadArticle,
    Vote,
    _number,
    _text,
    _time_or_none,
    _whole_or_zero,
    article_score,
    valid_time,
)


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
            raise LoginRequired()
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
    held: bool = False  # flagged past ARTICLES_FLAG_THRESHOLD: out of the listings (flags.lua)
    archived: bool = False  # read from the database (ARTICLES_ARCHIVE_AFTER): read-only

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
            held=bool(raw.get(b"held")),
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
