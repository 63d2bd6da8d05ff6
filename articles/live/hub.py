"""The hub: one reader of the stream `live:` per process (per event loop), whatever the
number of clients. A single task runs XREAD BLOCK on one Redis connection and hands each
event to the subscribers of its topics only (an event costs O(its subscribers)), encoded
once. Each subscriber has a bounded queue: one that fills (a client reading slower than
events come) is dropped, and its reconnect resumes from the stream, so nothing is lost
and nothing piles up. A lost Redis is retried with backoff from the last id read: clients
stay connected and miss nothing."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import Iterable
from typing import Any

from articles import conf
from articles.store import live

logger = logging.getLogger(__name__)

Topic = tuple[str, int]  # ("a", article) page, ("l", article) listing row, ("n", 0), ("u", pk)
NEW: Topic = ("n", 0)
HUB_CLIENT_NAME = "votesite-live-hub"
READER_CLIENT_NAME = "votesite-live"
BLOCK_MS = 10_000
READERS = 8
BACKOFF = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)


class Message:
    """An event as sent: its stream order and its encoded text, built once for every
    subscriber it goes to."""

    __slots__ = ("data", "order")

    def __init__(self, order: live.StreamId, data: bytes) -> None:
        self.order = order
        self.data = data


def encode(event: live.LiveEvent) -> Message:
    """The wire form of an event (id, event, data)."""
    data = json.dumps(_payload(event), separators=(",", ":"))
    text = f"id: {event.id}\nevent: {event.kind}\ndata: {data}\n\n"
    return Message(order(event), text.encode())


def order(event: live.LiveEvent) -> live.StreamId:
    return live.parse_id(event.id) or (0, 0)


def _payload(event: live.LiveEvent) -> dict[str, Any]:
    if event.kind == "vote":
        return {"article": event.article, "net": event.net}
    if event.kind == "post":
        return {"article": event.article}
    if event.kind == "comment":
        return {"article": event.article, "comment": event.comment, "parent": event.parent}
    if event.kind == "cvote":
        return {"article": event.article, "comment": event.comment, "net": event.net}
    return {"unread": event.unread}  # inbox


def topics_of(event: live.LiveEvent) -> tuple[Topic, ...]:
    """Who an event goes to: an article page gets its votes, comments and comment votes, a
    listing its rows' votes, /new/ the posts, a user their own inbox count."""
    if event.kind == "inbox":
        return (("u", event.user),) if event.user is not None else ()
    if event.article is None:
        return ()
    if event.kind == "vote":
        return (("a", event.article), ("l", event.article))
    if event.kind in ("comment", "cvote"):
        return (("a", event.article),)
    return (NEW,)  # post


class Subscriber:
    """One open stream: its topics, address, and a bounded queue of messages."""

    __slots__ = ("address", "dropped", "limit", "ping", "queue", "task", "topics", "waiter")

    def __init__(self, topics: Iterable[Topic], address: str, limit: int) -> None:
        self.topics = frozenset(topics)
        self.address = address
        self.queue: collections.deque[Message] = collections.deque()
        self.limit = limit
        self.waiter: asyncio.Future[None] | None = None
        self.ping = False
        self.dropped = False
        self.task: asyncio.Task[Any] | None = None

    def push(self, message: Message) -> bool:
        """Queue a message; False (nothing queued) when the queue is full."""
        if len(self.queue) >= self.limit:
            return False
        self.queue.append(message)
        self._wake()
        return True

    def end(self) -> None:
        """Ends the stream at its next wake (now, if it waits)."""
        self.dropped = True
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def wait(self) -> None:
        """Until there is a message, a heartbeat due, or the subscriber was dropped."""
        while not self.queue and not self.ping and not self.dropped:
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None


