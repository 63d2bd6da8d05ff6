"""Turn an unreachable Redis into a clear 503 instead of a traceback."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from articles.connection import store_unavailable
from articles.errors import ArticlesError, RequestTooLarge, StoreUnavailable

logger = logging.getLogger(__name__)


def _answer(
    request: HttpRequest, error: ArticlesError, template: str, context: dict[str, object]
) -> HttpResponse:
    """The error as {"detail", "code"} JSON under /api/ (or when JSON is asked for), else a page."""
    if request.path.startswith("/api/") or "json" in request.headers.get("Accept", ""):
        return JsonResponse({"detail": error.message, "code": error.code}, status=error.status_code)
    html = render_to_string(template, context, request)
    return HttpResponse(html, status=error.status_code)


def unavailable_response(request: HttpRequest) -> HttpResponse:
    """The 503 every surface gives while Redis is unreachable (JSON for the API)."""
    error = StoreUnavailable()
    response = _answer(request, error, "articles/unavailable.html", {"message": error.message})
    response["Retry-After"] = "5"
    return response


class RedisUnavailableMiddleware:
    """Answers 503 while Redis is down. redis-py reconnects on the next request by itself,
    so the site recovers without a restart once Redis is back."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if store_unavailable(exception):
            logger.warning("Redis unavailable: %s", exception)
            return unavailable_response(request)
        return None


def too_large_response(request: HttpRequest) -> HttpResponse:
    """413 with the limit named: JSON under /api/ (or when JSON is asked for), else a page."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    error = RequestTooLarge(f"The request body is larger than the {limit:,} bytes allowed.")
    return _answer(request, error, "articles/error.html", {"error": error, "status": 413})


class RequestSizeMiddleware:
    """413 for a body over DATA_UPLOAD_MAX_MEMORY_SIZE before anything reads it. Django
    checks the limit only when a form is parsed (and then answers a bare 400); DRF's JSON
    parser reads the stream without any limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # Django reads no body with a malformed length
        if limit is not None and length > limit:
            return too_large_response(request)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RequestDataTooBig):
            return too_large_response(request)
        return None
