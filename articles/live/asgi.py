"""The live endpoint as a small ASGI app in front of Django: `LiveApp(django_app)` answers
the path of articles:live itself (wherever the host's URLconf puts it) and hands every
other request to Django.

Why not only the Django view: Django runs each ASGI request in a ThreadSensitiveContext
whose executor thread lives as long as the response, so every open stream held an idle
OS thread: ~84 KiB of RSS a stream (1,000 streams: 1,005 threads). Here a stream is a
task, a bounded queue and uvicorn's connection: ~2 KiB. The answers are the view's
(endpoint.py); the session's user is Django's own (auth.get_user on the session cookie's
SessionStore), looked up once, at connect."""

from __future__ import annotations

import asyncio
import contextlib
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib import auth
from django.db import close_old_connections
from django.http import QueryDict
from django.http.cookie import parse_cookie
from django.urls import get_script_prefix, reverse

from articles import conf
from articles.http.addresses import client_address
from articles.live.endpoint import HEADERS, PLAIN, Refusal, Stream, connect

Scope = dict[str, Any]


class LiveApp:
    """ASGI: the live endpoint, and `app` (Django's) for everything else."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._path: str | None = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self._is_live(scope) or conf.live_events() <= 0:
            await self.app(scope, receive, send)  # turned off: the view's 404
            return
        if scope["method"] != "GET":
            await self.app(scope, receive, send)  # the view's 405
            return
        await _serve(scope, receive, send)

    def _is_live(self, scope: Scope) -> bool:
        if self._path is None:
            # The URLconf's path, without the script prefix a request may have set.
            url, prefix = reverse("articles:live"), get_script_prefix()
            self._path = "/" + url[len(prefix) :] if url.startswith(prefix) else url
        path = scope["path"]
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return bool(path == self._path)


def _request(scope: Scope) -> tuple[SimpleNamespace, dict[str, str]]:
    """What the rate limits and addresses read of a request (META, user), and its headers."""
    headers = {k.decode("latin1").lower(): v.decode("latin1") for k, v in scope["headers"]}
    client = scope.get("client") or ("", 0)
    meta = {"REMOTE_ADDR": client[0] or ""}
    if "x-forwarded-for" in headers:
        meta["HTTP_X_FORWARDED_FOR"] = headers["x-forwarded-for"]
    return SimpleNamespace(META=meta, method="GET", user=None), headers


def _session_user_pk(session_key: str) -> int | None:
    """The session's logged-in user as Django's AuthenticationMiddleware finds it (session
    found, user active, the session's password hash still valid), or None."""
    close_old_connections()
    engine = import_module(settings.SESSION_ENGINE)
    holder = SimpleNamespace(session=engine.SessionStore(session_key))
    user = auth.get_user(holder)  # type: ignore[arg-type]
    return int(user.pk) if user.is_authenticated else None


async def _serve(scope: Scope, receive: Any, send: Any) -> None:
    while True:  # the request's body (a GET's is empty), before anything is answered
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        if not message.get("more_body"):
            break
    request, headers = _request(scope)
    cookies = parse_cookie(headers.get("cookie", ""))
    key = cookies.get(settings.SESSION_COOKIE_NAME)

    async def user_pk() -> int | None:
        if not key:
            return None
        pk = await sync_to_async(_session_user_pk)(key)
        request.user = SimpleNamespace(is_authenticated=pk is not None, pk=pk)
        return pk

    get = QueryDict(scope.get("query_string", b""), encoding="utf-8")
    last = headers.get("last-event-id")
    opened = await connect(request, get, last, user_pk, client_address(request))  # type: ignore[arg-type]
    if isinstance(opened, Refusal):
        await _refuse(send, opened)
        return
    await _stream(opened, receive, send)


async def _refuse(send: Any, refusal: Refusal) -> None:
    headers = [(b"content-type", PLAIN.encode())]
    if refusal.retry_after:
        headers.append((b"retry-after", str(refusal.retry_after).encode()))
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": (refusal.text + "\n").encode()})


_HEADERS = [(k.lower().encode(), v.encode()) for k, v in HEADERS]
_END = {"type": "http.response.body", "body": b""}


async def _stream(opened: Stream, receive: Any, send: Any) -> None:
    # The client's going away ends the body (the one other task a stream has).
    gone = asyncio.ensure_future(receive())
    gone.add_done_callback(lambda _: opened.close())
    try:
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        async for chunk in opened.chunks():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if not gone.done():
            await send(_END)
    except asyncio.CancelledError:
        # The server shutting down, or the hub dropping a client too slow for its queue
        # (stuck sending to it): the stream ends as a complete response where it still
        # can, and EventSource reconnects (to another worker) and resumes from the stream.
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(send(_END), 0.5)
    except OSError:
        pass  # the connection broke under a send
    finally:
        opened.close()
        gone.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await gone
