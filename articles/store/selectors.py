"""Reads from the article store: a constant number of round trips a page, never one
per article (the reads of a page go out in one pipeline or one script call)."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import redis

from articles import conf, validation
from articles.errors import (
    ArticleNotFound,
    CommentIdempotencyKeyReused,
    CommentNotFound,
    EmptySearch,
    GroupNotFound,
    IdempotencyKeyReused,
    InvalidInput,
    StoreCorrupt,
)
from articles.store import clock, keys, scripts, search
from articles.store.connection import get_connection, store_unavailable
from articles.store.scripts import raise_for_status
from articles.types import (
    Article,
    BadArticle,
    Comment,
    CommentOrder,
    FrontPage,
    GoodPage,
    Group,
    GroupPage,
    ModlogEntry,
    ModlogPage,
    Order,
    Page,
    Period,
    SearchOrder,
    SearchPage,
    Status,
    ThreadPage,
    Vote,
    valid_time,
)

logger = logging.getLogger(__name__)


def article_post_replay(
    *,
    user_id: int,
    poster_name: str,
    idempotency_key: str,
    title: str,
    link: str,
    text: str,
    groups: Iterable[str],
) -> Article | None:
    """What an earlier post with this Idempotency-Key got (the article as it was created,
    even if deleted since), or None when there was none; one GET. Lets a retry be answered
    before the posting limit counts it. Raises InvalidInput, IdempotencyKeyReused (the key
    was used for a different request)."""
    title, link, text = validation.clean_post(title, link, text)
    names = validation.clean_group_names(list(groups))
    try:
        key = keys.idempotency(user_id, idempotency_key)
    except ValueError as exc:
        raise InvalidInput("idempotency_key", str(exc)) from None
    raw = get_connection().get(key)
    match = _IDEMPOTENT.fullmatch(raw) if isinstance(raw, bytes) else None
    if match is None:
        return None  # none, or kept before fingerprints: article_post answers it
    article_id, posted, fingerprint = match.groups()
    if fingerprint.decode() != validation.post_fingerprint(title, link, text, names):
        raise IdempotencyKeyReused(int(article_id))
    return Article.new_post(
        article_id=int(article_id),
        user_id=user_id,
        poster_name=poster_name,
        title=title,
        link=link,
        text=text,
        groups=tuple(names),
        posted=int(posted),
        window=conf.window(),
        vote_score=conf.vote_score(),
    )


# idempotency:<pk>:<key> as post.lua writes it: <article id>:<post time>:<fingerprint>
_IDEMPOTENT = re.compile(rb"([1-9][0-9]*):(-?[0-9]+):([0-9a-f]+)")


def article_get(*, article_id: int, user_id: int | None = None) -> Article:
    """One article (one round trip). Raises ArticleNotFound."""
    try:
        keys.article(article_id)
    except ValueError:
        raise ArticleNotFound() from None
    found = _fetch(get_connection(), [article_id], user_id, strict=True)
    if not found:
        raise ArticleNotFound()
    return found[0]


def article_list(
    *, order: Order = Order.SCORE, page: int | str = 1, user_id: int | None = None
) -> Page[Article]:
    """All articles by score or by time, 25 a page (two round trips). Raises InvalidInput."""
    number, start, stop = _bounds(page)
    pipe = get_connection().pipeline(transaction=False)
    pipe.zcard(order.key)
    pipe.zrevrange(order.key, start, stop)
    count, members = _execute(pipe)
    return _page(members, number, count, user_id)


def group_article_list(
    *, name: str, order: Order = Order.SCORE, page: int | str = 1, user_id: int | None = None
) -> GroupPage:
    """A group's articles by score or time, from the 60 s cached intersection (the book's
    get_group_articles), with the group's description and size read by the same script.
    Two round trips. Raises InvalidInput, GroupNotFound."""
    name = validation.clean_group_name(name)
    number, start, stop = _bounds(page)
    cache = keys.group_order(order.key, name)
    reply = scripts.RANKING_PAGE(
        keys=[cache, keys.group(name), order.key, cache, keys.GROUPS],
        args=["group", conf.group_cache_seconds(), start, stop, 0, name],
        client=get_connection(),
    )
    raise_for_status(reply)
    found = _page(reply[4::2], number, int(reply[1]), user_id)
    group = Group(name, _s(reply[2]), int(reply[3]))
    return GroupPage(found.items, found.number, found.count, found.per_page, group=group)


def top_article_list(
    *,
    period: Period = Period.ALL,
    page: int | str = 1,
    user_id: int | None = None,
    now: float | None = None,
) -> Page[Article]:
    """The articles with the most net votes (up minus down) posted in the last
    day/week/month/year, or of all time (`votes:`). Period rankings are cached for 60 s
    like group rankings. Two round trips. Raises InvalidInput."""
    number, start, stop = _bounds(page)
    if period.seconds is None:
        pipe = get_connection().pipeline(transaction=False)
        pipe.zcard(keys.VOTES)
        pipe.zrevrange(keys.VOTES, start, stop)
        count, members = _execute(pipe)
        return _page(members, number, count, user_id)
    earliest = clock.now(now) - period.seconds
    reply = scripts.RANKING_PAGE(
        keys=[
            keys.top(period.value),
            keys.TIME,
            keys.VOTES,
            keys.top_scratch(period.value),
            keys.GROUPS,
        ],
        args=["top", conf.group_cache_seconds(), start, stop, earliest, ""],
        client=get_connection(),
    )
    raise_for_status(reply)
    return _page(reply[4::2], number, int(reply[1]), user_id)


_SEARCH_ORDER = {SearchOrder.SCORE: "score", SearchOrder.NEWEST: "time", SearchOrder.VOTES: "votes"}


def article_search(
    *,
    q: str,
    order: SearchOrder = SearchOrder.SCORE,
    group: str | None = None,
    period: Period = Period.ALL,
    page: int | str = 1,
    user_id: int | None = None,
    now: float | None = None,
) -> SearchPage:
    """Articles holding every word of `q` and none of its `-words`, 25 a page, by score,
    newest or net votes, optionally in a group and posted in the last day/week/month/year.
    Two round trips: one script (which walks the ranking for a frequent word, or builds
    the cached intersection when it is not there) and one pipeline of the page's hashes.
    An unknown group finds nothing.
    Raises EmptySearch (nothing to look for), InvalidInput (q too long, too many words,
    a bad group name or page)."""
    if not isinstance(q, str):
        raise InvalidInput("q", "A search is text.")
    try:
        query = search.parse_query(q)
    except search.QueryError as exc:
        if exc.empty:
            raise EmptySearch(str(exc)) from None
        raise InvalidInput("q", str(exc)) from None
    name = validation.clean_group_name(group, "group") if group else ""
    number, start, stop = _bounds(page)
    earliest = "" if period.seconds is None else str(int(clock.now(now)) - period.seconds)
    # The slot's content names the period, not its start: like top:<period>, a cached
    # result's window is at most the cache's lifetime old.
    spelled = f"{order.value}|{name}|{period.value}|{query.canonical}"
    digest = hashlib.blake2b(spelled.encode(), digest_size=8).digest()
    slot = int.from_bytes(digest, "big") % conf.search_cache_slots()
    cache = keys.search_cache(slot)
    scratch = keys.search_scratch(slot)
    reply = scripts.SEARCH(
        keys=[
            cache,
            keys.search_cache_query(slot),
            scratch,
            keys.SCORE,
            keys.TIME,
            keys.group(name) if name else scratch,
            *map(keys.idx, query.include),
            *map(keys.idx, query.exclude),
        ],
        args=[
            spelled,
            conf.search_cache_seconds(),
            start,
            stop,
            _SEARCH_ORDER[order],
            len(query.include),
            earliest,
        ],
        client=get_connection(),
    )
    raise_for_status(reply)
    found = _page(reply[2:], number, int(reply[1]), user_id)
    return SearchPage(
        found.items,
        found.number,
        found.count,
        found.per_page,
        words=query.include,
        excluded=query.exclude,
    )


def good_article_page(
    *, page: int | str = 1, per_page: int | None = None, user_id: int | None = None
) -> GoodPage:
    """A page of the newest good articles (>= 200 up-votes): the listing holds the newest
    50 (ARTICLES_HOME_GOOD_ARTICLES), `per_page` of them a page (25 by default), and the
    page carries the UTC days of all 50. Two round trips. Raises InvalidInput."""
    number = validation.clean_page(page, conf.max_page())
    size = per_page or conf.per_page()
    conn = get_connection()
    # The good index is scored by post time: the newest 50 with their times, in one read.
    pipe = conn.pipeline(transaction=False)
    pipe.zrevrange(keys.GOOD, 0, conf.home_good() - 1, withscores=True)
    (newest,) = _execute(pipe)
    shown = newest[(number - 1) * size : number * size]
    return GoodPage(
        items=_fetch(conn, _ids(m for m, _ in shown), user_id),
        number=number,
        count=len(newest),
        per_page=size,
        days=_days(newest),
    )


def _days(newest: list[tuple[bytes, float]]) -> tuple[date, ...]:
    """The UTC days of the good articles listed (newest first), for links to each day.
    A time no date can hold (an inf written by other code) names no day; its article is
    skipped by _fetch when its hash says the same."""
    times = [t for _, t in newest if valid_time(t)]
    return tuple(sorted({datetime.fromtimestamp(t, tz=UTC).date() for t in times}, reverse=True))


def front_page(*, page: int | str = 1, user_id: int | None = None) -> FrontPage:
    """The home page: a page of the newest good articles (as good_article_page), then the
    same page of the score ranking ("rising"), less the articles already shown above it.
    `count` is the longer of the two listings. Two round trips. Raises InvalidInput."""
    number, start, stop = _bounds(page)
    size = conf.per_page()
    conn = get_connection()
    pipe = conn.pipeline(transaction=False)
    pipe.zrevrange(keys.GOOD, 0, conf.home_good() - 1, withscores=True)
    pipe.zcard(keys.SCORE)
    pipe.zrevrange(keys.SCORE, start, stop)
    newest, ranked, rising = _execute(pipe)
    good_ids = _ids(m for m, _ in newest[start : start + size])
    shown = set(good_ids)
    rising_ids = [i for i in _ids(rising) if i not in shown]
    found = {a.id: a for a in _fetch(conn, good_ids + rising_ids, user_id)}
    return FrontPage(
        items=[found[i] for i in good_ids if i in found],
        number=number,
        count=max(len(newest), int(ranked)),
        per_page=size,
        days=_days(newest),
        rising=tuple(found[i] for i in rising_ids if i in found),
        good_count=len(newest),
    )


def good_article_day(
    *, day: date, page: int | str = 1, user_id: int | None = None
) -> Page[Article]:
    """The good articles posted on one UTC day, newest first. Two round trips."""
    number, start, _ = _bounds(page)
    first = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
    last = f"({first + 86_400}"
    pipe = get_connection().pipeline(transaction=False)
    pipe.zcount(keys.GOOD, first, last)
    pipe.zrevrangebyscore(keys.GOOD, last, first, start=start, num=conf.per_page())
    count, members = _execute(pipe)
    return _page(members, number, count, user_id)


def user_article_list(
    *, poster_id: int, page: int | str = 1, user_id: int | None = None
) -> Page[Article]:
    """A user's submissions, newest first. Two round trips."""
    number, start, stop = _bounds(page)
    key = keys.submitted(poster_id)
    pipe = get_connection().pipeline(transaction=False)
    pipe.zcard(key)
    pipe.zrevrange(key, start, stop)
    count, members = _execute(pipe)
    return _page(members, number, count, user_id)


