"""The outermost layer of the stack: each request's id, its line in the log and
django-prometheus' figures taken before the other middleware, in one middleware. Three
layers did this (the request line, PrometheusBeforeMiddleware and the request id), each
with its own dispatch: together about a third of a bare request."""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.functional import empty

from articles.http.addresses import client_address
from votesite.headers import store_of
from votesite.logs import bind_request, write_request_line
from votesite.metrics import Before

# Bounds on what a client sends that goes into each request line.
_USER_AGENT_MAX = 256
_QUERY_MAX = 512

# A request id a proxy gave (X-Request-ID) is kept if it is short and plain, so it can be
# searched for across the proxy's logs and ours; anything else is replaced by our own.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class ObservabilityMiddleware:
    """One line per request: method, path, query, status, duration, user id, client address
    (articles.http.addresses: X-Forwarded-For only as far as our proxies), user agent,
    request id. The request id (X-Request-ID, taken from the proxy or made here: 32 hex
    digits) is on every line logged during the request and is sent back in the response's
    X-Request-ID. Also what PrometheusBeforeMiddleware counts (requests, responses, the
    latency including every middleware); votesite.metrics.RequestMetricsMiddleware, last
    in the stack, counts the rest."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.before = Before()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        self.before.requests(1)
        meta = request.META  # not request.headers, which would copy every header first
        given = meta.get("HTTP_X_REQUEST_ID", "")
        request_id = given if given and _REQUEST_ID.fullmatch(given) else secrets.token_hex(16)
        path = request.path
        bind_request(request_id, path)
        response = self.get_response(request)
        taken = time.perf_counter() - started  # the stack's latency and the line's duration
        self.before.answered(taken)
        store = store_of(response)
        if store is not None:
            # Straight into Django's header store (votesite.headers), unchecked: the id is
            # the pattern's characters or hex digits, nothing Django's check changes.
            store["x-request-id"] = ("X-Request-ID", request_id)
        else:
            response["X-Request-ID"] = request_id
        status = response.status_code
        write_request_line(
            logging.ERROR if status >= 500 else logging.INFO,
            {
                "method": request.method,
                "status": status,
                "duration_ms": round(taken * 1000, 1),
                "user_id": _user_id(request),
                "client": client_address(request),
                "user_agent": meta.get("HTTP_USER_AGENT", "")[:_USER_AGENT_MAX],
                "query": meta.get("QUERY_STRING", "")[:_QUERY_MAX],
                "request_id": request_id,
                "path": path,
            },
        )
        # Left bound: Django logs the response's warning (django.request) after us.
        return response


def _user_id(request: HttpRequest) -> int | None:
    """The user's id if this request already looked its user up (a session or an API
    token); never a lookup of its own, which would cost cached pages a database query."""
    user = getattr(request, "user", None)
    if user is None or getattr(user, "_wrapped", None) is empty:
        return None
    return user.pk if user.is_authenticated else None
