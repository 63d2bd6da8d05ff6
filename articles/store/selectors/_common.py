"""What the selectors share: paging bounds, fetching article rows in one round trip, read errors.

A listing decodes 25-38 article hashes (~7 us each): _fetch keeps what it decoded in the
content cache "article_hashes", keyed by all an Article is made of (its id, its hash's
fields and values as the script returned them, the viewer's vote, the voting window and
vote score), so never stale: a changed hash is a new key. Bounded by MAX_DECODED entries
and MAX_DECODED_BYTES of hash data (its bytes, twice: raw and decoded).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime
from typing import Any

import redis

from articles import conf, validation
from articles.caches import Cache, Kind
from articles.errors import (
    StoreCorrupt,
)
from articles.store import keys, ratelimits, replicas, scripts
from articles.store.connection import (
    get_connection,
    is_wrong_type,
    out_of_memory,
    store_unavailable,
)
from articles.store.scripts import raise_for_status
from articles.store.selectors.archived import archived_articles
from articles.types import (
    Article,
    BadArticle,
    Page,
    Vote,
    valid_time,
)

logger = logging.getLogger("articles.store.selectors")  # the package's one logger

# A listing decodes 25-38 article hashes (~7 us each): _fetch keeps what it decoded, in
# the content cache "article_hashes", keyed by all an Article is made of (its id, its
# hash's fields and values as the script returned them, the viewer's vote, the voting
# window and vote score), so never stale: a changed hash is a new key. Bounded by
# MAX_DECODED entries and MAX_DECODED_BYTES of hash data (its bytes, twice: raw and decoded).
MAX_DECODED = 4096
MAX_DECODED_BYTES = 16 * 1024 * 1024
_decoded: Cache[tuple[Any, ...], Article] = Cache(
    "article_hashes", Kind.CONTENT, entries=MAX_DECODED, max_bytes=MAX_DECODED_BYTES
)


def _days(newest: list[tuple[bytes, float]]) -> tuple[date, ...]:
    """The UTC days of the good articles listed (newest first), for links to each day.
    A time no date can hold (an inf written by other code) names no day; its article is
    skipped by _fetch when its hash says the same."""
    times = [t for _, t in newest if valid_time(t)]
    return tuple(sorted({datetime.fromtimestamp(t, tz=UTC).date() for t in times}, reverse=True))


def _count(key: str, day: date, value: bytes | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        raise StoreCorrupt(key, f"{day} is {value!r}, not a count") from None


def _bounds(page: int | str) -> tuple[int, int, int]:
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * conf.per_page()
    return number, start, start + conf.per_page() - 1


def _page(members: Iterable[bytes], number: int, count: int, user_id: int | None) -> Page[Article]:
    items = _fetch(replicas.connection(), keys.article_ids(members), user_id)
    return Page(items=items, number=number, count=int(count), per_page=conf.per_page())


def _ranked(key: str, page: int | str, user_id: int | None) -> Page[Article]:
    """A page of a ranking zset (score:, time:, votes:, submitted:<pk>), highest first.
    A logged-in reader's page leaves out the articles they hid, in the same first round
    trip (listing_page.lua); an anonymous one is ZCARD + ZREVRANGE. Two round trips."""
    number, start, stop = _bounds(page)
    pipe = replicas.connection().pipeline(transaction=False)
    _ranked_queue(pipe, key, start, stop, user_id)
    count, members = _ranked_read(iter(_execute(pipe)), user_id)
    return _page(members, number, count, user_id)


def _ranked_queue(
    pipe: redis.client.Pipeline, key: str, start: int, stop: int, user_id: int | None
) -> None:
    """_ranked's first round trip queued on `pipe` (with other reads of the same page);
    _ranked_read takes its replies."""
    if user_id:
        scripts.queue(pipe, scripts.LISTING_PAGE, [key, keys.hidden(user_id)], [start, stop])
    else:
        pipe.zcard(key)
        pipe.zrevrange(key, start, stop)


def _ranked_read(replies: Iterator[Any], user_id: int | None) -> tuple[int, list[bytes]]:
    """(count, members) from the replies _ranked_queue's commands got, taken from `replies`."""
    if user_id:
        reply = next(replies)
        raise_for_status(reply)
        return int(reply[1]), reply[2::2]
    return int(next(replies)), next(replies)


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
    reply = _rows(conn, names, user or "")
    window, vote_score = conf.window(), conf.vote_score()
    articles: dict[int, Article] = {}
    skipped, missing = [], []
    at, count = 2 + int(reply[1]), len(ids)
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
                    raise StoreCorrupt(key, f"is a {keys.text(value)}, which this read cannot use")
            if not flat:
                missing.append(article_id)  # archived, or deleted since the ranking's read
                continue
            my_vote = None
            if user:
                up, down = mine
                my_vote = Vote.UP if up else Vote.DOWN if down else Vote.NONE
            articles[article_id] = _decode(article_id, flat, my_vote, window, vote_score)
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
    if missing:
        articles.update(archived_articles(missing, user_id))  # one query for the page
    return [articles[i] for i in ids if i in articles]