def user_karma(*, user_id: int) -> int:
    """Net votes (up - down) on the user's articles that still exist. One round trip."""
    reply = scripts.USER_KARMA(
        keys=[keys.submitted(user_id), keys.VOTES], args=[], client=get_connection()
    )
    scripts.raise_for_status(reply)
    return int(reply[1])


def group_list() -> list[Group]:
    """Every registered group with its description and size, by name. Two round trips."""
    conn = get_connection()
    pipe = conn.pipeline(transaction=False)
    pipe.hgetall(keys.GROUPS)
    (registry,) = _execute(pipe)
    registry = {_s(k): _s(v) for k, v in registry.items()}
    names = sorted(n for n in registry if keys.GROUP_NAME.fullmatch(n))
    pipe = conn.pipeline(transaction=False)
    for name in names:
        pipe.scard(keys.group(name))
    sizes = _execute(pipe) if names else []
    return [Group(n, registry[n], int(s)) for n, s in zip(names, sizes, strict=True)]


def group_get(*, name: str) -> Group:
    """One group. Raises InvalidInput, GroupNotFound."""
    name = validation.clean_group_name(name)
    pipe = get_connection().pipeline(transaction=False)
    pipe.hget(keys.GROUPS, name)
    pipe.scard(keys.group(name))
    description, size = _execute(pipe)
    if description is None and not size:
        raise GroupNotFound()
    return Group(name, _s(description or b""), int(size))


