"""The one renderer of errors: an ArticlesError becomes JSON under the API (found by the
URLconf, wherever the host mounts it) or for a caller asking for JSON, else a page; and
the one classification of a dependency's failure (Redis, the database) as the error it
is answered with, for the pages, the API and the middleware alike."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.html import escape
from django.utils.translation import gettext
from django.views import defaults

from articles.errors import (
    ArticlesError,
    BadRequest,
    DatabaseUnavailable,
    DuplicateLink,
    StoreFull,
    StoreUnavailable,
)
from articles.http.database import database_unavailable
from articles.operations import metrics
from articles.store.connection import out_of_memory, store_unavailable
from articles.urlcache import url_for

logger = logging.getLogger(__name__)

# The app_name of articles.api.urls: every path under the API's prefix resolves into it
# (its last pattern answers any other path there with a JSON 404).
API_APP_NAME = "api"


PageRenderer = Callable[[HttpRequest, str, dict[str, Any], int], HttpResponse]


def _plain_page(
    request: HttpRequest, template: str, context: dict[str, Any], status: int
) -> HttpResponse:
    """The error page before the pages' engine has registered itself (a host that serves
    none of the app's pages): the message alone."""
    text = escape(str(context["message"]))
    return HttpResponse(f"<!doctype html><title>{status}</title><p>{text}</p>", status=status)


_page_renderer: PageRenderer = _plain_page


def register_page_renderer(renderer: PageRenderer) -> None:
    """Render error pages with `renderer` (articles.web.rendering registers its own on
    import): the plumbing shared by both front ends imports neither."""
    global _page_renderer
    _page_renderer = renderer


def is_api(request: HttpRequest) -> bool:
    """Is this request under the app's API, wherever the host mounted it?"""
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return False
    return API_APP_NAME in match.app_names


def wants_json(request: HttpRequest) -> bool:
    """The API, and the in-page scripts that ask for JSON; every other caller gets HTML."""
    return is_api(request) or "json" in request.headers.get("Accept", "")


def dependency_error(exc: BaseException) -> ArticlesError | None:
    """The 503 a dependency's failure is answered with (logged, as the text may name hosts),
    or None for any other exception. Redis at maxmemory refuses writes only: StoreFull
    (reads still work). Redis unreachable, or up but not taking writes (a replica after a
    failover, too few replicas): StoreUnavailable. Django's database down:
    DatabaseUnavailable (anonymous pages need none)."""
    error: ArticlesError
    if out_of_memory(exc):  # before store_unavailable: an OOM refusal is a write refusal
        error = StoreFull()
    elif store_unavailable(exc):
        error = StoreUnavailable()
    elif database_unavailable(exc):
        error = DatabaseUnavailable()
    else:
        return None
    logger.warning("%s: %s", error.code, exc)
    return error


def error_body(exc: ArticlesError, request: HttpRequest | None = None) -> dict[str, Any]:
    body = exc.body()
    if isinstance(exc, DuplicateLink):
        path = url_for("articles:article-detail", exc.article_id)
        body["article_url"] = request.build_absolute_uri(path) if request is not None else path
    return body


def error_response(request: HttpRequest, exc: ArticlesError) -> HttpResponse:
    """The error for this caller: JSON or a page, with its status and headers."""
    metrics.count_error(exc)
    response: HttpResponse
    if wants_json(request):
        response = JsonResponse(error_body(exc, request), status=exc.status_code)
    else:
        # A dependency down (Redis or the database): a page of its own that needs neither,
        # since error.html's layout reads the session's user.
        template = (
            "articles/unavailable.html"
            if isinstance(exc, StoreUnavailable | DatabaseUnavailable)
            else "articles/error.html"
        )
        context = {"error": exc, "status": exc.status_code, "field": getattr(exc, "field", None)}
        context["message"] = exc.message
        response = _page_renderer(request, template, context, exc.status_code)
    return answered_as(response, exc)


def answered_as(response: HttpResponse, exc: ArticlesError) -> HttpResponse:
    """`response` with the status and headers of `exc`: error_response()'s, or a page that
    shows the error its own way (a form shown again with it, the login page's lock)."""
    response.status_code = exc.status_code
    for name, value in exc.headers.items():
        response[name] = value
    return response


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400 (Django's answer to a disallowed Host or another suspicious request):
    JSON under the API, as every other API error; Django's own page elsewhere, since a
    page's layout would ask the request for its (disallowed) host again."""
    if not is_api(request):
        return defaults.bad_request(request, exception)
    served = isinstance(exception, DisallowedHost)
    message = gettext("This host is not served here.") if served else None
    return error_response(request, BadRequest(message))
