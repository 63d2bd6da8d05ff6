"""The rules of the comments (issue 12), judged from their hashes.

The comment hashes are the truth; everything else about comments is derived from them
and audited against them: each parent's two orderings (scores from the counts), the
article's comments_all:, the site-wide comments: and each user_comments:<pk> (visible
comments only), the counts `replies` and the article's `comments`, parent links and
depths, and while the article's window is open the voter sets against the counts.
The rules here are pure: the audit and its re-reads judge by the same ones.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import redis

from articles.operations.audit.common import (
    WHOLE,
    Problem,
    shown,
    time_or_none,
    user_id_or_none,
    whole,
)
from articles.store import keys
from articles.types import comment_best

COMMENT_KINDS = frozenset(
    {
        "comment_orphan",  # its article is gone: repair removes it
        "comment_parent",  # parent missing, of another article, or depth != parent's + 1
        "comment_tombstone",  # a "[deleted]"/"[removed]" comment left with no replies
        "comment_votes",  # counts != voter sets, a user in both, a set without expiry
        "comment_index",  # missing from, or with a wrong score in, a list it belongs in
        "comment_stale",  # in a list its hash does not place it in
        "comment_stale_voters",  # a voter set of a comment that is gone
        "comment_replies",  # `replies` != its replies
        "comment_count",  # the article's `comments` != its visible comments
    }
)
# Article id -> (post time, `comments`) of the articles the comments name that exist.
Found = dict[int, tuple[float | None, bytes | None]]
# List key -> member -> the score the comment hashes give it there.
Expected = dict[str, dict[str, float]]


@dataclass(frozen=True, slots=True)
class CommentRow:
    id: int
    article_id: int
    parent: str
    author: str
    state: str
    time: float
    votes: int
    downvotes: int
    depth: int
    replies: int

    @property
    def member(self) -> str:
        return keys.comment(self.id)


def comment_row(comment_id: int, raw: dict[bytes, bytes]) -> CommentRow | str:
    """The fields the audit needs, or what is wrong with the hash."""
    try:
        article_id = keys.article_id_of(keys.text(raw.get(b"article", b"")))
    except ValueError:
        return f"article is {shown(raw.get(b'article'))}, not an article"
    parent = keys.text(raw.get(b"parent", b""))
    if parent and keys.comment_id_or_none(parent) is None:
        return f"parent is {parent!r}, not a comment"
    posted = time_or_none(raw.get(b"time"))
    if posted is None:
        return f"time is {shown(raw.get(b'time'))}, not a time"
    counts = {}
    for name in ("votes", "downvotes", "depth", "replies"):
        value = raw.get(name.encode(), b"0")
        if not WHOLE.fullmatch(keys.text(value)):
            return f"{name} is {shown(value)}, not a whole number"
        counts[name] = int(value)
    author, state = keys.text(raw.get(b"author", b"")), keys.text(raw.get(b"state", b""))
    return CommentRow(comment_id, article_id, parent, author, state, posted, **counts)


def comment_rows(
    replies: Iterable[tuple[int, object]],
) -> tuple[dict[int, CommentRow], dict[str, str | None]]:
    """The rows of the comment hashes read (id, HGETALL reply), and the members that
    cannot be read: member -> what is wrong with the hash (None: it is not a hash)."""
    rows: dict[int, CommentRow] = {}
    faults: dict[str, str | None] = {}
    for comment_id, raw in replies:
        member = keys.comment(comment_id)
        if isinstance(raw, redis.ResponseError):
            faults[member] = None
        elif isinstance(raw, dict) and raw:
            row = comment_row(comment_id, raw)
            if isinstance(row, str):
                faults[member] = row
            else:
                rows[comment_id] = row
    return rows, faults


def comment_articles(replies: Iterable[tuple[int, object]]) -> Found:
    """Article id -> (post time, `comments`) of the articles that exist, from (id, HMGET
    time comments) replies; one that is not a hash is kept with (None, None)."""
    found: Found = {}
    for article_id, reply in replies:
        if isinstance(reply, redis.ResponseError):
            found[article_id] = (None, None)  # not a hash: the article audit reports it
        elif isinstance(reply, list) and reply[0] is not None:
            found[article_id] = (time_or_none(reply[0]), reply[1])
    return found


def comment_rules(
    rows: dict[int, CommentRow], found: Found
) -> tuple[list[Problem], Expected, list[CommentRow]]:
    """The faults of the comment hashes among themselves and with their articles, the
    entries each list should hold (key -> member -> score), and the comments whose
    article exists."""
    problems: list[Problem] = []
    expected: Expected = defaultdict(dict)
    children: dict[str, int] = defaultdict(int)
    visible: dict[int, int] = defaultdict(int)
    live: list[CommentRow] = []
    for row in rows.values():
        if row.article_id not in found:
            problems.append(_fault("comment_orphan", f"its article {row.article_id} is gone", row))
            continue
        live.append(row)
        parent = rows.get(keys.comment_id_or_none(row.parent) or 0) if row.parent else None
        problems += _parent_faults(row, parent)
        _place(row, parent, expected, children, visible)
    problems += _reply_faults(live, children)
    problems += _count_faults(found, visible)
    return problems, expected, live


def _fault(kind: str, detail: str, row: CommentRow) -> Problem:
    return Problem(kind, detail, entry=row.member)


def _parent_faults(row: CommentRow, parent: CommentRow | None) -> list[Problem]:
    """A parent that is gone or of another article, or a depth not its parent's + 1."""
    if row.parent and (parent is None or parent.article_id != row.article_id):
        detail = f"parent {row.parent} is gone or of another article"
        return [_fault("comment_parent", detail, row)]
    if row.depth != (parent.depth + 1 if parent else 0):
        detail = f"depth {row.depth}, its parent's + 1 is not that"
        return [_fault("comment_parent", detail, row)]
    return []


