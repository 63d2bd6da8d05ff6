"""The checks of the duplicate-link index (links:<b>) and the posters' indexes
(submitted:<pk>), both ways: every entry names an article that holds it, and every
article is in them. links:<b> needs only the open articles (post.lua and edit.lua let a
closed article's link go to a newer post), and submitted:<pk> only articles whose poster
is a user:<pk>. A link's entry is its slot (keys.link_slot): a bucket and a digest, named
in a problem's `entry` as "links:<b> <digest in hex>" (link_stale) or by the normalised
link itself (link_unindexed, link_shared). links:closed, how far the release of closed
articles' entries walked (manage.py archive), is a frontier in time:'s order or absent
(link_frontier: deleted by the repair, so the next run walks from the start again)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import redis

from articles import conf
from articles.operations.audit.common import (
    Problem,
    chunks,
    frontier_of,
    normalized,
    time_or_none,
    user_id_or_none,
    wrong_type,
)
from articles.operations.audit.confirm import Judge
from articles.store import keys

INDEX_KINDS = frozenset(
    {
        "link_stale",
        "link_unindexed",
        "link_shared",
        "link_former",
        "link_frontier",
        "submitted_stale",
        "unsubmitted",
    }
)
Slot = tuple[str, bytes]  # links:<b> and a field of it


@dataclass(frozen=True, slots=True)
class _Indexed:
    norm: str  # the normalised link, or "" for none
    poster_id: int | None  # the pk in `poster` = user:<pk>, else None
    open: bool
    readable: bool = True  # False: the article key is not a hash (reported as wrong_type)


_UNREADABLE = _Indexed(norm="", poster_id=None, open=False, readable=False)


def link_and_poster_audit(
    conn: redis.Redis, ordered: list[int], now: float, batch: int
) -> list[Problem]:
    """The problems of links:<b> and of every submitted:<pk>, for the articles `ordered`."""
    seen = _indexed_fields(conn, ordered, now, batch)
    links, problems, bad_buckets = _link_slots(conn)
    problems += _link_frontier(conn)
    problems += _stale_links(links, seen) + _unindexed_links(links, seen, bad_buckets)
    stale = _stale_submissions(conn, seen)
    wrong = {p.entry for p in stale if p.kind == "wrong_type"}
    return problems + stale + _missing_submissions(conn, seen, batch, wrong)


def _indexed_fields(
    conn: redis.Redis, ordered: list[int], now: float, batch: int
) -> dict[int, _Indexed]:
    """Article id -> its link, poster and window, for every article hash among `ordered`."""
    window = conf.window()
    seen: dict[int, _Indexed] = {}
    for chunk in chunks(ordered, batch):
        pipe = conn.pipeline(transaction=False)
        for article_id in chunk:
            pipe.hmget(keys.article(article_id), "link", "poster", "time")
        for article_id, fields in zip(chunk, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(fields, redis.ResponseError):
                # Not a hash (reported as wrong_type): what indexes it is left as it is.
                seen[article_id] = _UNREADABLE
            elif fields != [None, None, None]:  # no hash: reported as missing_hash
                link, poster, posted = fields
                closes = (time_or_none(posted) or 0) + window  # a bad time: bad_time says so
                seen[article_id] = _Indexed(
                    norm=normalized(keys.text(link or b"")),
                    poster_id=user_id_or_none(keys.text(poster or b"")),
                    open=now < closes,
                )
    return seen


def _named(seen: dict[int, _Indexed], member: str) -> tuple[int | None, _Indexed | None] | None:
    """The article an index entry names and what the audit read of it; None when its
    key is not a hash (reported as wrong_type: the entry is left as it is)."""
    article_id = keys.article_id_or_none(member)
    found = seen.get(article_id) if article_id is not None else None
    if found is not None and not found.readable:
        return None
    return article_id, found


def _link_slots(conn: redis.Redis) -> tuple[dict[Slot, str], list[Problem], set[str]]:
    """Every entry of every links:<b> (slot -> the member it maps to), the problems of the
    keys themselves (not hashes; the former index left), and the buckets not hashes."""
    links: dict[Slot, str] = {}
    problems: list[Problem] = []
    wrong: set[str] = set()
    former = keys.text(conn.type(keys.LEGACY_LINKS))
    if former != "none":
        detail = (
            f"{keys.LEGACY_LINKS} (the former link index, a {former}) is left: "
            "check_votes --repair indexes the open articles and deletes it"
        )
        problems.append(Problem("link_former", detail, entry=keys.LEGACY_LINKS))
    for raw_key in conn.scan_iter(match=keys.LINK_INDEX_SCAN, count=1000):
        key = keys.text(raw_key)
        kind = keys.text(conn.type(key))
        if kind == "hash":
            for field, held in conn.hscan_iter(key, count=1000):
                links[(key, field)] = keys.link_holder(keys.text(held))
        elif kind != "none":
            problems.append(wrong_type(key, kind, "hash"))
            wrong.add(key)
    return links, problems, wrong


def _link_frontier(conn: redis.Redis) -> list[Problem]:
    """links:closed, if set: "T" or "T article:<id>", T a finite number."""
    kind = keys.text(conn.type(keys.LINKS_CLOSED))
    if kind == "none":
        return []
    if kind != "string":
        return [
            Problem("link_frontier", f"{keys.LINKS_CLOSED} is a {kind}", entry=keys.LINKS_CLOSED)
        ]
    value = keys.text(conn.get(keys.LINKS_CLOSED) or b"")
    try:
        t, member = frontier_of(value)
    except ValueError:
        t, member = math.nan, ""
    if time_or_none(t) is not None and (not member or keys.article_id_or_none(member)):
        return []
    detail = f"{keys.LINKS_CLOSED} holds {value!r}, not a position in time:"
    return [Problem("link_frontier", detail, entry=keys.LINKS_CLOSED)]


def slot_entry(slot: Slot) -> str:
    """A link_stale problem's `entry`: "links:<b> <the field in hex>"."""
    return f"{slot[0]} {slot[1].hex()}"


