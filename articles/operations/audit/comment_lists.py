"""The checks of what is derived from the comment hashes: the lists that order them
(each parent's two orderings, comments_all:, comments:, user_comments:<pk>) and their
voter sets while the article's window is open."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Sized

import redis

from articles import conf
from articles.operations.audit.comments import CommentRow, Expected, Found, voting_open
from articles.operations.audit.common import (
    Problem,
    chunks,
    cid,
    queue_voter_reads,
    voter_faults,
    wrong_type,
)
from articles.store import keys

_COMMENT_ZSETS = (
    "comments:*",
    "comments_new:*",
    "comments_all:*",
    "replies:*",
    "replies_new:*",
    "user_comments:*",
)
# The most entries one read of a comment list returns; a longer list is read by ZSCAN.
_ZSET_PAGE = 1000
# The reads of one comment's voter sets (queue_voter_reads), in the order of their replies.
VOTER_READS = 5


def comment_indexes_audit(
    conn: redis.Redis, expected: Expected, unknown: set[str], batch: int
) -> list[Problem]:
    """Every comment list against the entries the hashes give it (`expected`); members
    in `unknown` (their hash cannot be read) are left alone."""
    problems: list[Problem] = []
    names = {
        keys.text(k)
        for pattern in _COMMENT_ZSETS
        for k in conn.scan_iter(match=pattern, count=1000)
    }
    for chunk in chunks(sorted(names | set(expected)), batch):
        pipe = conn.pipeline(transaction=False)
        for key in chunk:
            pipe.type(key)
            pipe.zrange(key, 0, _ZSET_PAGE - 1, withscores=True)
        replies = pipe.execute(raise_on_error=False)
        for i, key in enumerate(chunk):
            kind, content = keys.text(replies[2 * i]), replies[2 * i + 1]
            if kind not in ("zset", "none") or isinstance(content, redis.ResponseError):
                problems.append(wrong_type(key, kind, "zset"))
                continue
            if len(content) == _ZSET_PAGE:  # a long list (comments:): read in pages
                content = conn.zscan_iter(key, count=_ZSET_PAGE)
            actual = {keys.text(m): score for m, score in content}
            problems += compare_comment_index(key, actual, expected.get(key, {}), unknown)
    return problems


def compare_comment_index(
    key: str, actual: dict[str, float], want: dict[str, float], unknown: set[str]
) -> list[Problem]:
    problems: list[Problem] = []
    for member, score in sorted(want.items()):
        have = actual.get(member)
        if have is None or abs(have - score) > 1e-3:
            has = "nothing" if have is None else f"{have:.17g}"
            detail = f"{key} has {has} for {member}, not {score:.17g}"
            problems.append(Problem("comment_index", detail, entry=key, member=member))
    for member in sorted(set(actual) - set(want)):
        if member not in unknown:
            problems.append(
                Problem("comment_stale", f"{key} holds {member}", entry=key, member=member)
            )
    return problems


def comment_voters_audit(
    conn: redis.Redis,
    live: list[CommentRow],
    found: Found,
    rows: dict[int, CommentRow],
    now: float,
    batch: int,
) -> list[Problem]:
    """Voter sets of comments that are gone, and of each comment open for voting, the
    sets against its counts."""
    problems = _stale_voter_sets(conn, rows)
    window = conf.window()
    open_rows = [row for row in live if voting_open(found, row, now, window)]
    for chunk in chunks(open_rows, batch):
        problems += _open_voters(conn, chunk)
    return problems


def _stale_voter_sets(conn: redis.Redis, rows: dict[int, CommentRow]) -> list[Problem]:
    voter_keys = [
        keys.text(k)
        for pattern in ("comment_voted:*", "comment_voted_down:*")
        for k in conn.scan_iter(match=pattern, count=1000)
    ]
    problems: list[Problem] = []
    for key in voter_keys:
        comment_id = cid("comment:" + key.partition(":")[2])
        if comment_id is not None and comment_id in rows:
            continue
        if comment_id is not None and conn.exists(keys.comment(comment_id)):
            continue  # a hash no script can use (comment_bad), or one written since
        problems.append(
            Problem(
                "comment_stale_voters",
                f"{key}: its comment is gone",
                entry=key,
                member=keys.comment(comment_id) if comment_id else "",
            )
        )
    return problems


def queue_comment_voter_reads(pipe: redis.client.Pipeline, comment_id: int) -> None:
    queue_voter_reads(pipe, keys.comment_voted(comment_id), keys.comment_voted_down(comment_id))


def _open_voters(conn: redis.Redis, chunk: Sequence[CommentRow]) -> list[Problem]:
    """The voter sets of the comments `chunk` against their counts, read in one pipeline."""
    pipe = conn.pipeline(transaction=False)
    for row in chunk:
        queue_comment_voter_reads(pipe, row.id)
    replies = pipe.execute(raise_on_error=False)
    problems: list[Problem] = []
    for i, row in enumerate(chunk):
        counted = replies[i * VOTER_READS : (i + 1) * VOTER_READS]
        if any(isinstance(r, redis.ResponseError) for r in counted[:3]):
            problems += _voter_set_types(conn, row.id)
        else:
            problems += comment_votes_faults(row, *counted)
    return problems


def _voter_set_types(conn: redis.Redis, comment_id: int) -> list[Problem]:
    problems: list[Problem] = []
    for key in (keys.comment_voted(comment_id), keys.comment_voted_down(comment_id)):
        kind = keys.text(conn.type(key))
        if kind not in ("set", "none"):
            problems.append(wrong_type(key, kind, "set"))
    return problems


def comment_votes_faults(
    row: CommentRow, n_up: int, n_down: int, both: Sized, ttl_up: int, ttl_down: int
) -> list[Problem]:
    wrong = [d for _, d in voter_faults(row.votes, row.downvotes, n_up, n_down, both)]
    if -1 in (ttl_up, ttl_down):
        wrong.append("a voter set has no expiry")
    return [Problem("comment_votes", "; ".join(wrong), entry=row.member)] if wrong else []


def lists_right(kept: list[Problem], rows: dict[int, CommentRow]) -> Callable[[int], bool]:
    """Whether an article's comments_all:<aid> and its entries in comments: are right by
    the confirmed problems `kept`: comment_tally.lua counts its visible comments by them.
    An unreadable comment hash (its article unknown) leaves every count to the full read."""
    wrong: set[str] = set()
    for p in kept:
        if p.kind == "comment_bad" or (p.kind == "wrong_type" and p.entry == keys.COMMENTS):
            return lambda article_id: False
        if p.kind in ("comment_index", "comment_stale", "wrong_type") and p.entry:
            wrong |= _lists_of(p.entry, p.member, rows)
    return lambda article_id: keys.article_comments_all(article_id) not in wrong


def _lists_of(entry: str, member: str | None, rows: dict[int, CommentRow]) -> set[str]:
    """The lists a fault in `entry` (at `member`) makes wrong for the tally: comments:
    stands for its comment's article's comments_all: too."""
    if entry == keys.COMMENTS and (row := rows.get(cid(member or "") or 0)):
        return {entry, keys.article_comments_all(row.article_id)}
    return {entry}
