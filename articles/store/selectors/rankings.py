"""Rankings of a period: top of the day, week, month, year; good articles; the front page.

The top of a period is kept by the writes, not rebuilt by the reads. For each period p
(keys.PERIODS), votes:<p> holds article:<id> -> net votes (the votes: score) of the
articles after the period's frontier in time: (votes:periods, field p). post.lua adds the
new article to each period, vote.lua and votes_withdraw.lua set its net votes there when
it is after the frontier, delete.lua removes it: each in its own script, so each write
stays one atomic step. Articles age out by trimming: a trim walks time: from the frontier
(ZRANK or ZCOUNT, then ZRANGE of at most `limit` by index), removes those posted before
now - period and moves the frontier past them. post.lua trims 4 a period (on average as
many age out per post as are posted), a read up to TRIM_BATCH; a read that still finds
aged-out articles after its trim answers "again", so each call is bounded and the page
it finally gives is exact. Votes are cast only in the first week, so no period but the
day and the week sees scores change after posting: nothing else needs maintaining.

A read is then O(log n + page) whatever the period holds. A store written before this
(or only by the book's code) has no frontier: its reads rebuild as before (ZRANGESTORE
and ZINTERSTORE, cached 60 s) until operations.top_audit.top_repair() has backfilled it
in bounded steps; a store with no article yet is kept from its first post on.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime
from typing import Any

import redis

from articles import conf, validation
from articles.store import keys, replicas, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.selectors._common import _bounds, _days, _execute, _fetch, _page, _ranked
from articles.types import (
    Article,
    FrontPage,
    GoodPage,
    Page,
    Period,
    Status,
)

logger = logging.getLogger("articles.store.selectors")  # the package's one logger


@replicas.reads
def top_article_list(
    *,
    period: Period = Period.ALL,
    page: int | str = 1,
    user_id: int | None = None,
    now: float | None = None,
) -> Page[Article]:
    """The articles with the most net votes (up minus down) posted in the last
    day/week/month/year, or of all time (`votes:`), less those the reader `user_id` hid.
    Period rankings are cached for 60 s like group rankings. Two round trips. Raises
    InvalidInput."""
    if period.seconds is None:
        return _ranked(keys.VOTES, page, user_id)
    number, start, stop = _bounds(page)
    reply = top_page(period.value, start, stop, now=now, user_id=user_id)
    return _page(reply[2::2], number, int(reply[1]), user_id)


# Aged-out articles a read trims per call: ~1-2 ms of Redis at most (bench/rankings.py).
TRIM_BATCH = 500


def top_page(
    period: str,
    start: int,
    stop: int,
    *,
    now: float | None = None,
    client: redis.Redis | None = None,
    user_id: int | None = None,
) -> list[Any]:
    """top_page.lua's reply {OK, count, member, score, ...} for ranks start..stop of a
    period, calling again while aged-out articles remain to trim (each call bounded),
    less the articles the reader `user_id` hid.
    `client`: another than the site's (the benchmark's, which waits out the former rebuild)."""
    conn = client or get_connection()
    call_keys = [
        keys.top(period),
        keys.TIME,
        keys.VOTES,
        keys.top_scratch(period),
        keys.period_votes(period),
        keys.PERIOD_STATE,
        *([keys.hidden(user_id)] if user_id else []),
    ]
    args = [period, conf.group_cache_seconds(), start, stop, "" if now is None else now, TRIM_BATCH]
    while True:
        reply = scripts.TOP_PAGE(keys=call_keys, args=args, client=conn)
        if raise_for_status(reply, allow=[Status.RETRY]) is Status.OK:
            return list(reply)


def _scored(flat: list[Any]) -> list[tuple[bytes, float]]:
    """A script's flat {member, score, ...} as ZREVRANGE WITHSCORES gives them."""
    return [(m, float(t)) for m, t in zip(flat[::2], flat[1::2], strict=True)]


@replicas.reads
def good_article_page(
    *, page: int | str = 1, per_page: int | None = None, user_id: int | None = None
) -> GoodPage:
    """A page of the newest good articles (>= 200 up-votes): the listing holds the newest
    50 (ARTICLES_HOME_GOOD_ARTICLES; a logged-in reader's hidden ones left out), `per_page`
    of them a page (25 by default), and the page carries the UTC days of all 50. Two
    round trips. Raises InvalidInput."""
    number = validation.clean_page(page, conf.max_page())
    size = per_page or conf.per_page()
    conn = replicas.connection()
    # The good index is scored by post time: the newest 50 with their times, in one read
    # (for a logged-in reader, the newest 50 they have not hidden).
    if user_id:
        reply = scripts.LISTING_PAGE(
            keys=[keys.GOOD, keys.hidden(user_id)], args=[0, conf.home_good() - 1], client=conn
        )
        raise_for_status(reply)
        newest = _scored(reply[2:])
    else:
        pipe = conn.pipeline(transaction=False)
        pipe.zrevrange(keys.GOOD, 0, conf.home_good() - 1, withscores=True)
        (newest,) = _execute(pipe)
    shown = newest[(number - 1) * size : number * size]
    return GoodPage(
        items=_fetch(conn, keys.article_ids(m for m, _ in shown), user_id),
        number=number,
        count=len(newest),
        per_page=size,
        days=_days(newest),
    )


@replicas.reads
def front_page(*, page: int | str = 1, user_id: int | None = None) -> FrontPage:
    """The home page: a page of the newest good articles (as good_article_page), then the
    same page of the score ranking ("rising"), less the articles already shown above it.
    `count` is the longer of the two listings. A logged-in reader's articles hidden are
    left out of both (listing_page.lua reads both in the first round trip). Two
    round trips. Raises InvalidInput."""
    number, start, stop = _bounds(page)
    size = conf.per_page()
    conn = replicas.connection()
    if user_id:
        listed = scripts.LISTING_PAGE(
            keys=[keys.SCORE, keys.hidden(user_id), keys.GOOD],
            args=[start, stop, conf.home_good()],
            client=conn,
        )
        raise_for_status(listed)
        newest = _scored(listed[2])
        ranked, rising = listed[1], listed[3::2]
    else:
        pipe = conn.pipeline(transaction=False)
        pipe.zrevrange(keys.GOOD, 0, conf.home_good() - 1, withscores=True)
        pipe.zcard(keys.SCORE)
        pipe.zrevrange(keys.SCORE, start, stop)
        newest, ranked, rising = _execute(pipe)
    good_ids = keys.article_ids(m for m, _ in newest[start : start + size])
    shown = set(good_ids)
    rising_ids = [i for i in keys.article_ids(rising) if i not in shown]
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


@replicas.reads
def good_article_day(
    *, day: date, page: int | str = 1, user_id: int | None = None
) -> Page[Article]:
    """The good articles posted on one UTC day, newest first. Two round trips."""
    number, start, _ = _bounds(page)
    first = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
    last = f"({first + 86_400}"
    pipe = replicas.connection().pipeline(transaction=False)
    pipe.zcount(keys.GOOD, first, last)
    pipe.zrevrangebyscore(keys.GOOD, last, first, start=start, num=conf.per_page())
    count, members = _execute(pipe)
    return _page(members, number, count, user_id)
