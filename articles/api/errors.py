"""The REST API's one exception handler: every error becomes {"detail", "code"} JSON."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.utils.translation import gettext
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import set_rollback

from articles.errors import ArticlesError, StoreUnavailable
from articles.http.responses import dependency_error, error_body
from articles.operations import metrics

logger = logging.getLogger(__name__)


def api_exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response | None:
    """Turn a domain error or a DRF error into {"detail", "code"} with its status.

    Field errors also carry `field` (the first field at fault) and `errors` (every field
    with its messages). An unavailable Redis or database is a 503; anything else
    unexpected is logged and answered with a JSON 500 rather than Django's HTML page.
    """
    # A 503 the client may retry, with or without the host's RedisUnavailableMiddleware.
    exc = dependency_error(exc) or exc
    if isinstance(exc, ArticlesError):
        return _articles_error(exc, context)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, exceptions.APIException):
        headers = {}
        auth_header = getattr(exc, "auth_header", None)
        if auth_header:
            headers["WWW-Authenticate"] = str(auth_header)
        wait = getattr(exc, "wait", None)
        if wait:
            headers["Retry-After"] = str(int(wait))
        set_rollback()
        return Response(_api_error_body(exc), status=exc.status_code, headers=headers)
    logger.exception("Unexpected error in the REST API", exc_info=exc)
    return Response(
        {"detail": gettext("Internal error; it has been logged."), "code": "server_error"},
        status=500,
    )


def _articles_error(exc: ArticlesError, context: Mapping[str, Any]) -> Response:
    set_rollback()
    metrics.count_error(exc)
    request = context.get("request")
    if isinstance(exc, StoreUnavailable) and request is not None:
        # Plain JSON even for a browser: the browsable API's page would read the store again.
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = "application/json"
    return Response(error_body(exc, request), status=int(exc.status_code), headers=exc.headers)


def _api_error_body(exc: exceptions.APIException) -> dict[str, Any]:
    detail, codes = exc.detail, exc.get_codes()
    if isinstance(detail, dict):
        errors = {str(name): _messages(value) for name, value in detail.items()}
        field = next(iter(errors), "")
        first = errors[field][0] if errors.get(field) else gettext("Invalid input.")
        shown = first if field in ("", "non_field_errors") else f"{field}: {first}"
        body: dict[str, Any] = {"detail": shown, "code": _first_code(codes), "field": field}
        body["errors"] = errors
        return body
    if isinstance(detail, list):
        messages = _messages(detail)
        shown = messages[0] if messages else gettext("Invalid input.")
        return {"detail": shown, "code": _first_code(codes)}
    return {"detail": str(detail), "code": _first_code(codes)}


def _messages(value: object) -> list[str]:
    """Every message under a (possibly nested) DRF error detail, as flat strings."""
    if isinstance(value, dict):
        return [m for key, sub in value.items() for m in _prefixed(key, _messages(sub))]
    if isinstance(value, list):
        return [m for item in value for m in _messages(item)]
    return [str(value)]


def _prefixed(key: object, messages: list[str]) -> list[str]:
    return [f"{key}: {m}" for m in messages] if isinstance(key, int) else messages


def _first_code(codes: object) -> str:
    if isinstance(codes, dict):
        return _first_code(next(iter(codes.values()), "invalid"))
    if isinstance(codes, list):
        return _first_code(codes[0]) if codes else "invalid"
    return str(codes)
