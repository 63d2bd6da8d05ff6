"""A bare ASGI app for tests/project/test_live_serving.py: an endless event stream that ends
when its client leaves (http.disconnect), as the live endpoint's does."""

from __future__ import annotations

from typing import Any


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"retry: 3000\n\n", "more_body": True})
    while (await receive())["type"] != "http.disconnect":
        pass
