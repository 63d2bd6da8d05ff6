"""The live endpoint as a Django view (articles:live): the URL the pages link to, and the
endpoint wherever the ASGI app (asgi.py) is not mounted in front of Django.

Under a WSGI server a stream would hold a thread for as long as its page is open: there it
answers at once with one `unavailable` event and ends, which live.js takes as "no live
updates here" and stops (an error status would be an error in every page's console and a
retry every minute; the pages stay complete without the stream). Under ASGI it streams, at a
cost: Django runs each request in a ThreadSensitiveContext, so an open stream also holds
an idle thread (~80 KiB) until it ends; the ASGI app holds none (~2 KiB a stream)."""

from __future__ import annotations

import weakref

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from articles import conf
from articles.http.addresses import client_address
from articles.live.endpoint import HEADERS, PLAIN, Refusal, connect


def _plain(refusal: Refusal) -> HttpResponse:
    response = HttpResponse(refusal.text + "\n", status=refusal.status, content_type=PLAIN)
    if refusal.retry_after:
        response["Retry-After"] = str(refusal.retry_after)
    return response


@require_GET
async def live_events(request: HttpRequest) -> HttpResponseBase:
    if conf.live_events() <= 0:
        return _plain(Refusal(404, gettext("Live updates are turned off.")))
    if not isinstance(request, ASGIRequest):
        # A WSGI server would give the stream a thread of its own: never.
        return _not_served_here()

    async def user_pk() -> int | None:
        user = await request.auser()
        return int(user.pk) if user.is_authenticated else None

    last = request.headers.get("Last-Event-ID")
    opened = await connect(request, request.GET, last, user_pk, client_address(request))
    if isinstance(opened, Refusal):
        return _plain(opened)
    body = opened.chunks()
    # A response never sent (the client gone first) never starts its generator, so
    # its finally would not run: forget the subscriber when the generator goes.
    weakref.finalize(body, opened.hub.unsubscribe, opened.subscriber)
    response = StreamingHttpResponse(body)
    for name, value in HEADERS:
        response[name] = value
    return response


def _not_served_here() -> HttpResponse:
    """A stream of one event, `unavailable`, for a page served where no ASGI server answers
    its stream (make serve's port, a WSGI-only host); `retry` an hour, should a client other
    than live.js reconnect."""
    note = gettext("Live updates are served over ASGI only.")
    body = f": {note}\nretry: 3600000\nevent: unavailable\ndata: {{}}\n\n"
    response = HttpResponse(body)
    for name, value in HEADERS:
        response[name] = value
    return response
