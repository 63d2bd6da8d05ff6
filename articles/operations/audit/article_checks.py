"""The checks of each article against its indexes, voter sets and groups (SPEC §1).

One article is read by the pipelined reads of queue_reads; each check judges one
invariant from those replies, and article_problems runs them in a fixed order. A key of the
wrong type, a missing hash, a bad time or a bad count stops the checks that need it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from articles import conf
from articles.operations.audit.common import (
    WHOLE,
    Problem,
    grouped,
    queue_voter_reads,
    shown,
    time_or_none,
    to_float,
    voter_faults,
    wrong_type,
)
from articles.operations.audit.confirm import Judge
from articles.store import keys
from articles.types import Article, article_score, valid_time

# The kinds article_problems reports, re-read by article_read.
ARTICLE_KINDS = frozenset(
    {
        "missing_hash",
        "no_expiry",
        "groups_field",
        "bad_time",
        "bad_count",
        "not_indexed",
        "score",
        "time_index",
        "votes",
        "downvotes",
        "both_sets",
        "good",
        "net_votes",
        "vote_after_close",
        "held_ranked",
    }
)
# The reads of one article, in the order _Found.of takes their replies.
READS = 13


def queue_reads(pipe: redis.client.Pipeline, article_id: int) -> None:
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    pipe.type(member)
    pipe.type(up)
    pipe.type(down)
    pipe.hgetall(member)
    pipe.zscore(keys.SCORE, member)
    pipe.zscore(keys.TIME, member)
    pipe.zscore(keys.GOOD, member)
    pipe.zscore(keys.VOTES, member)
    queue_voter_reads(pipe, up, down)


def audit_chunk(
    conn: redis.Redis,
    chunk: Sequence[int],
    memberships: dict[int, set[str]],
    now: float,
    broken: set[str],
) -> list[Problem]:
    """The problems of the articles `chunk`, read in one pipeline."""
    pipe = conn.pipeline(transaction=False)
    for article_id in chunk:
        queue_reads(pipe, article_id)
    # raise_on_error=False: a reply refused for the wrong type is reported below, and the
    # audit goes on with the next article.
    replies = pipe.execute(raise_on_error=False)
    problems: list[Problem] = []
    for i, article_id in enumerate(chunk):
        found = replies[i * READS : (i + 1) * READS]
        in_sets = memberships.get(article_id, set())
        problems += article_problems(article_id, found, in_sets, now, broken)
    return problems


@dataclass(frozen=True, slots=True)
class _Found:
    """One article as read: the replies of queue_reads, the groups whose sets hold it,
    the clock and the store-wide indexes of the wrong type (their replies are ignored)."""

    article_id: int
    types: tuple[str, str, str]
    raw: Any
    score: float | None
    posted_idx: float | None
    good_idx: float | None
    net_idx: float | None
    n_up: int
    n_down: int
    both: Any
    ttl_up: int
    ttl_down: int
    in_sets: set[str]
    now: float
    broken: set[str]

    @classmethod
    def of(
        cls, article_id: int, replies: list[Any], in_sets: set[str], now: float, broken: set[str]
    ) -> _Found:
        t1, t2, t3 = (keys.text(t) for t in replies[:3])
        raw, score, posted, good, net, n_up, n_down, both, ttl_up, ttl_down = replies[3:]
        # A broken index (its reply an error) was reported once, as wrong_type.
        return cls(
            article_id,
            (t1, t2, t3),
            raw,
            None if keys.SCORE in broken else score,
            None if keys.TIME in broken else posted,
            None if keys.GOOD in broken else good,
            None if keys.VOTES in broken else net,
            n_up,
            n_down,
            both,
            ttl_up,
            ttl_down,
            in_sets,
            now,
            broken,
        )

    def problem(self, kind: str, detail: str) -> Problem:
        return Problem(kind, detail, self.article_id)


def article_problems(
    article_id: int, replies: list[Any], in_sets: set[str], now: float, broken: set[str]
) -> list[Problem]:
    """What is wrong with one article, judged from the replies of queue_reads and the
    groups whose sets hold it."""
    found = _Found.of(article_id, replies, in_sets, now, broken)
    wrong = _wrong_types(found)
    if wrong:
        return wrong
    if not found.raw:
        return _missing_hash(found)
    problems = _no_expiry(found) + _groups_field(found)
    for gate in (_bad_time, _bad_count):
        faults = gate(found)
        if faults:
            return problems + faults
    window, vote_score = conf.window(), conf.vote_score()
    article = Article.from_hash(
        article_id, found.raw, score=None, window=window, vote_score=vote_score
    )
    for check in _HELD_CHECKS if article.held else _CHECKS:
        problems += check(found, article)
    return problems


def _wrong_types(found: _Found) -> list[Problem]:
    article_id = found.article_id
    expected = (
        (keys.article(article_id), "hash"),
        (keys.voted(article_id), "set"),
        (keys.voted_down(article_id), "set"),
    )
    return [
        wrong_type(key, kind, want, article_id)
        for (key, want), kind in zip(expected, found.types, strict=True)
        if kind not in ("none", want)
    ]


def _missing_hash(found: _Found) -> list[Problem]:
    # Not indexed nor grouped any more: deleted since its id was listed, not a fault.
    indexes = (found.score, found.posted_idx, found.good_idx, found.net_idx)
    if found.in_sets or any(i is not None for i in indexes):
        return [found.problem("missing_hash", "indexed or grouped, but article hash is gone")]
    return []


def _no_expiry(found: _Found) -> list[Problem]:
    sets = ((found.ttl_up, "voted"), (found.ttl_down, "voted_down"))
    return [
        found.problem("no_expiry", f"{key}:{found.article_id} has no expiry")
        for ttl, key in sets
        if ttl == -1
    ]


def _groups_field(found: _Found) -> list[Problem]:
    named = grouped(found.raw)
    if named == found.in_sets:
        return []
    detail = f"groups field {sorted(named)} != sets {sorted(found.in_sets)}"
    return [found.problem("groups_field", detail)]


def _bad_time(found: _Found) -> list[Problem]:
    if time_or_none(found.raw.get(b"time")) is not None:
        return []
    indexed = found.posted_idx
    known = indexed if indexed is not None and valid_time(indexed) else None
    detail = f"time is {shown(found.raw.get(b'time'))}, not a post time; " + (
        f"time: has {known}" if known is not None else "time: has none usable"
    )
    return [found.problem("bad_time", detail)]


def _bad_count(found: _Found) -> list[Problem]:
    counts = {name: found.raw.get(name.encode(), b"0") for name in ("votes", "downvotes")}
    bad = {name: v for name, v in counts.items() if not WHOLE.fullmatch(keys.text(v))}
    if not bad:
        return []
    listed = ", ".join(f"{name} is {shown(v)}" for name, v in bad.items())
    return [found.problem("bad_count", f"{listed}, not a whole number")]


def _not_indexed(found: _Found, article: Article) -> list[Problem]:
    unindexed = (found.score is None and keys.SCORE not in found.broken) or (
        found.posted_idx is None and keys.TIME not in found.broken
    )
    return [found.problem("not_indexed", "missing from score: or time:")] if unindexed else []


def _score(found: _Found, article: Article) -> list[Problem]:
    vote_score = conf.vote_score()
    expected = article_score(article.time, article.votes, article.downvotes, vote_score=vote_score)
    if found.score is None or abs(found.score - expected) <= 1e-3:
        return []
    return [found.problem("score", f"score {found.score} != {expected} from time and votes")]


def _time_index(found: _Found, article: Article) -> list[Problem]:
    if found.posted_idx is None or abs(found.posted_idx - article.time) <= 1e-3:
        return []
    return [found.problem("time_index", f"time: has {found.posted_idx}, hash has {article.time}")]


def _voters(found: _Found, article: Article) -> list[Problem]:
    if not article.voting_open(found.now):
        return []
    faults = voter_faults(article.votes, article.downvotes, found.n_up, found.n_down, found.both)
    return [found.problem(kind, detail) for kind, detail in faults]


def _good(found: _Found, article: Article) -> list[Problem]:
    indexed = found.good_idx is not None
    if keys.GOOD in found.broken or (article.votes >= conf.good_votes()) == indexed:
        return []
    detail = f"{article.votes} up-votes but good-index membership is {indexed}"
    return [found.problem("good", detail)]


def _net_votes(found: _Found, article: Article) -> list[Problem]:
    net = article.votes - article.downvotes
    if keys.VOTES in found.broken or found.net_idx == net:
        return []
    has = "nothing" if found.net_idx is None else f"{found.net_idx:g}"
    return [found.problem("net_votes", f"votes: has {has}, the counts say {net}")]


def _vote_after_close(found: _Found, article: Article) -> list[Problem]:
    last_vote = to_float(found.raw.get(b"last_vote"))
    if last_vote is None or last_vote < article.voting_closes_at:
        return []
    late = last_vote - article.voting_closes_at
    return [
        found.problem("vote_after_close", f"a vote was counted {late:.3f} s after voting closed")
    ]


# The checks of an article with a usable time and counts, in the order they report.
_CHECKS: tuple[Callable[[_Found, Article], list[Problem]], ...] = (
    _not_indexed,
    _score,
    _time_index,
    _voters,
    _good,
    _net_votes,
    _vote_after_close,
)


def _held_ranked(found: _Found, article: Article) -> list[Problem]:
    """A held article (flags past the threshold, flag.lua) is in none of the rankings
    until staff decide: its absence is no fault, its presence is."""
    indexes = {
        keys.SCORE: found.score,
        keys.TIME: found.posted_idx,
        keys.GOOD: found.good_idx,
        keys.VOTES: found.net_idx,
    }
    ranked = [key for key, value in indexes.items() if value is not None]
    if not ranked:
        return []
    return [found.problem("held_ranked", f"held for its flags, but in {' '.join(ranked)}")]


# A held article's checks: its votes as any other's; its rankings, that it is in none.
_HELD_CHECKS: tuple[Callable[[_Found, Article], list[Problem]], ...] = (
    _held_ranked,
    _voters,
    _vote_after_close,
)


def article_read(
    pipe: redis.client.Pipeline, article_id: int, groups: frozenset[str], broken: set[str]
) -> Judge:
    """The re-read of one article with the sets of `groups` (and of the groups its field
    names): the same reads and checks as the audit's."""
    member = keys.article(article_id)
    names = sorted(groups)
    queue_reads(pipe, article_id)
    for name in names:
        pipe.sismember(keys.group(name), member)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        raw = replies[3]
        named = grouped(raw) if isinstance(raw, dict) else set()
        if not named <= groups:
            return groups | named, []
        hits = replies[READS:]
        in_sets = {n for n, hit in zip(names, hits, strict=True) if hit == 1}
        return None, article_problems(article_id, replies[:READS], in_sets, at, broken)

    return judge