def modlog_page(*, page: int | str = 1, per_page: int = 50) -> ModlogPage:
    """Staff actions, newest first, 50 a page, with which of their articles, groups and
    comments still exist. Two round trips (the entries, then their targets). Raises
    InvalidInput."""
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    pipe = get_connection().pipeline(transaction=False)
    pipe.llen(keys.MODLOG)
    pipe.lrange(keys.MODLOG, start, start + per_page - 1)
    count, raw = _execute(pipe)
    entries = [entry for entry in map(_modlog_entry, raw) if entry is not None]
    if len(entries) < len(raw):
        logger.warning("modlog: skipped %d malformed entries", len(raw) - len(entries))
    members, comments, names = _modlog_targets(entries)
    live_members: set[str] = set()
    live_names: set[str] = set()
    live_comments: dict[str, int | None] = {}
    if members or comments or names:
        pipe = get_connection().pipeline(transaction=False)
        for member in [*members, *comments]:
            pipe.exists(member)
        if names:
            pipe.hmget(keys.GROUPS, names)
        replies = _execute(pipe)
        live_members = {m for m, found in zip(members, replies, strict=False) if found}
        found_comments = replies[len(members) : len(members) + len(comments)]
        live_comments = {
            c: article
            for (c, article), found in zip(comments.items(), found_comments, strict=True)
            if found
        }
        if names:
            live_names = {n for n, d in zip(names, replies[-1], strict=True) if d is not None}
    return ModlogPage(
        items=entries,
        number=number,
        count=int(count),
        per_page=per_page,
        articles=frozenset(live_members),
        groups=frozenset(live_names),
        comments=live_comments,
    )


