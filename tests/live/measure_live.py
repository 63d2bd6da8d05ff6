"""Rough figures of the live endpoint on this machine (not a test; the bench is bench/'s):
the server's memory per idle stream, and how long one event takes to reach every client.

    .venv/bin/python -m tests.live.measure_live --clients 2000 --events 20

One uvicorn process serves the site (votesite.asgi) on a throwaway Redis; this process
opens the streams (asyncio sockets) and reads them. `--bare` serves a minimal SSE app of
raw ASGI instead (no Django), `--django` the Django view alone (no ASGI app in front)."""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import redis

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = """
from tests.settings import *  # noqa: F403
ARTICLES_LIVE_STREAMS_PER_ADDRESS = 1_000_000
ARTICLES_RATE_LIMITS = {"live": None}
LOGGING = {"version": 1, "disable_existing_loggers": False}
"""


async def bare_app(scope, receive, send):  # type: ignore[no-untyped-def]
    """An SSE response that holds the connection open: the floor under any design."""
    if scope["type"] != "http":
        return
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream")],
        }
    )
    await send({"type": "http.response.body", "body": b"retry: 3000\n\n", "more_body": True})
    await receive()  # until the client goes


async def open_stream(port: int, query: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /live/?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n", 1)[0], head
    await reader.readuntil(b"\n\n")  # retry: 3000
    return reader, writer


async def until_event(reader: asyncio.StreamReader) -> float:
    while True:
        chunk = await reader.readuntil(b"\n\n")
        if b"id: " in chunk:
            return time.perf_counter()


async def measure(
    args: argparse.Namespace, port: int, server: psutil.Process, conn: redis.Redis
) -> None:
    streams = [await open_stream(port, "article=1")]
    await asyncio.sleep(1)
    base = server.memory_info().rss
    for start in range(1, args.clients, 200):
        batch = [
            open_stream(port, "article=1") for _ in range(start, min(args.clients, start + 200))
        ]
        streams.extend(await asyncio.gather(*batch))
    await asyncio.sleep(2)
    rss = server.memory_info().rss
    per = (rss - base) / (args.clients - 1)
    print(
        f"clients={args.clients} server RSS {base / 2**20:.1f} MiB -> {rss / 2**20:.1f} MiB: "
        f"{per / 1024:.1f} KiB per idle stream; {server.num_threads()} threads"
    )
    if args.bare or not args.events:
        for _, writer in streams:
            writer.close()
        return
    lateness: list[float] = []
    lasts: list[float] = []
    for n in range(args.events):
        waiting = [asyncio.create_task(until_event(r)) for r, _ in streams]
        await asyncio.sleep(0.05)
        sent = time.perf_counter()
        conn.xadd("live:", {"e": "vote", "a": "1", "n": str(n)})
        arrived = await asyncio.gather(*waiting)
        times = [(t - sent) * 1000 for t in arrived]
        lateness.extend(times)
        lasts.append(max(times))
        await asyncio.sleep(0.2)
    lateness.sort()
    p50 = statistics.median(lateness)
    p99 = lateness[int(len(lateness) * 0.99) - 1]
    print(
        f"fan-out of {args.events} events to {args.clients} clients: p50 {p50:.1f} ms, "
        f"p99 {p99:.1f} ms, last client median {statistics.median(lasts):.1f} ms, "
        f"max {max(lasts):.1f} ms (as read by this one process)"
    )
    print(f"server RSS after: {server.memory_info().rss / 2**20:.1f} MiB")
    for _, writer in streams:
        writer.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--bare", action="store_true")
    parser.add_argument("--django", action="store_true", help="the Django view, no ASGI app")
    parser.add_argument("--loop", default="auto", help="uvicorn's --loop: auto (uvloop), asyncio")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (min(hard, max(soft, args.clients * 2 + 1000)), hard)
    )
    work = Path(tempfile.mkdtemp(prefix="vs-live-", dir="/tmp"))
    (work / "live_measure_settings.py").write_text(SETTINGS)
    sys.path.insert(0, str(ROOT))
    from articles.operations.embedded import EmbeddedRedis

    store = EmbeddedRedis(work / "redis", daemonize=False)
    (work / "redis").mkdir()
    store.start()
    port = 18000 + os.getpid() % 1000
    app = "tests.live.measure_live:bare_app" if args.bare else "votesite.asgi:application"
    if args.django:
        app = "votesite.asgi:django_application"
    env = {
        **os.environ,
        "PYTHONPATH": f"{work}:{ROOT}",
        "DJANGO_SETTINGS_MODULE": "live_measure_settings",
        "REDIS_URL": f"{store.url}?db=0",
    }
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        app,
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
        "--backlog",
        "4096",
        "--lifespan",
        "off",
        "--loop",
        args.loop,
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        time.sleep(3)
        server = psutil.Process(process.pid)
        conn = redis.Redis.from_url(f"{store.url}?db=0")
        asyncio.run(measure(args, port, server, conn))
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        store.stop()


if __name__ == "__main__":
    main()
