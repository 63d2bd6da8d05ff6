"""The live endpoint's bounds, served for real: a slow client is dropped (its memory goes
with it), one Redis connection reads for every client, a lost Redis is ridden out."""

from __future__ import annotations

import socket
import time

import httpx
import psutil

from articles.live.hub import HUB_CLIENT_NAME
from articles.store import keys
from tests.live.test_endpoint import settle, vote
from tests.livesite import sse_events


def burst(conn, count: int, article: int = 12) -> None:  # type: ignore[no-untyped-def]
    for start in range(0, count, 1000):
        pipe = conn.pipeline(transaction=False)
        for n in range(start, min(count, start + 1000)):
            pipe.xadd(keys.LIVE, {"e": "vote", "a": str(article), "n": str(n)})
        pipe.execute()


def test_a_client_that_never_reads_is_dropped_and_nothing_piles_up(asgi_site, conn, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_LIVE_QUEUE_SIZE = 16
    slow = socket.socket()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    host, port = asgi_site.url.removeprefix("http://").split(":")
    slow.connect((host, int(port)))
    slow.sendall(f"GET /live/?article=12 HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    with sse_events(asgi_site, "article=12", timeout=5) as keeping_up:
        settle(asgi_site, 2)
        # More than the kernel's socket buffers (4 MB on this machine) and uvicorn's hold
        burst(conn, 100_000)
        deadline = time.monotonic() + 10
        while asgi_site.hub_stats()["dropped"] < 1:
            assert time.monotonic() < deadline, asgi_site.hub_stats()
            time.sleep(0.05)
        assert asgi_site.hub_stats()["streams"] == 1  # the reader that kept up stays
        rss = psutil.Process().memory_info().rss
        burst(conn, 50_000)
        settle_reads = 0
        while settle_reads < 150_000:  # the one keeping up gets every event
            event = keeping_up.next()
            if event.comment is None:
                settle_reads += 1
        grown = psutil.Process().memory_info().rss - rss
    assert asgi_site.hub_stats()["dropped"] == 1
    # 50,000 more events for a client that reads nothing: were they queued for it, they
    # would take ~10 MB (encoded events and their objects).
    assert grown < 4_000_000, grown
    # The server ended its side: the dropped connection's transport is closing (at once
    # when the drop cut a send short, else once the completed response's idle keep-alive,
    # uvicorn's 5 s, runs out). Asked of the server, not read off the slow socket: with a
    # 1 KB receive window the kernel may pass the sent rest on only at its zero-window
    # probes' backed-off pace, so reading it to its end takes an unbounded while.
    deadline = time.monotonic() + 10
    while open_connections := [
        c for c in list(asgi_site.server.server_state.connections) if not c.transport.is_closing()
    ]:
        assert time.monotonic() < deadline, f"{len(open_connections)} connection(s) still open"
        time.sleep(0.05)
    slow.close()


def test_one_redis_connection_reads_for_every_client(asgi_site, conn, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_LIVE_STREAMS_PER_ADDRESS = 100

    def hub_connections() -> int:
        return sum(1 for c in conn.client_list() if c.get("name") == HUB_CLIENT_NAME)

    with httpx.Client(timeout=5) as client:
        streams = []
        for n in range(60):
            stream = client.stream("GET", f"{asgi_site.url}/live/?article={n}&since=1")
            streams.append(stream)
            assert stream.__enter__().status_code == 200
        settle(asgi_site, 60)
        before = len(conn.client_list())
        assert hub_connections() == 1
        for stream in streams:
            stream.__exit__(None, None, None)
    settle(asgi_site, 0)
    assert hub_connections() == 1
    assert before < 60


def test_redis_restarted_mid_stream_the_events_after_it_still_arrive(own_redis, asgi_site):  # type: ignore[no-untyped-def]
    conn = own_redis.client()
    with sse_events(asgi_site, "article=12", timeout=15) as reader:
        settle(asgi_site, 1)
        first = vote(conn, 12, 1)
        assert reader.events(1)[0].id == first
        own_redis.stop()
        time.sleep(1.5)  # the hub's read fails and is retried while the server is down
        own_redis.start()
        conn = own_redis.client()
        later = [vote(conn, 12, n) for n in (2, 3)]
        assert [e.id for e in reader.events(2)] == later
    assert asgi_site.hub_stats()["connected"] == 1


def test_redis_down_at_connect_is_a_503(own_redis, asgi_site):  # type: ignore[no-untyped-def]
    with sse_events(asgi_site, "new=1"):
        pass  # the hub has started
    own_redis.stop()
    response = httpx.get(f"{asgi_site.url}/live/?article=1&since=1", timeout=10)
    assert response.status_code == 503
    assert response.headers["content-type"].startswith("text/plain")
    assert "Retry-After" in response.headers
    own_redis.start()
    with sse_events(asgi_site, "article=1&since=1"):
        pass