def _modlog_targets(
    entries: list[ModlogEntry],
) -> tuple[list[str], dict[str, int | None], list[str]]:
    """The article members, comment members (each with the id of the article its entry
    names, if any) and group names a page of log entries names, each once."""
    members: dict[str, None] = {}
    comments: dict[str, int | None] = {}
    names: dict[str, None] = {}
    for entry in entries:
        if keys.article_id_or_none(entry.target) is not None:
            members[entry.target] = None
        elif keys.comment_id_or_none(entry.target) is not None:
            article = entry.details.get("article")
            found = keys.article_id_or_none(article) if isinstance(article, str) else None
            comments[entry.target] = comments.get(entry.target) or found
        elif entry.target.startswith("group:"):
            names[entry.target.removeprefix("group:")] = None
        for side in ("add", "remove"):
            listed = entry.details.get(side)
            for name in listed if isinstance(listed, list) else ():
                names[name] = None
    valid = [n for n in names if isinstance(n, str) and _is_group_name(n)]
    return list(members), comments, valid


def _modlog_entry(item: bytes) -> ModlogEntry | None:
    """One entry of ours, or None for anything else (written by hand or by other code)."""
    try:
        data = json.loads(item)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    when, details = data.get("time", 0), data.get("details") or {}
    if isinstance(when, bool) or not isinstance(when, int | float) or not valid_time(when):
        return None
    if not isinstance(details, dict):
        return None
    fields = {name: data.get(name, "") for name in ("actor", "action", "target", "reason")}
    if not all(isinstance(value, str) for value in fields.values()):
        return None
    return ModlogEntry(time=float(when), details=details, **fields)


