"""The live benchmark's clients (bench/live.py): raw asyncio sockets reading the live
endpoint's streams as a browser's EventSource would, each from a loopback address of its own
(all of 127/8 is this host; the endpoint caps streams per address)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field


def _address(group: int, number: int) -> str:
    """A loopback address of its own for client `number` (all of 127/8 is this host)."""
    return f"127.{group}.{number // 250}.{number % 250 + 1}"


@dataclass
class Stream:
    """One client's stream: what it was sent, and when each vote's event arrived."""

    pings: int = 0
    votes: dict[int, float] = field(default_factory=dict)  # net -> receipt time
    duplicates: int = 0
    ended: bool = False
    writer: asyncio.StreamWriter | None = None
    task: asyncio.Task[None] | None = None
    opened: asyncio.Event = field(default_factory=asyncio.Event)

    def handle(self, block: bytes, now: float) -> None:
        if block.startswith(b":"):
            self.pings += 1
            return
        fields = dict(
            line.split(b": ", 1) for line in block.split(b"\n") if b": " in line
        )  # fmt: skip
        if fields.get(b"event") == b"vote":
            net = int(json.loads(fields[b"data"])["net"])
            if net in self.votes:
                self.duplicates += 1
            self.votes.setdefault(net, now)
        elif b"retry" in fields:
            self.opened.set()

    async def read(self, reader: asyncio.StreamReader, chunked: bool) -> None:
        buffer = b""
        try:
            while True:
                if chunked:
                    size = int((await reader.readline()).split(b";")[0] or b"0", 16)
                    if size == 0:
                        break
                    data = (await reader.readexactly(size + 2))[:-2]
                else:
                    data = await reader.read(65536)
                    if not data:
                        break
                now = time.monotonic()
                buffer += data
                *blocks, buffer = buffer.split(b"\n\n")
                for block in blocks:
                    self.handle(block, now)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self.ended = True
            self.opened.set()


async def open_stream(port: int, query: str, source: str) -> Stream:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(
        f"GET /live/?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if status != 200:
        writer.close()
        raise RuntimeError(f"/live/?{query} from {source}: {head.decode(errors='replace')!r}")
    stream = Stream(writer=writer)
    stream.task = asyncio.create_task(stream.read(reader, b"chunked" in head.lower()))
    await asyncio.wait_for(stream.opened.wait(), 30)
    return stream


async def open_many(port: int, query: str, count: int, group: int) -> list[Stream]:
    """`count` streams, 100 connecting at a time (as a crowd of browsers would, not all
    in the same millisecond)."""
    gate = asyncio.Semaphore(100)

    async def one(number: int) -> Stream:
        async with gate:
            return await open_stream(port, query, _address(group, number))

    return list(await asyncio.gather(*(one(n) for n in range(count))))


async def close_all(streams: list[Stream]) -> None:
    for stream in streams:
        if stream.writer is not None:
            stream.writer.close()
    await asyncio.gather(*(s.task for s in streams if s.task), return_exceptions=True)