def entry_slot(entry: str) -> Slot | None:
    """The slot a link_stale `entry` names (None for anything else)."""
    key, _, field = entry.partition(" ")
    try:
        return key, bytes.fromhex(field)
    except ValueError:
        return None


def _stale_links(links: dict[Slot, str], seen: dict[int, _Indexed]) -> list[Problem]:
    """Entries of links:<b> whose article does not link there."""
    problems: list[Problem] = []
    for slot, holder in sorted(links.items()):
        named = _named(seen, holder)
        if named is not None and not (named[1] and slot_of(named[1].norm) == slot):
            detail = f"{slot_entry(slot)} maps to {holder}, which does not link there"
            problems.append(Problem("link_stale", detail, named[0], entry=slot_entry(slot)))
    return problems


def slot_of(norm: str) -> Slot | None:
    """The slot of a normalised link, None for no link."""
    return keys.link_slot(norm) if norm else None


def _unindexed_links(
    links: dict[Slot, str], seen: dict[int, _Indexed], wrong: set[str]
) -> list[Problem]:
    """Open articles with a link that links:<b> does not map to them (in a bucket that is a
    hash: one that is not is reported as such)."""
    problems: list[Problem] = []
    for article_id, found in sorted(seen.items()):
        if not (found.open and found.norm):
            continue
        slot = keys.link_slot(found.norm)
        if slot[0] in wrong or links.get(slot) == keys.article(article_id):
            continue
        other = keys.article_id_or_none(links.get(slot, ""))
        rival = seen.get(other) if other is not None else None
        if rival is not None and rival.open and rival.norm == found.norm:
            detail = f"open for voting with the same link as article {other}"
            problems.append(Problem("link_shared", detail, article_id, entry=found.norm))
        else:
            detail = f"links:<b> does not map {found.norm} to it"
            problems.append(Problem("link_unindexed", detail, article_id, entry=found.norm))
    return problems


def _stale_submissions(conn: redis.Redis, seen: dict[int, _Indexed]) -> list[Problem]:
    """Entries of each submitted:<pk> that the user did not post, and those keys that are
    not zsets."""
    problems: list[Problem] = []
    for raw_key in conn.scan_iter(match="submitted:*", count=1000):
        key = keys.text(raw_key)
        kind = keys.text(conn.type(key))
        if kind not in ("zset", "none"):
            problems.append(wrong_type(key, kind, "zset"))
            continue
        user_id = user_id_or_none("user:" + key.removeprefix("submitted:"))
        for raw, _ in conn.zscan_iter(key, count=1000):
            named = _named(seen, keys.text(raw))
            if named is not None and (named[1] is None or named[1].poster_id != user_id):
                detail = f"{key} holds {keys.text(raw)}, which that user did not post"
                problems.append(Problem("submitted_stale", detail, named[0], entry=key))
    return problems


