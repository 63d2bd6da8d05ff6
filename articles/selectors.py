"""Reads from the article store: a constant number of round trips a page, never one
per article (the reads of a page go out in one pipeline)."""

from __future__ import annotations

import json
import time as _time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import redis

from articles import conf, keys, scripts, validation
from articles.connection import get_connection
from articles.errors import ArticleNotFound, GroupNotFound
from articles.types import Article, Group, ModlogEntry, Order, Page, Period, Vote


def article_get(*, article_id: int, user_id: int | None = None) -> Article:
    """One article (one round trip). Raises ArticleNotFound."""
    try:
        keys.article(article_id)
    except ValueError:
        raise ArticleNotFound() from None
    found = _fetch(get_connection(), [article_id], user_id)
    if not found:
        raise ArticleNotFound()
    return found[0]


def article_list(
    *, order: Order = Order.SCORE, page: int | str = 1, user_id: int | None = None
) -> Page:
    """All articles by score or by time, 25 a page (two round trips). Raises InvalidInput."""
    number, start, stop = _bounds(page)
    pipe = get_connection().pipeline(transaction=False)
    pipe.zcard(order.key)
    pipe.zrevrange(order.key, start, stop)
    count, members = pipe.execute()
    return _page(members, number, count, user_id)


def group_article_list(
    *, name: str, order: Order = Order.SCORE, page: int | str = 1, user_id: int | None = None
) -> Page:
    """A group's articles by score or time, from the 60 s cached intersection (the book's
    get_group_articles). Two round trips. Raises InvalidInput, GroupNotFound."""
    name = validation.clean_group_name(name)
    number, start, stop = _bounds(page)
    cache = keys.group_order(order.key, name)
    reply = scripts.RANKING_PAGE(
        keys=[cache, keys.group(name), order.key, cache, keys.GROUPS],
        args=["group", conf.group_cache_seconds(), start, stop, 0, name],
        client=get_connection(),
    )
    if not int(reply[0]):
        raise GroupNotFound()
    return _page(reply[2::2], number, int(reply[1]), user_id)


def top_article_list(
    *,
    period: Period = Period.ALL,
    page: int | str = 1,
    user_id: int | None = None,
    now: float | None = None,
) -> Page:
    """The highest-scored articles posted in the last day/week/month/year, or of all time.
    Period rankings are cached for 60 s like group rankings. Two round trips."""
    if period.seconds is None:
        return article_list(order=Order.SCORE, page=page, user_id=user_id)
    number, start, stop = _bounds(page)
    earliest = (_time.time() if now is None else now) - period.seconds
    reply = scripts.RANKING_PAGE(
        keys=[
            keys.top(period.value),
            keys.TIME,
            keys.SCORE,
            keys.top_scratch(period.value),
            keys.GROUPS,
        ],
        args=["top", conf.group_cache_seconds(), start, stop, earliest, ""],
        client=get_connection(),
    )
    return _page(reply[2::2], number, int(reply[1]), user_id)


def good_article_list(*, user_id: int | None = None, limit: int | None = None) -> list[Article]:
    """The newest good articles (>= 200 up-votes), 50 by default. Two round trips."""
    conn = get_connection()
    members: list[bytes] = conn.zrevrange(keys.GOOD, 0, (limit or conf.home_good()) - 1)  # type: ignore[assignment]
    return _fetch(conn, _ids(members), user_id)


def good_article_day(*, day: date, page: int | str = 1, user_id: int | None = None) -> Page:
    """The good articles posted on one UTC day, newest first. Two round trips."""
    number, start, _ = _bounds(page)
    first = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
    last = f"({first + 86_400}"
    pipe = get_connection().pipeline(transaction=False)
    pipe.zcount(keys.GOOD, first, last)
    pipe.zrevrangebyscore(keys.GOOD, last, first, start=start, num=conf.per_page())
    count, members = pipe.execute()
    return _page(members, number, count, user_id)


def user_article_list(*, poster_id: int, page: int | str = 1, user_id: int | None = None) -> Page:
    """A user's submissions, newest first. Two round trips."""
    number, start, stop = _bounds(page)
    key = keys.submitted(poster_id)
    pipe = get_connection().pipeline(transaction=False)
    pipe.zcard(key)
    pipe.zrevrange(key, start, stop)
    count, members = pipe.execute()
    return _page(members, number, count, user_id)


def group_list() -> list[Group]:
    """Every registered group with its description and size, by name. Two round trips."""
    conn = get_connection()
    registry = {_s(k): _s(v) for k, v in conn.hgetall(keys.GROUPS).items()}
    names = sorted(n for n in registry if keys.GROUP_NAME.fullmatch(n))
    pipe = conn.pipeline(transaction=False)
    for name in names:
        pipe.scard(keys.group(name))
    sizes = pipe.execute() if names else []
    return [Group(n, registry[n], int(s)) for n, s in zip(names, sizes, strict=True)]


