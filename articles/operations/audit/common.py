"""What every check of the audit shares: the Problem it reports, the store-wide keys
and their types, and the readings of values other code may have written badly."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence, Sized
from dataclasses import dataclass
from typing import Any, TypeVar

import redis

from articles import validation
from articles.errors import InvalidInput, StoreCorrupt
from articles.store import keys
from articles.store.scripts import raise_for_status
from articles.types import valid_time


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    detail: str
    article_id: int | None = None
    group: str | None = None
    entry: str | None = None  # the index entry at fault: a normalised link, submitted:<pk>, …
    member: str | None = None  # the comment:<id> at fault in `entry` (comment indexes)


# The store-wide keys and the type each must hold. One of another type is reported, not
# read further, and no repair writes to it (a person decides what it should hold).
INDEX_TYPES = {
    keys.SCORE: "zset",
    keys.TIME: "zset",
    keys.GOOD: "zset",
    keys.VOTES: "zset",
    keys.GROUPS: "hash",
    keys.SEARCH_STEMMER: "string",
}
# The store-wide indexes an article is in (article_repair writes or removes its entries).
INDEXES = (keys.SCORE, keys.TIME, keys.GOOD, keys.VOTES)
# Problems no repair can mend from what the store still knows: reported and left alone.
REPORT_ONLY_KINDS = frozenset({"wrong_type", "bad_group_name", "comment_bad", "live_too_long"})
# A count the scripts can HINCRBY (vote.lua's bad_counts()).
WHOLE = re.compile(r"-?[0-9]{1,18}")
T = TypeVar("T")


def wrong_type(key: str, kind: str, expected: str, article_id: int | None = None) -> Problem:
    return Problem("wrong_type", f"{key} is a {kind}, not a {expected}", article_id, entry=key)


def former_index(conn: redis.Redis, scan: str, kind: str) -> list[Problem]:
    """One `kind` problem if sets of a former search index (`scan` matches them) are left:
    manage.py reindex_search builds the current index and then deletes them, so no repair
    here (deleting them before every item is in the new sets would hide it from search)."""
    left = sum(1 for _ in conn.scan_iter(match=scan, count=1000))
    if not left:
        return []
    detail = f"{left} set(s) of the former index ({scan}) left: run manage.py reindex_search"
    return [Problem(kind, detail, entry=scan)]


def index_types(conn: redis.Redis) -> tuple[list[Problem], set[str]]:
    """The store-wide keys of the wrong type: reported, and skipped by what follows."""
    pipe = conn.pipeline(transaction=False)
    for key in INDEX_TYPES:
        pipe.type(key)
    problems, broken = [], set()
    for (key, expected), kind in zip(INDEX_TYPES.items(), pipe.execute(), strict=True):
        if keys.text(kind) not in ("none", expected):
            problems.append(wrong_type(key, keys.text(kind), expected))
            broken.add(key)
    return problems, broken


def indexed_article_ids(
    conn: redis.Redis, broken: set[str] | frozenset[str] = frozenset()
) -> set[int]:
    """Every article id with a hash or an entry in score:, time:, good: or votes: (SCAN,
    no KEYS)."""
    ids = set(keys.article_ids(conn.scan_iter(match=keys.ARTICLE_SCAN, count=1000)))
    for key in INDEXES:
        if key not in broken:
            ids.update(keys.article_ids(m for m, _ in conn.zscan_iter(key, count=1000)))
    return ids


def scan_groups(
    conn: redis.Redis,
) -> tuple[dict[int, set[str]], set[str], list[str], list[tuple[str, str]]]:
    """Memberships, the valid names, the keys with a bad name, and (key, type) of the
    group keys that are not sets."""
    memberships: dict[int, set[str]] = defaultdict(set)
    names: set[str] = set()
    bad: list[str] = []
    wrong: list[tuple[str, str]] = []
    for key in conn.scan_iter(match=keys.GROUP_SCAN, count=1000):
        name = keys.text(key).removeprefix("group:")
        if not keys.GROUP_NAME.fullmatch(name):
            bad.append(keys.text(key))
            continue
        kind = keys.text(conn.type(key))
        if kind != "set":
            if kind != "none":  # "none": deleted since the SCAN saw it
                wrong.append((keys.text(key), kind))
            continue
        names.add(name)
        for article_id in keys.article_ids(conn.sscan_iter(key, count=1000)):
            memberships[article_id].add(name)
    return memberships, names, bad, wrong


def queue_voter_reads(pipe: redis.client.Pipeline, up: str, down: str) -> None:
    """Queue the reads of an item's voter sets the checks take, in this order: the size of
    each, the users in both, the TTL of each (articles and comments alike)."""
    pipe.scard(up)
    pipe.scard(down)
    pipe.sinter([up, down])
    pipe.ttl(up)
    pipe.ttl(down)


def grouped(raw: dict[Any, Any]) -> set[str]:
    """The groups an article hash's `groups` field names."""
    return {g for g in keys.text(raw.get(b"groups", b"")).split(",") if g}