def _rows(conn: redis.Redis, names: list[str], viewer: str) -> list[Any]:
    """article_rows.lua's reply for `names`, counting the rate-limit windows riding on this
    read (ratelimits.ride: an API listing's) when it runs on the primary, where a count can
    be written. Raises RateLimited past a limit. A full Redis takes no count: the read goes
    on uncounted, as ratelimits.check() lets a read."""
    riding = ratelimits.ride() if conn is get_connection() else None
    if riding is None:
        reply = scripts.ARTICLE_ROWS(keys=names, args=[viewer], client=conn)
        raise_for_status(reply)
        return list(reply)
    request, limits = riding
    try:
        reply = scripts.ARTICLE_ROWS(
            keys=[*names, *limits.keys], args=[viewer, len(limits.keys), *limits.args], client=conn
        )
    except redis.ResponseError as exc:
        if not out_of_memory(exc):
            raise
        return _rows(conn, names, viewer)  # the windows taken: uncounted
    raise_for_status(reply)
    ratelimits.counted(request, limits, reply[2 : 2 + len(limits.keys)])
    return list(reply)


def _decode(
    article_id: int, flat: list[bytes], my_vote: Vote | None, window: int, vote_score: int
) -> Article:
    """Article.from_hash of a hash's flat reply, from "article_hashes" when the same
    values were decoded before (a hash that cannot be decoded is not kept: it raises)."""
    key = (article_id, my_vote, window, vote_score, *flat)
    article = _decoded.get(key)
    if article is None:
        article = Article.from_hash(
            article_id,
            dict(zip(flat[::2], flat[1::2], strict=True)),
            score=None,
            window=window,
            vote_score=vote_score,
            my_vote=my_vote,
        )
        _decoded.put(key, article, size=2 * sum(map(len, flat)))
    return article


def _execute(pipe: redis.client.Pipeline) -> list[Any]:
    """Run a pipeline of reads and queued scripts (scripts.queue, run_queued). A reply
    refused for the wrong type raises StoreCorrupt naming the key (a 503 that says where,
    not a 500); an outage raises as itself."""
    commands = [args for args, _ in pipe.command_stack]
    replies = scripts.run_queued(pipe)
    for args, reply in zip(commands, replies, strict=True):
        if isinstance(reply, redis.ResponseError):
            raise _read_error(keys.text(args[3] if args[0] == "EVALSHA" else args[1]), reply)
    return replies


def _read_error(key: str, error: redis.ResponseError) -> Exception:
    """StoreCorrupt for a key of the wrong type; any other error as it came."""
    if store_unavailable(error) or not is_wrong_type(error):
        return error
    try:
        kind = keys.text(replicas.connection().type(key))
    except redis.RedisError:
        kind = "key of another type"
    return StoreCorrupt(key, f"is a {kind}, which this read cannot use")
