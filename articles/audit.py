"""The invariant audit of the store (check_votes) and the repairs of --repair.

Reads in batches with SCAN, never KEYS; each repair is one MULTI/EXEC under WATCH.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import redis

from articles import conf, keys, validation
from articles.connection import get_connection
from articles.errors import Conflict
from articles.selectors import _ids, _s
from articles.services import _ATTEMPTS, _group_keys
from articles.types import Article, article_score


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    detail: str
    article_id: int | None = None
    group: str | None = None


def invariant_audit(*, now: float | None = None, batch: int = 500) -> list[Problem]:
    """Every broken invariant of SPEC §1, plus voter sets without their expiry and
    indexes that disagree with the article hashes. Reads only; works on book data too.
    The window is judged by Redis' clock, as the scripts judge it (`now` fixes it)."""
    conn = get_connection()
    now = _redis_now(conn) if now is None else now
    ids = _indexed_article_ids(conn)
    registry = {_s(k) for k in conn.hkeys(keys.GROUPS)}
    memberships, names, bad = _scan_groups(conn)
    problems = [Problem("bad_group_name", f"group key {key!r}") for key in bad]
    problems += [
        Problem("unregistered_group", f"group {name} has no registry entry", group=name)
        for name in sorted(names - registry)
    ]
    ids.update(memberships)
    ordered = sorted(ids)
    for offset in range(0, len(ordered), batch):
        chunk = ordered[offset : offset + batch]
        problems.extend(_audit_chunk(conn, chunk, memberships, now))
    return problems


def _indexed_article_ids(conn: redis.Redis) -> set[int]:
    """Every article id with a hash or an entry in score:, time: or good: (SCAN, no KEYS)."""
    ids = set(_ids(conn.scan_iter(match=keys.ARTICLE_SCAN, count=1000)))
    for key in (keys.SCORE, keys.TIME, keys.GOOD):
        ids.update(_ids(m for m, _ in conn.zscan_iter(key, count=1000)))
    return ids


def group_memberships() -> dict[int, set[str]]:
    """Article id -> the groups whose sets hold it, read from every group:* set."""
    return _scan_groups(get_connection())[0]


def _scan_groups(conn: redis.Redis) -> tuple[dict[int, set[str]], set[str], list[str]]:
    memberships: dict[int, set[str]] = defaultdict(set)
    names: set[str] = set()
    bad: list[str] = []
    for key in conn.scan_iter(match=keys.GROUP_SCAN, count=1000):
        name = _s(key).removeprefix("group:")
        if not keys.GROUP_NAME.fullmatch(name):
            bad.append(_s(key))
            continue
        names.add(name)
        for article_id in _ids(conn.sscan_iter(key, count=1000)):
            memberships[article_id].add(name)
    return memberships, names, bad


def _audit_chunk(
    conn: redis.Redis, chunk: list[int], memberships: dict[int, set[str]], now: float
) -> list[Problem]:
    pipe = conn.pipeline(transaction=False)
    for article_id in chunk:
        member = keys.article(article_id)
        up, down = keys.voted(article_id), keys.voted_down(article_id)
        pipe.hgetall(member)
        pipe.zscore(keys.SCORE, member)
        pipe.zscore(keys.TIME, member)
        pipe.zscore(keys.GOOD, member)
        pipe.scard(up)
        pipe.scard(down)
        pipe.sinter([up, down])
        pipe.ttl(up)
        pipe.ttl(down)
    replies = pipe.execute()
    problems: list[Problem] = []
    vote_score, window, good = conf.vote_score(), conf.window(), conf.good_votes()
    for i, article_id in enumerate(chunk):
        raw, score, posted_idx, good_idx, n_up, n_down, both, ttl_up, ttl_down = replies[
            i * 9 : i * 9 + 9
        ]

        def report(kind: str, detail: str, article_id: int = article_id) -> None:
            problems.append(Problem(kind, detail, article_id))

        if not raw:
            report("missing_hash", "indexed or grouped, but article hash is gone")
            continue
        article = Article.from_hash(
            article_id, raw, score=None, window=window, vote_score=vote_score
        )
        expected = article_score(
            article.time, article.votes, article.downvotes, vote_score=vote_score
        )
        if score is None or posted_idx is None:
            report("not_indexed", "missing from score: or time:")
        elif abs(score - expected) > 1e-3:
            report("score", f"score {score} != {expected} from time and votes")
        if posted_idx is not None and abs(posted_idx - article.time) > 1e-3:
            report("time_index", f"time: has {posted_idx}, hash has {article.time}")
        if article.voting_open(now):
            if article.votes != n_up:
                report("votes", f"votes {article.votes} != {n_up} up-voters")
            if article.downvotes != n_down:
                report("downvotes", f"downvotes {article.downvotes} != {n_down} down-voters")
            if both:
                report("both_sets", f"{len(both)} user(s) in both voter sets")
        for ttl, key in ((ttl_up, "voted"), (ttl_down, "voted_down")):
            if ttl == -1:
                report("no_expiry", f"{key}:{article_id} has no expiry")
        if (article.votes >= good) != (good_idx is not None):
            report(
                "good",
                f"{article.votes} up-votes but good-index membership is {good_idx is not None}",
            )
        last_vote = _float(raw.get(b"last_vote"))
        if last_vote is not None and last_vote >= article.voting_closes_at:
            late = last_vote - article.voting_closes_at
            report("vote_after_close", f"a vote was counted {late:.3f} s after voting closed")
        in_sets = memberships.get(article_id, set())
        if set(article.groups) != in_sets:
            report(
                "groups_field", f"groups field {sorted(article.groups)} != sets {sorted(in_sets)}"
            )
    return problems