def group_get(*, name: str) -> Group:
    """One group. Raises InvalidInput, GroupNotFound."""
    name = validation.clean_group_name(name)
    pipe = get_connection().pipeline(transaction=False)
    pipe.hget(keys.GROUPS, name)
    pipe.scard(keys.group(name))
    description, size = pipe.execute()
    if description is None and not size:
        raise GroupNotFound()
    return Group(name, _s(description or b""), int(size))


def modlog_list(*, page: int | str = 1, per_page: int = 50) -> tuple[list[ModlogEntry], int]:
    """Staff actions, newest first, and how many there are."""
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    pipe = get_connection().pipeline(transaction=False)
    pipe.llen(keys.MODLOG)
    pipe.lrange(keys.MODLOG, start, start + per_page - 1)
    count, raw = pipe.execute()
    entries = []
    for item in raw:
        try:
            data = json.loads(item)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            continue  # not an entry of ours (written by hand or by other code)
        entries.append(
            ModlogEntry(
                time=float(data.get("time", 0)),
                actor=str(data.get("actor", "")),
                action=str(data.get("action", "")),
                target=str(data.get("target", "")),
                reason=str(data.get("reason", "")),
                details=dict(data.get("details") or {}),
            )
        )
    return entries, int(count)


def stats_daily(*, days: int = 30, now: float | None = None) -> list[tuple[date, int, int]]:
    """(day, articles posted, votes cast) for each of the last `days` UTC days, oldest first."""
    today = datetime.fromtimestamp(_time.time() if now is None else now, tz=UTC).date()
    span = [today - timedelta(days=n) for n in range(days - 1, -1, -1)]
    fields = [d.isoformat() for d in span]
    pipe = get_connection().pipeline(transaction=False)
    pipe.hmget(keys.STATS_POSTS, fields)
    pipe.hmget(keys.STATS_VOTES, fields)
    posts, votes = pipe.execute()
    return [(d, int(p or 0), int(v or 0)) for d, p, v in zip(span, posts, votes, strict=True)]


def store_status() -> dict[str, object]:
    """What /healthz and the start-up checks report about the Redis server."""
    conn = get_connection()
    info = conn.info()
    return {
        "redis_version": info.get("redis_version"),
        "aof_enabled": bool(int(info.get("aof_enabled", 0))),
        "maxmemory_policy": info.get("maxmemory_policy"),
        "cluster_enabled": bool(int(info.get("cluster_enabled", 0))),
        "used_memory": info.get("used_memory"),
        "articles": int(conn.zcard(keys.TIME)),
    }


# --- the invariant audit (check_votes) ----------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    detail: str
    article_id: int | None = None
    group: str | None = None


def invariant_audit(*, now: float | None = None, batch: int = 500) -> list[Problem]:
    """Every broken invariant of SPEC §1, plus voter sets without their expiry and
    indexes that disagree with the article hashes. Reads only; works on book data too."""
    now = _time.time() if now is None else now
    conn = get_connection()
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
    ids = set(_ids(conn.scan_iter(match="article:*", count=1000)))
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
    for key in conn.scan_iter(match="group:*", count=1000):
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
        expected = article.time + vote_score * (article.votes - article.downvotes)
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
        in_sets = memberships.get(article_id, set())
        if set(article.groups) != in_sets:
            report(
                "groups_field", f"groups field {sorted(article.groups)} != sets {sorted(in_sets)}"
            )
    return problems


# --- helpers -----------------------------------------------------------------------


def _bounds(page: int | str) -> tuple[int, int, int]:
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * conf.per_page()
    return number, start, start + conf.per_page() - 1


def _page(members: Iterable[bytes], number: int, count: int, user_id: int | None) -> Page:
    items = _fetch(get_connection(), _ids(members), user_id)
    return Page(items=items, number=number, count=int(count), per_page=conf.per_page())


def _ids(members: Iterable[bytes | str]) -> list[int]:
    found = []
    for member in members:
        try:
            found.append(keys.article_id_of(_s(member)))
        except ValueError:
            continue  # not an article member (a foreign write); never turned into a key
    return found


def _fetch(conn: redis.Redis, ids: list[int], user_id: int | None) -> list[Article]:
    """Hashes and the caller's votes of `ids`, in one pipeline.

    The score is computed from the hash (time + 432 x net votes), which is what `score:`
    holds while the invariants do (check_votes audits it): reading it again per article
    would cost a third of a page's client time for no new information.
    """
    if not ids:
        return []
    pipe = conn.pipeline(transaction=False)
    user = keys.user(user_id) if user_id else None
    for article_id in ids:
        pipe.hgetall(keys.article(article_id))
        if user:
            pipe.sismember(keys.voted(article_id), user)
            pipe.sismember(keys.voted_down(article_id), user)
    replies = pipe.execute()
    step = 3 if user else 1
    window, vote_score = conf.window(), conf.vote_score()
    articles = []
    for i, article_id in enumerate(ids):
        raw = replies[i * step]
        if not raw:
            continue  # deleted between the two round trips
        my_vote = None
        if user:
            up, down = replies[i * step + 1], replies[i * step + 2]
            my_vote = Vote.UP if up else Vote.DOWN if down else Vote.NONE
        articles.append(
            Article.from_hash(
                article_id, raw, score=None, window=window, vote_score=vote_score, my_vote=my_vote
            )
        )
    return articles


