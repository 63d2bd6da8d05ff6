"""GET live/ (articles:live): Server-Sent Events of votes, comments, posts and the caller's
own inbox count, for the open pages to update themselves (issue 25).

An async view streaming over an async iterator: under an ASGI server an open stream is a
suspended generator and a small queue on the process's one hub (hub.py), no thread. Under
a WSGI server it would hold a thread for as long as the page is open, so there it answers
503 at once (the page stays complete without it)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from articles import conf
from articles.errors import RateLimited
from articles.http.addresses import client_address
from articles.live.hub import NEW, Hub, Subscriber, Topic, encode, hub, order, topics_of
from articles.store import live, ratelimits
from articles.store.connection import store_unavailable

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


def parse(request: HttpRequest) -> Query:
    """The topics and resume point a request asks for. Raises BadQuery."""
    get = request.GET
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
    resume = (request.headers.get("Last-Event-ID") or get.get("since") or "").strip() or None
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


def _plain(status: int, text: str, retry_after: int | None = None) -> HttpResponse:
    response = HttpResponse(text + "\n", status=status, content_type="text/plain; charset=utf-8")
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


def _unavailable() -> HttpResponse:
    return _plain(503, gettext("Live updates are unavailable for now."), retry_after=5)


@require_GET
async def live_events(request: HttpRequest) -> HttpResponseBase:
    if conf.live_events() <= 0:
        return _plain(404, gettext("Live updates are turned off."))
    if not isinstance(request, ASGIRequest):
        # A WSGI server would give the stream a thread of its own: never.
        return _plain(503, gettext("Live updates are served over ASGI only."), retry_after=60)
    try:
        query = parse(request)
    except BadQuery as exc:
        return _plain(400, str(exc))
    user = await request.auser()
    topics = query.topics
    if user.is_authenticated:
        topics = (*topics, ("u", int(user.pk)))
    if not topics:
        return _plain(400, gettext("Ask for article, articles or new."))
    try:
        await sync_to_async(ratelimits.check)(request, "live")
    except RateLimited as exc:
        return _plain(429, str(exc.message), retry_after=exc.retry_after)
    except Exception as exc:
        if store_unavailable(exc):
            return _unavailable()
        raise
    return await _open(request, hub(), topics, query)


async def _open(
    request: HttpRequest, found: Hub, topics: tuple[Topic, ...], query: Query
) -> HttpResponseBase:
    if not await found.wait_ready(READY_SECONDS):
        return _unavailable()
    address = client_address(request)
    refused = found.admits(address)
    if refused == "address":
        message = gettext("Too many live streams from your address.")
        return _plain(429, message, retry_after=RETRY_MS // 1000)
    if refused is not None:
        return _unavailable()
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
            if store_unavailable(exc) or isinstance(exc, OSError):
                return _unavailable()
            raise
    body = _stream(found, subscriber, replay, query.position)
    # A response never sent (the client gone first) never starts its generator, so
    # its finally would not run: forget the subscriber when the generator goes.
    weakref.finalize(body, found.unsubscribe, subscriber)
    response = StreamingHttpResponse(body, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache, no-store"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on as it comes
    return response


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