def _missing_submissions(
    conn: redis.Redis, seen: dict[int, _Indexed], batch: int, wrong: set[str | None]
) -> list[Problem]:
    """Articles posted by a user:<pk> missing from that user's submitted:<pk> (one that is
    not a zset, in `wrong`, is reported as such)."""
    posted = [
        (i, f.poster_id)
        for i, f in sorted(seen.items())
        if f.poster_id is not None and keys.submitted(f.poster_id) not in wrong
    ]
    problems: list[Problem] = []
    for chunk in chunks(posted, batch):
        pipe = conn.pipeline(transaction=False)
        for article_id, user_id in chunk:
            pipe.zscore(keys.submitted(user_id or 0), keys.article(article_id))
        replies = pipe.execute(raise_on_error=False)
        for (article_id, user_id), score in zip(chunk, replies, strict=True):
            if score is None:  # (an error: a key made a non-zset since the scan; next run)
                key = keys.submitted(user_id or 0)
                problems.append(
                    Problem("unsubmitted", f"missing from {key}", article_id, entry=key)
                )
    return problems


# --- the re-reads of their suspects (see confirm) ----------------------------------------


def link_read(pipe: redis.client.Pipeline, entry: str, holder: str) -> Judge:
    """The slot a link_stale `entry` names and the article it maps to (`holder`, as last
    read)."""
    slot = entry_slot(entry)
    article_id = keys.article_id_or_none(holder)
    if slot:
        pipe.hget(*slot)
    else:
        pipe.echo("")  # an entry no audit wrote: a reply in its place
    if article_id is not None:
        pipe.hget(holder, "link")
        pipe.exists(holder)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        if isinstance(replies[0], redis.ResponseError):
            return None, []  # no longer a hash: reported as such
        now_holder = keys.link_holder(keys.text(replies[0] or b""))
        if now_holder != holder:
            return now_holder, []
        if not holder or (article_id is not None and _links_there(slot, *replies[1:3])):
            return None, []
        detail = f"{entry} maps to {holder}, which does not link there"
        return None, [Problem("link_stale", detail, article_id, entry=entry)]

    return judge


def _links_there(slot: Slot | None, link: Any, exists: Any) -> bool:
    """Whether the article read (its `link`, whether it exists) links to `slot`; one that
    is not a hash counts as linking there: it is reported as wrong_type."""
    if isinstance(link, redis.ResponseError):
        return True
    return bool(exists) and slot_of(normalized(keys.text(link or b""))) == slot


def linked_read(pipe: redis.client.Pipeline, article_id: int, seen: tuple[str, str]) -> Judge:
    """An article, links: at its link, and the article that maps there; `seen` is (its
    normalised link, that article) as last read."""
    member, (norm, holder) = keys.article(article_id), seen
    rival = keys.article_id_or_none(holder)
    pipe.hmget(member, "link", "time")
    if norm:
        pipe.hget(*keys.link_slot(norm))
    else:
        pipe.echo("")  # no link: a reply in its place
    if rival is not None:
        pipe.hmget(holder, "link", "time")

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        fields = replies[0]
        if isinstance(fields, redis.ResponseError) or fields[1] is None:
            return None, []
        if isinstance(replies[1], redis.ResponseError):
            return None, []  # its bucket is not a hash: reported as such
        now_seen = (
            normalized(keys.text(fields[0] or b"")),
            keys.link_holder(keys.text(replies[1] or b"")),
        )
        if now_seen != seen:
            return now_seen, []
        if not norm or holder == member or not _open(fields[1], at):
            return None, []
        other = replies[2] if rival is not None else [None, None]
        shared = isinstance(other, list) and normalized(keys.text(other[0] or b"")) == norm
        if shared and _open(other[1], at):
            detail = f"open for voting with the same link as article {rival}"
            return None, [Problem("link_shared", detail, article_id, entry=norm)]
        detail = f"links:<b> does not map {norm} to it"
        return None, [Problem("link_unindexed", detail, article_id, entry=norm)]

    return judge


def _open(posted: bytes | None, at: float) -> bool:
    """Whether an article posted at `posted` (a bad time: 0) is open for voting at `at`."""
    return at < (time_or_none(posted) or 0) + conf.window()


def submitted_read(pipe: redis.client.Pipeline, key: str, article_id: int) -> Judge:
    """One article's entry in submitted:<pk> and its poster."""
    member = keys.article(article_id)
    pipe.zscore(key, member)
    pipe.hmget(member, "link", "poster", "time")

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        score, fields = replies
        if isinstance(score, redis.ResponseError) or isinstance(fields, redis.ResponseError):
            return None, []  # a key of the wrong type: reported as such
        exists = fields != [None, None, None]
        poster = user_id_or_none(keys.text(fields[1] or b"")) if exists else None
        posted_here = poster is not None and keys.submitted(poster) == key
        if score is not None and not posted_here:
            detail = f"{key} holds {member}, which that user did not post"
            return None, [Problem("submitted_stale", detail, article_id, entry=key)]
        if score is None and posted_here:
            return None, [Problem("unsubmitted", f"missing from {key}", article_id, entry=key)]
        return None, []

    return judge