def stats_daily(*, days: int = 30, now: float | None = None) -> list[tuple[date, int, int]]:
    """(day, articles posted, votes cast) for each of the last `days` UTC days, oldest first."""
    today = datetime.fromtimestamp(clock.now(now), tz=UTC).date()
    span = [today - timedelta(days=n) for n in range(days - 1, -1, -1)]
    fields = [d.isoformat() for d in span]
    pipe = get_connection().pipeline(transaction=False)
    pipe.hmget(keys.STATS_POSTS, fields)
    pipe.hmget(keys.STATS_VOTES, fields)
    posts, votes = _execute(pipe)
    return [
        (d, _count(keys.STATS_POSTS, d, p), _count(keys.STATS_VOTES, d, v))
        for d, p, v in zip(span, posts, votes, strict=True)
    ]


def _count(key: str, day: date, value: bytes | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        raise StoreCorrupt(key, f"{day} is {value!r}, not a count") from None


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
        "maxmemory": info.get("maxmemory"),
        "articles": _article_count(conn),
    }


def _article_count(conn: redis.Redis) -> int | None:
    """The size of time:, or None when it is not a sorted set (check_votes says why):
    bad data is no reason for /healthz to call Redis unreachable."""
    try:
        return int(conn.zcard(keys.TIME))
    except redis.ResponseError as exc:
        if store_unavailable(exc):
            raise
        return None


# --- the invariant audit (check_votes) ----------------------------------------------


# --- helpers -----------------------------------------------------------------------


def _bounds(page: int | str) -> tuple[int, int, int]:
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * conf.per_page()
    return number, start, start + conf.per_page() - 1


def _page(members: Iterable[bytes], number: int, count: int, user_id: int | None) -> Page[Article]:
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


def _fetch(
    conn: redis.Redis, ids: list[int], user_id: int | None, *, strict: bool = False
) -> list[Article]:
    """Hashes and the caller's votes of `ids`, in one script call (article_rows.lua) that is
    given every key: one command and one flat reply, where a pipeline of three commands an
    article spent a fifth of a logged-in page's time packing and parsing them.

    The score is computed from the hash (time + 432 x net votes), which is what `score:`
    holds while the invariants do (check_votes audits it): reading it again per article
    would cost a third of a page's client time for no new information.

    An article whose keys hold bad data (a hash that is not a hash, a count or time that
    is not a number, a voter set of the wrong type) is left out and logged once for the
    call, so one bad article never takes a listing down; `strict` (one article's own
    page) raises StoreCorrupt naming it instead.
    """
    if not ids:
        return []
    user = keys.user(user_id) if user_id else None
    names = [keys.article(article_id) for article_id in ids]
    if user:
        names += [keys.voted(article_id) for article_id in ids]
        names += [keys.voted_down(article_id) for article_id in ids]
    reply = scripts.ARTICLE_ROWS(keys=names, args=[user or ""], client=conn)
    raise_for_status(reply)
    window, vote_score = conf.window(), conf.vote_score()
    articles, skipped = [], []
    at, count = 1, len(ids)
    for i, article_id in enumerate(ids):
        size = reply[at]
        flat = reply[at + 1 : at + 1 + size] if isinstance(size, int) else None
        at += 1 + (size if isinstance(size, int) else 0)
        mine = reply[at : at + 2] if user else []
        at += len(mine)
        try:
            # A type's name in place of a count or flag: that key is of the wrong type.
            for key, value in zip(names[i::count], [size, *mine], strict=True):
                if not isinstance(value, int):
                    raise StoreCorrupt(key, f"is a {_s(value)}, which this read cannot use")
            if not flat:
                continue  # deleted between the two round trips
            my_vote = None
            if user:
                up, down = mine
                my_vote = Vote.UP if up else Vote.DOWN if down else Vote.NONE
            articles.append(
                Article.from_hash(
                    article_id,
                    dict(zip(flat[::2], flat[1::2], strict=True)),
                    score=None,
                    window=window,
                    vote_score=vote_score,
                    my_vote=my_vote,
                )
            )
        except BadArticle as exc:
            if strict:
                raise StoreCorrupt(keys.article(article_id), str(exc)) from None
            skipped.append(f"{keys.article(article_id)} ({exc})")
        except StoreCorrupt as exc:
            if strict:
                raise
            skipped.append(exc.message)
    if skipped:
        logger.warning("Left out of a listing for bad data: %s", "; ".join(skipped))
    return articles