def article_repair(
    *, article_id: int, groups: Iterable[str] = (), now: float | None = None
) -> bool:
    """Make one article satisfy every invariant of SPEC §1 again (check_votes --repair).

    The voter sets are the truth while voting is open, the counts after it closed.
    One MULTI/EXEC under WATCH, retried if a vote lands meanwhile. Returns False if the
    article hash is gone: its index entries and its memberships of `groups` are removed.
    """
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    conn = get_connection()
    now = _redis_now(conn) if now is None else now
    with conn.pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(member, up, down)
                raw = pipe.hgetall(member)
                if not raw:
                    pipe.multi()
                    for key in (keys.SCORE, keys.TIME, keys.GOOD):
                        pipe.zrem(key, member)
                    for name in groups:
                        pipe.srem(keys.group(name), member)
                        pipe.delete(*_group_keys(name)[1:])
                    pipe.delete(up, down)
                    pipe.execute()
                    return False
                posted = float(raw.get(b"time", b"0"))
                closes = posted + conf.window()
                if now < closes:
                    both = pipe.sinter([up, down])
                    votes = pipe.scard(up)
                    downvotes = pipe.scard(down) - len(both)
                else:
                    both = set()
                    votes = int(float(raw.get(b"votes", b"0")))
                    downvotes = int(float(raw.get(b"downvotes", b"0")))
                pipe.multi()
                if both:
                    pipe.srem(down, *both)
                pipe.hset(member, mapping={"votes": votes, "downvotes": downvotes})
                score = article_score(posted, votes, downvotes, vote_score=conf.vote_score())
                pipe.zadd(keys.SCORE, {member: score})
                pipe.zadd(keys.TIME, {member: posted})
                if votes >= conf.good_votes():
                    pipe.zadd(keys.GOOD, {member: posted})
                else:
                    pipe.zrem(keys.GOOD, member)
                # EXPIREAT in the past deletes the key, as the window says it should be.
                pipe.expireat(up, int(-(-closes // 1)))
                pipe.expireat(down, int(-(-closes // 1)))
                pipe.execute()
                return True
            except redis.WatchError:
                continue
    raise Conflict()


def _redis_now(conn: redis.Redis) -> float:
    """Redis' own clock: the one the voter sets expire by and the scripts judge by."""
    seconds, micros = conn.time()
    return seconds + micros / 1_000_000


def _float(value: bytes | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def article_groups_set(*, article_id: int, groups: Iterable[str]) -> None:
    """Write the `groups` field from the group sets (check_votes --repair)."""
    member = keys.article(article_id)
    names = ",".join(sorted(set(groups)))
    with get_connection().pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(member)
                if not pipe.exists(member):
                    return
                pipe.multi()
                pipe.hset(member, "groups", names)
                pipe.execute()
                return
            except redis.WatchError:
                continue
    raise Conflict()


def group_register(*, name: str, description: str = "") -> None:
    """Add a group that exists only as a set (made by the book's code) to the registry."""
    get_connection().hsetnx(keys.GROUPS, validation.clean_group_name(name), description)
