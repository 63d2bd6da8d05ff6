"""HTML views of the articles app: thin, each validates, calls the store, renders."""

from __future__ import annotations

import redis
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from articles import selectors
from articles.errors import StoreUnavailable
from articles.middleware import REDIS_DOWN


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 with the Redis status, or 503 with a clear message when it is unreachable."""
    try:
        status = selectors.store_status()
    except REDIS_DOWN as exc:
        error = StoreUnavailable()
        return JsonResponse(
            {"status": "unavailable", "detail": error.message, "error": str(exc)},
            status=error.status_code,
        )
    except redis.RedisError as exc:
        return JsonResponse({"status": "error", "detail": str(exc)}, status=503)
    return JsonResponse({"status": "ok", "redis": status})