class Hub:
    """The process's reader of `live:` on the loop it was started on (see module doc)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.by_topic: dict[Topic, set[Subscriber]] = {}
        self.by_address: collections.Counter[str] = collections.Counter()
        self.everyone: set[Subscriber] = set()
        self.last_id: str | None = None
        self.connected = False
        self.dropped = 0  # slow subscribers dropped, for the figures
        self.client = _named(live.async_client(block_ms=BLOCK_MS), HUB_CLIENT_NAME)
        # Resuming streams' replays: a connect burst shares a few connections (READERS).
        self.reader = _named(live.async_client(), READER_CLIENT_NAME)
        self.readers = asyncio.Semaphore(READERS)
        # Set once the first read position is known: a stream subscribed before it could
        # miss the events written between its subscription and that position.
        self.ready = loop.create_future()
        self.tasks = [loop.create_task(self._run()), loop.create_task(self._heartbeats())]

    async def wait_ready(self, timeout: float) -> bool:
        """False if the hub has not reached Redis within `timeout` seconds (it goes on
        trying by itself)."""
        if not self.ready.done():
            try:
                await asyncio.wait_for(asyncio.shield(self.ready), timeout)
            except TimeoutError:
                return False
        return True

    # --- subscribers ---------------------------------------------------------------

    def admits(self, address: str) -> str | None:
        """None when one more stream from `address` may open, else which limit is reached."""
        if len(self.everyone) >= conf.live_max_streams():
            return "process"
        if self.by_address[address] >= conf.live_streams_per_address():
            return "address"
        return None

    def subscribe(self, subscriber: Subscriber) -> None:
        for topic in subscriber.topics:
            self.by_topic.setdefault(topic, set()).add(subscriber)
        self.everyone.add(subscriber)
        self.by_address[subscriber.address] += 1

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """Forget a subscriber (again: nothing)."""
        if subscriber not in self.everyone:
            return
        self.everyone.discard(subscriber)
        for topic in subscriber.topics:
            found = self.by_topic.get(topic)
            if found is not None:
                found.discard(subscriber)
                if not found:
                    del self.by_topic[topic]
        self.by_address[subscriber.address] -= 1
        if self.by_address[subscriber.address] <= 0:
            del self.by_address[subscriber.address]

    def _drop(self, subscriber: Subscriber) -> None:
        """A client too slow for its queue: closed, its reconnect resumes from the stream."""
        self.unsubscribe(subscriber)
        subscriber.dropped = True
        subscriber.queue.clear()
        subscriber._wake()
        self.dropped += 1
        if subscriber.task is not None:
            # Its task may be stuck sending to a client that reads nothing: end it.
            subscriber.task.cancel()

    def deliver(self, event: live.LiveEvent) -> None:
        topics = topics_of(event)
        found = [self.by_topic.get(topic) for topic in topics]
        targets = [s for s in found if s]
        if not targets:
            return
        message = encode(event)
        if len(targets) == 1:
            receivers: Iterable[Subscriber] = list(targets[0])
        else:
            receivers = set().union(*targets)
        for subscriber in receivers:
            if not subscriber.push(message):
                self._drop(subscriber)

    # --- the reader ------------------------------------------------------------------

    async def _run(self) -> None:
        failures = 0
        while True:
            try:
                if self.last_id is None:
                    self.last_id = await live.anewest_id(self.client) or "0-0"
                    self.ready.set_result(None)
                self.connected = True
                # At most half a queue a read: a client keeping up sends what it was given
                # while the next read is on the wire, so only a slow one fills its queue.
                count = max(1, conf.live_queue_size() // 2)
                batch = await live.aread(self.client, self.last_id, BLOCK_MS, count)
                failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the reader outlives any failure
                self.connected = False
                delay = BACKOFF[min(failures, len(BACKOFF) - 1)]
                failures += 1
                logger.warning("live: reading the stream failed (%s); again in %.2f s", exc, delay)
                with contextlib.suppress(Exception):
                    await self.client.connection_pool.disconnect()
                await asyncio.sleep(delay)
                continue
            self.last_id = batch.last_id
            for event in batch.events:
                self.deliver(event)

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(conf.live_heartbeat_seconds())
            for subscriber in self.everyone:
                subscriber.ping = True
                subscriber._wake()

    def stats(self) -> dict[str, int]:
        return {
            "streams": len(self.everyone),
            "topics": len(self.by_topic),
            "dropped": self.dropped,
            "connected": int(self.connected),
        }


def _named(client: Any, name: str) -> Any:
    """The client's connections say whose they are in CLIENT LIST."""
    client.connection_pool.connection_kwargs["client_name"] = name
    return client


_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}


def hub() -> Hub:
    """The running loop's hub, started on first use."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        for other in [k for k in _hubs if k.is_closed()]:
            del _hubs[other]
        found = _hubs[loop] = Hub(loop)
    return found


def running() -> Hub | None:
    """The running loop's hub if one was started (for the figures)."""
    try:
        return _hubs.get(asyncio.get_running_loop())
    except RuntimeError:
        return None
