"""Turn an unreachable Redis into a clear 503, and an oversized body into a 413."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse

from articles.connection import out_of_memory, store_unavailable
from articles.database import database_unavailable
from articles.errors import DatabaseUnavailable, RequestTooLarge, StoreFull, StoreUnavailable
from articles.responses import error_response

logger = logging.getLogger(__name__)


class RedisUnavailableMiddleware:
    """Answers 503 while Redis (or Django's database) is down. redis-py and Django
    reconnect on the next request by themselves, so the site recovers without a restart."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if out_of_memory(exception):
            logger.warning("Redis out of memory: %s", exception)
            return error_response(request, StoreFull())
        if store_unavailable(exception):
            logger.warning("Redis unavailable: %s", exception)
            return error_response(request, StoreUnavailable())
        if database_unavailable(exception):
            # Django's database (accounts, sessions, tokens): anonymous pages need none.
            logger.warning("Database unavailable: %s", exception)
            return error_response(request, DatabaseUnavailable())
        return None


def too_large_response(request: HttpRequest) -> HttpResponse:
    """413 with the limit named: JSON under the API (or when JSON is asked for), else a page."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    error = RequestTooLarge(f"The request body is larger than the {limit:,} bytes allowed.")
    return error_response(request, error)


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
