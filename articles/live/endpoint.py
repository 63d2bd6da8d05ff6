"""GET live/ (articles:live): Server-Sent Events of votes, comments, posts and the caller's
own inbox count, for the open pages to update themselves (issue 25). What a connection is
answered, whichever front serves it (the ASGI app of asgi.py, or the Django view of
views.py): a refusal (400, 429, 503), or a stream on the process's one hub (hub.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.utils.translation import gettext

from articles import conf
from articles.errors import RateLimited
from articles.http.responses import dependency_error
from articles.live.hub import NEW, Hub, Subscriber, Topic, encode, hub, order, topics_of
from articles.store import live, ratelimits

MAX_IDS = 100
RETRY_MS = 3000
RELOAD = b"event: reload\ndata: {}\n\n"
PING = b": ping\n\n"
READY_SECONDS = 2.0  # a new hub's first read of Redis, before a stream is refused


class BadQuery(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Query:
    topics: tuple[Topic, ...]
    resume: str | None  # replay the events after this id
    position: live.StreamId | None  # the same, in stream order


def parse(get: Mapping[str, str], last_event_id: str | None) -> Query:
    """The topics and resume point a request asks for (the Last-Event-ID header wins over
    `since`). Raises BadQuery."""
    topics: list[Topic] = []
    article = get.get("article")
    if article is not None:
        topics.append(("a", _id(article)))
    listed = get.get("articles")
    if listed is not None:
        ids = [_id(part) for part in listed.split(",")] if listed else []
        if len(ids) > MAX_IDS:
            raise BadQuery(gettext("At most %(count)d articles.") % {"count": MAX_IDS})
        topics.extend(("l", i) for i in dict.fromkeys(ids))
    new = get.get("new")
    if new is not None:
        if new not in ("1", "0"):
            raise BadQuery(gettext("new must be 1."))
        if new == "1":
            topics.append(NEW)
    resume = (last_event_id or get.get("since") or "").strip() or None
    position = None
    if resume is not None:
        position = live.parse_id(resume)
        if position is None:
            raise BadQuery(gettext("since must be a stream id or a time in ms."))
    return Query(tuple(topics), resume, position)


def _id(text: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise BadQuery(gettext("Article ids are digits."))
    return int(text)


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    text: str
    retry_after: int | None = None


HEADERS = (
    ("Content-Type", "text/event-stream; charset=utf-8"),
    ("Cache-Control", "no-cache, no-store"),
    ("X-Accel-Buffering", "no"),  # nginx: pass each event on as it comes
)
PLAIN = "text/plain; charset=utf-8"


def unavailable() -> Refusal:
    return Refusal(503, gettext("Live updates are unavailable for now."), retry_after=5)


@dataclass(slots=True)
class Stream:
    """An open stream: subscribed to the hub, its replay read; `chunks()` is its body."""

    hub: Hub
    subscriber: Subscriber
    replay: live.Replay | None
    position: live.StreamId | None

    def chunks(self) -> AsyncIterator[bytes]:
        return _stream(self.hub, self.subscriber, self.replay, self.position)

    def close(self) -> None:
        """The client is gone: end the body, forget the subscriber."""
        self.subscriber.end()
        self.hub.unsubscribe(self.subscriber)


async def connect(
    request: Any,
    get: Mapping[str, str],
    last_event_id: str | None,
    user_pk: Callable[[], Awaitable[int | None]],
    address: str,
) -> Refusal | Stream:
    """Answer one connection. `request` is what the rate limits count (its META and user),
    `user_pk` looks up the session's user (only once the query is good)."""
    try:
        query = parse(get, last_event_id)
    except BadQuery as exc:
        return Refusal(400, str(exc))
    try:
        pk = await user_pk()
    except Exception as exc:
        if dependency_error(exc) is not None:
            return unavailable()
        raise
    topics = query.topics if pk is None else (*query.topics, ("u", pk))
    if not topics:
        return Refusal(400, gettext("Ask for article, articles or new."))
    try:
        # Redis only (a thread-safe pool): any thread, so a burst of connects is not
        # queued behind one another on the one thread of the database work.
        await sync_to_async(ratelimits.check, thread_sensitive=False)(request, "live")
    except RateLimited as exc:
        return Refusal(429, str(exc.message), retry_after=exc.retry_after)
    except Exception as exc:
        if dependency_error(exc) is not None:
            return unavailable()
        raise
    return await _open(hub(), topics, query, address)


async def _open(
    found: Hub, topics: tuple[Topic, ...], query: Query, address: str
) -> Refusal | Stream:
    if not await found.wait_ready(READY_SECONDS):
        return unavailable()
    refused = found.admits(address)
    if refused == "address":
        message = gettext("Too many live streams from your address.")
        return Refusal(429, message, retry_after=RETRY_MS // 1000)
    if refused is not None:
        return unavailable()
    # Subscribed first, then the replay read: an event written between the two is in
    # both, and sent once (the stream skips what it already sent).
    subscriber = Subscriber(topics, address, conf.live_queue_size())
    found.subscribe(subscriber)
    replay = None
    if query.resume is not None:
        try:
            async with found.readers:
                replay = await live.areplay(found.reader, query.resume, conf.live_replay_events())
        except Exception as exc:
            found.unsubscribe(subscriber)
            if dependency_error(exc) is not None or isinstance(exc, OSError):
                return unavailable()
            raise
    return Stream(found, subscriber, replay, query.position)


async def _stream(
    found: Hub,
    subscriber: Subscriber,
    replay: live.Replay | None,
    position: live.StreamId | None,
) -> AsyncIterator[bytes]:
    subscriber.task = asyncio.current_task()
    last: live.StreamId = position or (0, -1)
    try:
        first = [f"retry: {RETRY_MS}\n\n".encode()]
        if replay is not None:
            for event in replay.events:
                if subscriber.topics.intersection(topics_of(event)):
                    first.append(encode(event).data)
                last = max(last, order(event))
            if replay.reload:
                first.append(RELOAD)
        yield b"".join(first)
        while True:
            await subscriber.wait()
            if subscriber.dropped:
                return
            parts = []
            while subscriber.queue:
                message = subscriber.queue.popleft()
                if message.order > last:
                    parts.append(message.data)
                    last = message.order
            if subscriber.ping and not parts:
                parts.append(PING)
            subscriber.ping = False
            if parts:
                yield b"".join(parts)
    finally:
        found.unsubscribe(subscriber)