def _s(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


# --- branch `reliability`: the logical backup (export_articles) ---------------------

EXPORT_VERSION = 1


def store_is_empty() -> bool:
    """True when the store holds no article, no id counter and no group (import target)."""
    pipe = get_connection().pipeline(transaction=False)
    pipe.exists(keys.ARTICLE_IDS)
    pipe.zcard(keys.TIME)
    pipe.hlen(keys.GROUPS)
    pipe.scan(0, match="article:*", count=100)
    counter, articles, groups, (_, found) = pipe.execute()
    return not (counter or articles or groups or found)


def store_export(*, now: float | None = None) -> Iterable[dict[str, object]]:
    """Every record of the store as JSON-ready dicts: a header, the group registry, each
    article with its vote state (up and down voter sets and their expiry), its indexes and
    groups, the link index, the daily stats, the moderation log and the id counter.

    Each article is read in one MULTI/EXEC, so its record is consistent (counts agree with
    its voter sets); the export as a whole is not a point-in-time snapshot of the store
    (writes made while it runs may or may not be in it; use the AOF for that).
    """
    conn = get_connection()
    exported_ms = int((_time.time() if now is None else now) * 1000)
    yield {"type": "header", "version": EXPORT_VERSION, "exported_at_ms": exported_ms}
    for name, description in sorted(conn.hgetall(keys.GROUPS).items()):
        yield {"type": "group", "name": _x(name), "description": _x(description)}
    memberships = group_memberships()
    ids = _indexed_article_ids(conn)
    for article_id in sorted(ids):
        record = _article_record(conn, article_id, memberships.get(article_id, set()))
        if record is not None:
            yield record
    for norm, member in sorted(conn.hgetall(keys.LINKS).items()):
        yield {"type": "link", "link": _x(norm), "member": _x(member)}
    for key in (keys.STATS_POSTS, keys.STATS_VOTES):
        values = {_x(k): int(v) for k, v in conn.hgetall(key).items()}
        yield {"type": "stats", "key": key, "days": dict(sorted(values.items()))}
    yield {"type": "modlog", "entries": [_x(e) for e in conn.lrange(keys.MODLOG, 0, -1)]}
    # Read last: a post takes its id (INCR) before it writes its hash, so this is at least
    # every id above, and a restored store never hands out an id it already holds.
    yield {"type": "counter", "article_counter": int(conn.get(keys.ARTICLE_IDS) or 0)}


def _article_record(
    conn: redis.Redis, article_id: int, groups: set[str]
) -> dict[str, object] | None:
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    pipe = conn.pipeline(transaction=True)
    pipe.time()
    pipe.hgetall(member)
    pipe.zscore(keys.SCORE, member)
    pipe.zscore(keys.TIME, member)
    pipe.zscore(keys.GOOD, member)
    pipe.smembers(up)
    pipe.pttl(up)
    pipe.smembers(down)
    pipe.pttl(down)
    clock, raw, score, posted, good, ups, up_ttl, downs, down_ttl = pipe.execute()
    if not raw:
        return None  # deleted since the scan: its leftovers are the audit's business
    server_ms = clock[0] * 1000 + clock[1] // 1000
    poster = raw.get(b"poster", b"").decode("utf-8", "replace")
    submitted_at = None
    if poster.startswith("user:") and poster[5:].isdigit() and int(poster[5:]) > 0:
        submitted_at = conn.zscore(keys.submitted(int(poster[5:])), member)

    def expiry(ttl: int) -> int | None:
        return server_ms + ttl if ttl >= 0 else None

    return {
        "type": "article",
        "id": article_id,
        "hash": {_x(k): _x(v) for k, v in sorted(raw.items())},
        "score": score,
        "time": posted,
        "good": good,
        "submitted": submitted_at,
        "up": sorted(_x(m) for m in ups),
        "up_expire_at_ms": expiry(up_ttl),
        "down": sorted(_x(m) for m in downs),
        "down_expire_at_ms": expiry(down_ttl),
        "groups": sorted(groups),
    }


def _x(value: bytes | str) -> str:
    """Bytes to str for JSON; bytes that are not UTF-8 survive as surrogate escapes."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


# --- branch `reliability`: what kind of Redis we run on -------------------------------


def store_topology() -> dict[str, object]:
    """The server's mode and role from INFO alone. Unlike store_status(), it touches no
    key, so it works on a Redis Cluster node too (where keyed commands answer MOVED or
    CLUSTERDOWN)."""
    info = get_connection().info()
    return {
        "cluster_enabled": bool(int(info.get("cluster_enabled", 0))),
        "role": info.get("role"),
        "redis_version": info.get("redis_version"),
    }