def _place(
    row: CommentRow,
    parent: CommentRow | None,
    expected: Expected,
    children: dict[str, int],
    visible: dict[int, int],
) -> None:
    """Note the entries `row` should have in the lists, and count it as its parent's
    reply and, if visible, as one of its article's comments."""
    if row.parent and parent is not None:
        best, new = keys.replies(parent.id), keys.replies_new(parent.id)
        children[row.parent] += 1
    else:
        best = keys.article_comments(row.article_id)
        new = keys.article_comments_new(row.article_id)
    expected[best][row.member] = comment_best(row.id, row.votes, row.downvotes)
    expected[new][row.member] = float(row.id)
    expected[keys.article_comments_all(row.article_id)][row.member] = row.time
    if row.state == "":
        visible[row.article_id] += 1
        expected[keys.COMMENTS][row.member] = row.time
        author = user_id_or_none(row.author)
        if author:
            expected[keys.user_comments(author)][row.member] = row.time


def _reply_faults(live: list[CommentRow], children: dict[str, int]) -> list[Problem]:
    """Tombstones left with no replies, and `replies` counts that are not the replies."""
    problems: list[Problem] = []
    for row in live:
        n = children.get(row.member, 0)
        if row.state and not n:
            problems.append(_fault("comment_tombstone", f"{row.state}, with no replies left", row))
        if row.replies != n:
            problems.append(_fault("comment_replies", f"replies {row.replies} != {n} replies", row))
    return problems


def _count_faults(found: Found, visible: dict[int, int]) -> list[Problem]:
    """Articles whose `comments` is not the number of their visible comments."""
    problems: list[Problem] = []
    for article_id, (_, raw_count) in found.items():
        count = whole(raw_count) if raw_count is not None else 0
        if count != visible.get(article_id, 0):
            problems.append(count_problem(article_id, raw_count, visible.get(article_id, 0)))
    return problems


def count_problem(article_id: int, raw_count: bytes | None, visible: int | str) -> Problem:
    return Problem(
        "comment_count",
        f"comments is {shown(raw_count)}, it has {visible} visible comments",
        entry=keys.article(article_id),
    )


def voting_open(found: Found, row: CommentRow, now: float, window: int) -> bool:
    posted = found[row.article_id][0]
    return posted is not None and now < posted + window
