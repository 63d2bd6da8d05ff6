"""The records of a backup file, checked: every key name the restore forms comes from an
id or name checked here. Export checks each comment by the same rules, so every file it
writes can be restored."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from articles import validation
from articles.errors import InvalidInput
from articles.store import keys, search
from articles.types import CommentState

EXPORT_VERSION = 1
_COMMENT_STATES = (CommentState.VISIBLE, CommentState.DELETED, CommentState.REMOVED)


@dataclass(slots=True)
class Voters:
    """An item's up and down voter sets and when each expires (None: never)."""

    up: list[bytes]
    up_expire_at_ms: int | None
    down: list[bytes]
    down_expire_at_ms: int | None


@dataclass(slots=True)
class ArticleRecord:
    id: int
    hash: dict[bytes, bytes]  # no `words`: those are made from the title, text and link
    score: float | None
    time: float | None
    good: float | None
    submitted: float | None
    groups: list[str]
    voters: Voters
    poster_pk: int | None
    words: list[str]  # the sets postings:<word> hold it in


@dataclass(slots=True)
class CommentRecord:
    id: int
    hash: dict[bytes, bytes]
    article_id: int
    parent_id: int | None
    time: float
    visible: bool
    author_pk: int | None
    votes: int
    downvotes: int
    depth: int
    voters: Voters
    # the sets comment_postings:<word> hold it in (none: a tombstone)
    words: list[str] = field(default_factory=list)


def article_record(record: dict[str, object]) -> ArticleRecord:
    """An article record, checked: its id, hash, index scores, groups and voter sets."""
    article_id, raw_hash = _head(record, keys.article, "an article needs its hash")
    fields = {raw(k): raw(v) for k, v in raw_hash.items()}
    score, posted, good, submitted = (
        finite(record.get(name)) for name in ("score", "time", "good", "submitted")
    )
    groups = sorted(
        {validation.clean_group_name(g, "groups") for g in as_list(record.get("groups"))}
    )
    voters = _voters(record)
    poster_pk = keys.user_id_or_none(fields.get(b"poster", b"").decode("utf-8", "replace"))
    # The search index is not exported: each article is indexed by the restoring
    # transaction, from its own title, text and link.
    words = search.article_words(
        *(fields.get(f, b"").decode("utf-8", "replace") for f in (b"title", b"text", b"link"))
    )
    fields.pop(b"words", None)  # a former field: the words are made again, not kept
    for name in (b"text", b"groups"):  # kept only when not empty, as post.lua writes them
        if fields.get(name) == b"":
            del fields[name]
    return ArticleRecord(
        article_id, fields, score, posted, good, submitted, groups, voters, poster_pk, words
    )


def comment_record(record: dict[str, object]) -> CommentRecord:
    """A comment record, checked: its id, article, parent, time, state and counts."""
    comment_id, raw_hash = _head(record, keys.comment, "a comment needs its hash")
    fields = {text(k): text(v) for k, v in raw_hash.items()}
    try:
        article_id = keys.article_id_of(fields.get("article", ""))
    except ValueError:
        raise InvalidInput("article", "A comment's article must be article:<id>.") from None
    parent_id = _parent_id(fields.get("parent", ""), comment_id)
    posted = finite(float(fields.get("time", "")))
    if posted is None or posted < 0:
        raise InvalidInput("time", "A comment needs its time.")
    if fields.get("state", "") not in _COMMENT_STATES:
        raise InvalidInput("state", f"A comment's state is one of {_COMMENT_STATES}.")
    votes, downvotes, depth = (
        count(int(fields.get(name, "0"))) for name in ("votes", "downvotes", "depth")
    )
    # As for articles, the comment search index is not exported: each visible comment is
    # indexed by the restoring transaction from its own text.
    visible = fields.get("state", "") == CommentState.VISIBLE
    words = search.comment_words(fields.get("text", "")) if visible else []
    fields.pop("words", None)  # a former field: the words are made again, not kept
    for name in ("edited", "state", "reason"):  # kept only when set, as the scripts write them
        if fields.get(name) == "":
            del fields[name]
    return CommentRecord(
        id=comment_id,
        hash={k.encode("utf-8", "surrogateescape"): raw(v) for k, v in fields.items()},
        article_id=article_id,
        parent_id=parent_id,
        time=posted,
        visible=visible,
        author_pk=keys.user_id_or_none(fields.get("author", "")),
        votes=votes,
        downvotes=downvotes,
        depth=depth,
        voters=_voters(record),
        words=words,
    )


def _head(
    record: dict[str, object], key_of: Callable[[int], str], missing: str
) -> tuple[int, dict[object, object]]:
    """A record's id (ValueError unless a positive int, as `key_of` says) and its hash."""
    item_id = record["id"]
    if not isinstance(item_id, int):
        raise ValueError(f"not a positive id: {item_id!r}")
    key_of(item_id)  # ValueError unless positive (a bool is not an id either)
    raw_hash = record["hash"]
    if not isinstance(raw_hash, dict) or not raw_hash:
        raise ValueError(missing)
    return item_id, raw_hash


def _parent_id(parent: str, comment_id: int) -> int | None:
    """The id in a comment's `parent` ("" for none): an earlier comment."""
    try:
        parent_id = keys.comment_id_of(parent) if parent else None
    except ValueError:
        raise InvalidInput("parent", "A comment's parent must be comment:<id> or empty.") from None
    if parent_id is not None and parent_id >= comment_id:
        raise InvalidInput("parent", "A comment's parent comes before it.")
    return parent_id


def _voters(record: dict[str, object]) -> Voters:
    up, up_expire = _voter_set(record, "up")
    down, down_expire = _voter_set(record, "down")
    return Voters(up, up_expire, down, down_expire)


def _voter_set(record: dict[str, object], name: str) -> tuple[list[bytes], int | None]:
    members = [raw(m) for m in as_list(record.get(name))]
    expire = record.get(f"{name}_expire_at_ms")
    return members, None if expire is None else count(expire)


def count(value: object) -> int:
    """A count of the file (an int, not negative); ValueError for anything else."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"not a count: {value!r}")
    return value


def finite(value: object) -> float | None:
    """A time or score of the file (None, or a finite number); ValueError for the rest."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"not a finite number: {value!r}")
    return float(value)


def as_list(value: object) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value


def raw(value: object) -> bytes:
    """The bytes a str of the export stands for (non-UTF-8 bytes came as surrogates)."""
    return text(value).encode("utf-8", "surrogateescape")


def as_text(value: bytes | str) -> str:
    """Bytes to str for JSON; bytes that are not UTF-8 survive as surrogate escapes."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value