def voter_faults(
    votes: int, downvotes: int, n_up: int, n_down: int, both: Sized
) -> list[tuple[str, str]]:
    """What is wrong between an item's vote counts and its voter sets (kind, detail), for
    articles and comments alike."""
    faults = []
    if votes != n_up:
        faults.append(("votes", f"votes {votes} != {n_up} up-voters"))
    if downvotes != n_down:
        faults.append(("downvotes", f"downvotes {downvotes} != {n_down} down-voters"))
    if both:
        faults.append(("both_sets", f"{len(both)} user(s) in both voter sets"))
    return faults


def cid(key: bytes | str) -> int | None:
    return keys.comment_id_or_none(keys.text(key))


def normalized(link: str) -> str:
    """The index key of a link our code could have posted, else "" (another scheme, a bad
    host: written by other code, never indexed, and refused if posted)."""
    try:
        return validation.normalize_link(validation.clean_link(link)) if link else ""
    except InvalidInput:
        return ""


def user_id_or_none(member: str) -> int | None:
    kind, _, pk = member.partition(":")
    if kind != "user" or not pk.isdigit() or pk.startswith("0"):
        return None
    return int(pk)


def time_or_none(value: bytes | str | float | None) -> float | None:
    """A post time the rules can use, or None (missing, not a number, out of range)."""
    number = to_float(value)
    return number if number is not None and valid_time(number) else None


def frontier_of(value: bytes | str) -> tuple[float, str]:
    """A frontier in time:'s order, "T" or "T article:<id>" (a kept period's, links:closed),
    as (T, the member or ""); as frontier_of() in _lib.lua. Raises ValueError for a T that
    is not a number."""
    t, _, member = keys.text(value).partition(" ")
    return float(t), member


def whole(value: bytes | str) -> int | None:
    """A count that was whole ("3", or "3.0" written by other code), else None."""
    number = to_float(value)
    if number is None or not math.isfinite(number) or not number.is_integer():
        return None
    return int(number)


def to_float(value: bytes | str | float | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def shown(value: bytes | None) -> str:
    return "missing" if value is None else repr(keys.text(value))


def redis_now(conn: redis.Redis) -> float:
    """Redis' own clock: the one the voter sets expire by and the scripts judge by."""
    seconds, micros = conn.time()
    return seconds + micros / 1_000_000


def chunks(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """`items` in batches of `size`: one pipeline each."""
    return [items[offset : offset + size] for offset in range(0, len(items), size)]


def fill_steps(step: Callable[[], Any]) -> int:
    """Call a backfill's bounded script (`step`, answering {OK, done, copied}) until it is
    done; returns the entries copied. A key of the wrong type stops it: the audit reports
    it for a person, and nothing is written over."""
    copied = 0
    while True:
        reply = step()
        try:
            raise_for_status(reply)
        except StoreCorrupt:
            return copied
        copied += int(reply[2])
        if int(reply[1]):
            return copied
