"""The site's own 404 page under DEBUG too (the quick start runs with DEBUG on)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import get_resolver, get_urlconf


class SiteNotFoundMiddleware:
    """Under DEBUG, Django answers an unknown URL with its technical 404, which lists every
    URL pattern of the project: a visitor of the quick start saw that instead of the site.
    This answers the project's own 404 (its handler404, as without DEBUG) there too: for a
    URL that resolves to no view, and for a view's Http404. Not used without DEBUG, where
    Django does so itself. It sits inside CommonMiddleware, whose APPEND_SLASH redirect
    still sees the 404."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not settings.DEBUG:
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == 404 and request.resolver_match is None:
            return site_not_found(request, Http404())  # the URL resolved to no view
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Http404):
            return site_not_found(request, exception)
        return None


def site_not_found(request: HttpRequest, exception: Http404) -> HttpResponse:
    """What the URLconf's handler404 answers (Django's page_not_found, the project's
    templates/404.html, unless the URLconf names another)."""
    handler = get_resolver(get_urlconf()).resolve_error_handler(404)
    response: HttpResponse = handler(request, exception)
    return response
