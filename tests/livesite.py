"""The whole site served over ASGI for real: uvicorn on a thread of the test process, on a
free loopback port (votesite/asgi.py's application, the live endpoint included).

A thread, not a subprocess: the suite's SQLite test database lives in memory, shared by
the connections of one process only, so a session made by the test is the server's too.
Tests that read the database through it take `transactional_db` (committed rows only are
seen by the server's threads). `asgi_site` is the fixture; `serving()` the same for any
scope. Read a stream with `sse_events()`."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest


@dataclass
class AsgiSite:
    url: str  # http://127.0.0.1:<port>, no trailing slash
    server: Any  # the uvicorn.Server
    thread: threading.Thread
    loop: Any = None

    def hub_stats(self) -> dict[str, int]:
        """The server loop's live hub figures (articles.live.hub.Hub.stats), or {}."""
        from articles.live import hub

        found = hub._hubs.get(self.loop) if self.loop is not None else None
        return found.stats() if found is not None else {}


@contextlib.contextmanager
def serving(app: Any = None, *, port: int = 0) -> Iterator[AsgiSite]:
    """uvicorn serving `app` (votesite.asgi's application by default) until the block ends;
    open streams are cut at the end (a graceful shutdown of 1 s)."""
    import asyncio

    import uvicorn

    if app is None:
        from votesite.asgi import application as app
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=1,
        backlog=4096,
    )
    server = uvicorn.Server(config)
    site = AsgiSite(f"http://127.0.0.1:{sock.getsockname()[1]}", server, threading.Thread())

    def run() -> None:
        async def main() -> None:
            site.loop = asyncio.get_running_loop()
            await server.serve(sockets=[sock])

        asyncio.run(main())

    site.thread = threading.Thread(target=run, name="asgi-site", daemon=True)
    site.thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not site.thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield site
    finally:
        server.should_exit = True
        site.thread.join(10)
        sock.close()


@pytest.fixture
def asgi_site() -> Iterator[AsgiSite]:
    """The site over ASGI for this test (see the module doc)."""
    with serving() as site:
        yield site


@dataclass
class Event:
    kind: str
    id: str | None
    data: Any
    comment: str | None = None


@dataclass
class SseReader:
    """Events of one open stream, read as they come (a text/event-stream parser)."""

    response: httpx.Response
    lines: Iterator[str] = field(init=False)
    retry: int | None = None

    def __post_init__(self) -> None:
        self.lines = self.response.iter_lines()

    def next(self) -> Event:
        """The next event or comment (": ping"); httpx.ReadTimeout when none comes in time."""
        kind, ident, data, comment = "message", None, [], None
        for line in self.lines:
            if line == "":
                if data or comment is not None or ident is not None:
                    text = "\n".join(data)
                    return Event(kind, ident, json.loads(text) if text else None, comment)
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "":
                comment = value
            elif name == "retry":
                self.retry = int(value)
            elif name == "event":
                kind = value
            elif name == "id":
                ident = value
            elif name == "data":
                data.append(value)
        raise EOFError("the stream ended")

    def events(self, count: int, *, pings: bool = False) -> list[Event]:
        """The next `count` events (heartbeats skipped unless `pings`)."""
        found: list[Event] = []
        while len(found) < count:
            event = self.next()
            if event.comment is None or pings:
                found.append(event)
        return found

    def quiet(self) -> list[Event]:
        """The events that come before the read times out (the stream's `timeout`): the
        stream is of no further use after it."""
        found: list[Event] = []
        with contextlib.suppress(httpx.ReadTimeout):
            while True:
                event = self.next()
                if event.comment is None:
                    found.append(event)
        return found


@contextlib.contextmanager
def sse_events(
    site: AsgiSite,
    query: str,
    *,
    headers: dict[str, str] | None = None,
    cookies: dict[str, str] | None = None,
    timeout: float = 3.0,
    prefix: str = "/live/",
) -> Iterator[SseReader]:
    """An open stream of `site`'s live endpoint (its status asserted 200)."""
    url = f"{site.url}{prefix}?{query}"
    with (
        httpx.Client(cookies=cookies, timeout=timeout) as client,
        client.stream("GET", url, headers=headers) as response,
    ):
        assert response.status_code == 200, (response.status_code, response.read())
        assert response.headers["content-type"].startswith("text/event-stream")
        yield SseReader(response)