def _execute(pipe: redis.client.Pipeline) -> list[Any]:
    """Run a pipeline of reads. A reply refused for the wrong type raises StoreCorrupt
    naming the key (a 503 that says where, not a 500); an outage raises as itself."""
    commands = [args for args, _ in pipe.command_stack]
    replies = pipe.execute(raise_on_error=False)
    for args, reply in zip(commands, replies, strict=True):
        if isinstance(reply, redis.ResponseError):
            raise _read_error(_s(args[1]), reply)
    return replies


def _read_error(key: str, error: redis.ResponseError) -> Exception:
    """StoreCorrupt for a key of the wrong type; any other error as it came."""
    if store_unavailable(error) or "WRONGTYPE" not in str(error):
        return error
    try:
        kind = _s(get_connection().type(key))
    except redis.RedisError:
        kind = "key of another type"
    return StoreCorrupt(key, f"is a {kind}, which this read cannot use")


def _s(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


# --- comments (issue 12) -------------------------------------------------------------


def comment_thread(
    *,
    article_id: int,
    order: CommentOrder = CommentOrder.BEST,
    page: int | str = 1,
    user_id: int | None = None,
    focus_id: int | None = None,
    now: float | None = None,
) -> ThreadPage:
    """A page of an article's comments, in ONE script call whatever the thread's size:
    the article, ARTICLES_COMMENTS_PER_PAGE top-level comments (with `focus_id`, that
    comment and a page of its replies: a permalink, "continue this thread") in `order`,
    each followed depth-first by its replies in the same order, down to
    ARTICLES_COMMENT_DISPLAY_DEPTH levels and at most ARTICLES_COMMENT_PAGE_ROWS reply
    rows; a comment with replies left out has `more`. With `user_id`, the viewer's vote
    on the article and each comment. Raises InvalidInput (page), ArticleNotFound,
    CommentNotFound (a focus not on this article)."""
    number = validation.clean_page(page, conf.max_page())
    size = conf.comments_per_page()
    start = (number - 1) * size
    try:
        article_key = keys.article(article_id)
    except ValueError:
        raise ArticleNotFound() from None
    new = order is CommentOrder.NEW
    if focus_id is not None:
        try:
            focus_key = keys.comment(focus_id)
        except ValueError:
            raise CommentNotFound() from None
        root = keys.replies_new(focus_id) if new else keys.replies(focus_id)
    else:
        focus_key = article_key
        root = keys.article_comments_new(article_id) if new else keys.article_comments(article_id)
    viewer = keys.user(user_id) if user_id else ""
    reply = scripts.COMMENT_THREAD(
        keys=[
            article_key,
            root,
            keys.voted(article_id),
            keys.voted_down(article_id),
            focus_key,
        ],
        args=[
            order.value,
            start,
            start + size - 1,
            conf.comment_display_depth(),
            conf.comment_page_rows(),
            viewer,
        ],
        client=get_connection(),
    )
    status = raise_for_status(reply, allow=(Status.NOT_FOUND, Status.COMMENT_NOT_FOUND))
    if status is Status.NOT_FOUND:
        raise ArticleNotFound()
    if status is Status.COMMENT_NOT_FOUND:
        raise CommentNotFound()
    count = int(reply[1])
    n = int(reply[2])
    flat = reply[3 : 3 + n]
    at = 3 + n
    up, down = reply[at : at + 2]
    at += 2
    try:
        article = Article.from_hash(
            article_id,
            dict(zip(flat[::2], flat[1::2], strict=True)),
            score=None,
            window=conf.window(),
            vote_score=conf.vote_score(),
            my_vote=_my_vote(viewer, up, down),
        )
    except BadArticle as exc:
        raise StoreCorrupt(article_key, str(exc)) from None
    items: list[Comment] = []
    skipped: list[str] = []
    while at < len(reply):
        cid, more, n = int(reply[at]), int(reply[at + 1]), int(reply[at + 2])
        flat = reply[at + 3 : at + 3 + n]
        up, down = reply[at + 3 + n : at + 5 + n]
        at += 5 + n
        _add_comment(items, skipped, cid, flat, _my_vote(viewer, up, down), more=bool(more))
    if skipped:
        logger.warning("Left out of a thread for bad data: %s", "; ".join(skipped))
    focus = None
    if focus_id is not None:
        if not items or items[0].id != focus_id:
            raise CommentNotFound()
        focus, items = items[0], items[1:]
    moment = clock.now(now)
    return ThreadPage(
        items=items,
        number=number,
        count=count,
        per_page=size,
        article=article,
        order=order,
        focus=focus,
        voting_open=article.voting_open(moment),
        commenting_open=moment < article.time + conf.comment_open_seconds(),
    )


def comment_get(*, comment_id: int, user_id: int | None = None) -> Comment:
    """One comment, with its article's title and the viewer's vote (one round trip).
    Raises CommentNotFound."""
    try:
        member = keys.comment(comment_id)
    except ValueError:
        raise CommentNotFound() from None
    found = _comment_rows(member, "one", 0, 0, user_id)
    if not found.items:
        raise CommentNotFound()
    return found.items[0]


def comment_post_replay(
    *,
    article_id: int,
    user_id: int,
    idempotency_key: str,
    text: str,
    parent_id: int | None = None,
    author_name: str | None = None,
) -> Comment | None:
    """What an earlier comment_post with this Idempotency-Key made, as it was created
    (even if deleted since), or None when there was none; one GET, so a retry can be
    answered before the rate limit counts it. Raises InvalidInput,
    CommentIdempotencyKeyReused (the key was used for a different request). Without
    `author_name` the comment is read as it is now instead (CommentNotFound if deleted
    since)."""
    text = validation.clean_comment_text(text)
    try:
        key = keys.comment_idempotency(user_id, idempotency_key)
    except ValueError as exc:
        raise InvalidInput("idempotency_key", str(exc)) from None
    raw = get_connection().get(key)
    match = _COMMENT_IDEMPOTENT.fullmatch(raw) if isinstance(raw, bytes) else None
    if match is None:
        return None
    comment_id, posted, depth, fingerprint = match.groups()
    if fingerprint.decode() != validation.comment_fingerprint(article_id, parent_id, text):
        raise CommentIdempotencyKeyReused(int(comment_id))
    if author_name is None:
        return comment_get(comment_id=int(comment_id), user_id=user_id)
    return Comment.new_post(
        comment_id=int(comment_id),
        article_id=article_id,
        parent_id=parent_id,
        user_id=user_id,
        author_name=author_name,
        text=text,
        posted=float(posted),
        depth=int(depth),
    )


# comment_idempotency:<pk>:<key> as comment_post.lua writes it: <id>:<time>:<depth>:<fingerprint>
_COMMENT_IDEMPOTENT = re.compile(rb"([1-9][0-9]*):([0-9]+):([0-9]+):([0-9a-f]+)")


def recent_comments(
    *, page: int | str = 1, per_page: int = 25, user_id: int | None = None
) -> Page[Comment]:
    """The site's newest visible comments, with their articles' titles (one round trip).
    Raises InvalidInput (page)."""
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    found = _comment_rows(keys.COMMENTS, "list", start, start + per_page - 1, user_id)
    return Page(found.items, number, found.count, per_page)


def user_comments(*, user_id: int, page: int | str = 1, per_page: int = 25) -> Page[Comment]:
    """A user's visible comments, newest first, with their articles' titles (one round
    trip). Raises InvalidInput (page)."""
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    found = _comment_rows(keys.user_comments(user_id), "list", start, start + per_page - 1, None)
    return Page(found.items, number, found.count, per_page)


def article_comments_feed(*, article_id: int, limit: int = 50) -> list[Comment]:
    """The newest visible comments of an article, of every depth, for its feed (one
    round trip)."""
    try:
        key = keys.article_comments_all(article_id)
    except ValueError:
        raise ArticleNotFound() from None
    return _comment_rows(key, "visible", 0, max(1, limit), None).items


def _comment_rows(key: str, mode: str, start: int, stop: int, user_id: int | None) -> Page[Comment]:
    viewer = keys.user(user_id) if user_id else ""
    reply = scripts.COMMENT_ROWS(
        keys=[key], args=[mode, start, stop, viewer], client=get_connection()
    )
    if raise_for_status(reply, allow=(Status.COMMENT_NOT_FOUND,)) is not Status.OK:
        return Page([], 1, 0, 1)
    items: list[Comment] = []
    skipped: list[str] = []
    at = 2
    while at < len(reply):
        cid, n = int(reply[at]), int(reply[at + 1])
        flat = reply[at + 2 : at + 2 + n]
        title, up, down = reply[at + 2 + n : at + 5 + n]
        at += 5 + n
        vote = _my_vote(viewer, up, down)
        _add_comment(items, skipped, cid, flat, vote, article_title=_s(title))
    if skipped:
        logger.warning("Left out of a comment listing for bad data: %s", "; ".join(skipped))
    return Page(items, 1, int(reply[1]), max(1, stop - start + 1))


def _add_comment(
    items: list[Comment],
    skipped: list[str],
    cid: int,
    flat: list[Any],
    my_vote: Vote | None,
    **extra: Any,
) -> None:
    """Decode one comment of a script's flat reply (field, value, ...) onto `items`, or
    name it in `skipped` when its data is bad (the caller logs them once)."""
    try:
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        items.append(Comment.from_hash(cid, fields, my_vote=my_vote, **extra))
    except BadArticle as exc:
        skipped.append(f"{keys.comment(cid)} ({exc})")


def _my_vote(viewer: str, up: object, down: object) -> Vote | None:
    if not viewer:
        return None
    return Vote.UP if up else Vote.DOWN if down else Vote.NONE


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


def store_health() -> dict[str, object]:
    """/healthz's view of Redis: reachable, persistence and role for anyone; the figures
    of store_status() under "details". Never raises for an unreachable or refusing Redis,
    and keeps the error's text (which names the host and port) out of the answer."""
    conn = get_connection()
    try:
        status = store_status()
        info = conn.info("replication")
    except redis.RedisError:
        return {"reachable": False}
    try:
        saves = bool(conn.config_get("save").get("save"))
    except redis.RedisError:
        saves = None  # CONFIG renamed or refused (managed Redis): unknown
    aof = bool(status["aof_enabled"])
    persistence = "+".join(kind for kind, on in (("aof", aof), ("rdb", saves)) if on) or (
        "none" if saves is not None else "unknown"
    )
    role = {"master": "primary", "slave": "replica"}.get(str(info.get("role")), "unknown")
    # At maxmemory (with noeviction, the store's policy) Redis refuses writes, reads work.
    limit, used = int(status["maxmemory"] or 0), int(status["used_memory"] or 0)  # type: ignore[call-overload]
    return {
        "reachable": True,
        "role": role,
        "persistence": persistence,
        "aof_enabled": aof,
        "full": bool(limit) and used >= limit,
        "details": status,
    }


def _is_group_name(name: str) -> bool:
    try:
        keys.group_name(name)
    except ValueError:
        return False
    return True
