"""The re-reads of the comment suspects (see confirm): one covers one comment, one list
entry, one article's count or one stale voter set, and judges by the rules of comments."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal

import redis

from articles import conf
from articles.operations.audit.comment_lists import (
    VOTER_READS,
    comment_votes_faults,
    compare_comment_index,
    queue_comment_voter_reads,
)
from articles.operations.audit.comments import (
    CommentRow,
    Expected,
    Found,
    comment_articles,
    comment_rows,
    comment_rules,
    count_problem,
    voting_open,
)
from articles.operations.audit.common import Problem, cid, whole
from articles.operations.audit.confirm import Judge, Unit
from articles.store import keys, scripts
from articles.types import Status

# The re-read of an article's count by comment_tally.lua, in place of a Reads.
TALLY = "tally"


@dataclass(frozen=True, slots=True)
class Reads:
    """The keys one consistent re-read of a comment suspect reads."""

    comments: frozenset[int] = frozenset()  # their hashes
    articles: frozenset[int] = frozenset()  # their time and `comments`
    lists: frozenset[str] = frozenset()  # one item's lists read whole (its replies, comments)
    scores: frozenset[tuple[str, str]] = frozenset()  # (list, member): its score there
    voters: frozenset[int] = frozenset()  # the comments whose voter sets are counted

    def __le__(self, other: Reads) -> bool:
        return all(getattr(self, f) <= getattr(other, f) for f in self.__slots__)

    def __or__(self, other: Reads) -> Reads:
        return Reads(*(getattr(self, f) | getattr(other, f) for f in self.__slots__))


# The kinds whose re-read covers one whole comment.
_WHOLE_COMMENT_KINDS = frozenset(
    {"comment_orphan", "comment_parent", "comment_tombstone", "comment_votes", "comment_replies"}
)


def comment_unit(problem: Problem) -> Unit | None:
    kind, entry = problem.kind, problem.entry or ""
    if kind in _WHOLE_COMMENT_KINDS:
        return ("comment", cid(entry))
    if kind in ("comment_index", "comment_stale") and problem.member is not None:
        return ("entry", entry, problem.member)
    if kind == "comment_count":
        return ("count", keys.article_id_or_none(entry))
    if kind == "comment_stale_voters":
        return ("voters", entry, problem.member or "")
    return None


def needed(
    unit: Unit,
    rows: dict[int, CommentRow],
    listed: dict[str, list[str]] | None = None,
    related: dict[object, set[int]] | None = None,
) -> Reads:
    """The keys a re-read of `unit` must read, by what `rows` and `listed` (the lists
    read whole) say: a comment with its parent, its replies and its voter sets; a list
    entry with its comment and that one's parent; an article's count with its comments.
    `related` is related_ids(rows), when made once for many units."""
    listed = listed or {}
    related = related_ids(rows) if related is None else related
    comments: set[int] = set()
    lists: set[str] = set()
    scores: set[tuple[str, str]] = set()
    voters: set[int] = set()
    articles: set[int] = set()
    kind, target = unit[0], unit[1]
    if kind == "comment" and isinstance(target, int):
        comments |= {target}
        voters.add(target)
        lists |= {keys.replies(target), keys.replies_new(target)}
        comments |= related.get(keys.comment(target), set())
    elif kind == "entry":
        scores.add((str(target), str(unit[2])))
        if (entry_id := keys.comment_id_or_none(str(unit[2]))) is not None:
            comments.add(entry_id)
    elif kind == "count" and isinstance(target, int):
        articles.add(target)
        lists.add(keys.article_comments_all(target))
        comments |= related.get(target, set())
    comments |= {i for key in lists for m in listed.get(key, ()) if (i := cid(m))}
    if kind != "count":  # a comment's parent decides where it is listed
        comments |= {
            parent for i in list(comments) if (row := rows.get(i)) and (parent := cid(row.parent))
        }
    articles |= {row.article_id for i in comments if (row := rows.get(i))}
    return Reads(
        frozenset(comments),
        frozenset(articles),
        frozenset(lists),
        frozenset(scores),
        frozenset(voters),
    )


def related_ids(rows: dict[int, CommentRow]) -> dict[object, set[int]]:
    """comment:<id> -> the ids of its replies, and article id -> the ids of its comments."""
    related: dict[object, set[int]] = defaultdict(set)
    for row in rows.values():
        related[row.article_id].add(row.id)
        if row.parent:
            related[row.parent].add(row.id)
    return related


@dataclass(frozen=True, slots=True)
class _Order:
    """The keys of a Reads in the order they are queued, and their replies taken."""

    cids: list[int]
    aids: list[int]
    lists: list[str]
    scores: list[tuple[str, str]]
    voters: list[int]

    @classmethod
    def of(cls, reads: Reads) -> _Order:
        return cls(
            sorted(reads.comments),
            sorted(reads.articles),
            sorted(reads.lists),
            sorted(reads.scores),
            sorted(reads.voters),
        )

    def queue(self, pipe: redis.client.Pipeline) -> None:
        for comment_id in self.cids:
            pipe.hgetall(keys.comment(comment_id))
        for article_id in self.aids:
            pipe.hmget(keys.article(article_id), "time", "comments")
        for key in self.lists:
            pipe.zrange(key, 0, -1)
        for key, member in self.scores:
            pipe.zscore(key, member)
        for comment_id in self.voters:
            queue_comment_voter_reads(pipe, comment_id)


@dataclass(frozen=True, slots=True)
class _Got:
    """What the reads of an _Order returned."""

    rows: dict[int, CommentRow]
    faults: dict[str, str | None]
    found: Found
    listed: dict[str, list[str]]
    scored: dict[tuple[str, str], Any]
    voted: dict[int, list[Any]]

    @classmethod
    def of(cls, order: _Order, got: list[Any]) -> _Got:
        replies = iter(got)
        rows, faults = comment_rows((i, next(replies)) for i in order.cids)
        found = comment_articles((i, next(replies)) for i in order.aids)
        listed = {key: _members(next(replies)) for key in order.lists}
        scored = {entry: next(replies) for entry in order.scores}
        voted = {i: [next(replies) for _ in range(VOTER_READS)] for i in order.voters}
        return cls(rows, faults, found, listed, scored, voted)


def _members(reply: Any) -> list[str]:
    return [] if isinstance(reply, redis.ResponseError) else [keys.text(m) for m in reply]


def comment_read(
    pipe: redis.client.Pipeline, unit: Unit, reads: Reads | Literal["tally"] | None
) -> Judge:
    """Queue the reads of `reads` (a stale voter set: the set and its comment; TALLY: the
    count's script); the judge applies the audit's rules to what they return."""
    if unit[0] == "voters":
        return _stale_voters_read(pipe, unit[1], unit[2])
    if isinstance(reads, str):
        return _tally_read(pipe, unit[1])
    reads = reads or Reads()
    order = _Order.of(reads)
    order.queue(pipe)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        got = _Got.of(order, replies)
        more = needed(unit, got.rows, got.listed)
        if not more <= reads:
            return reads | more, []
        problems, expected, live = comment_rules(got.rows, got.found)
        problems += _score_faults(got, expected)
        problems += _open_vote_faults(got, live, at)
        return None, problems

    return judge


def _score_faults(got: _Got, expected: Expected) -> list[Problem]:
    """The list entries re-read (their score, or none) against those the hashes give."""
    problems: list[Problem] = []
    for (key, member), score in got.scored.items():
        if isinstance(score, redis.ResponseError):
            continue  # not a zset: reported as wrong_type
        want = expected.get(key, {})
        actual = {} if score is None else {member: score}
        wanted = {member: want[member]} if member in want else {}
        problems += compare_comment_index(key, actual, wanted, set(got.faults))
    return problems


def _open_vote_faults(got: _Got, live: list[CommentRow], at: float) -> list[Problem]:
    """The voter sets re-read of the comments open for voting against their counts."""
    problems: list[Problem] = []
    window = conf.window()
    for row in live:
        counted = got.voted.get(row.id)
        if counted is None or not voting_open(got.found, row, at, window):
            continue
        if not any(isinstance(r, redis.ResponseError) for r in counted):
            problems += comment_votes_faults(row, *counted)
    return problems


def _tally_read(pipe: redis.client.Pipeline, article_id: int) -> Judge:
    """An article's count against the visible comments its lists hold, read in one step:
    with no second read, comments arriving meanwhile cannot keep a fault from being seen."""
    all_key = keys.article_comments_all(article_id)
    scripts.COMMENT_TALLY(keys=[keys.article(article_id), all_key, keys.COMMENTS], client=pipe)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        reply = replies[0]
        if isinstance(reply, redis.ResponseError) or Status(int(reply[0])) is Status.BAD_DATA:
            # a key of the wrong type (reported as such): read the count the full way
            return Reads(articles=frozenset({article_id}), lists=frozenset({all_key})), []
        if Status(int(reply[0])) is Status.NOT_FOUND:
            return None, []
        raw, visible, limit = reply[1], int(reply[2]), int(reply[3])
        if (whole(raw) if raw is not None else 0) == visible:
            return None, []
        shown = f"at least {visible}" if visible >= limit else str(visible)
        return None, [count_problem(article_id, raw, shown)]

    return judge


def _stale_voters_read(pipe: redis.client.Pipeline, key: str, member: str) -> Judge:
    pipe.exists(key)
    pipe.exists(member or key)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        exists, comment = replies
        if not exists or (member and comment):
            return None, []
        detail = f"{key}: its comment is gone"
        return None, [Problem("comment_stale_voters", detail, entry=key, member=member)]

    return judge
