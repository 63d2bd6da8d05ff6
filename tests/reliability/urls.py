"""A URL configuration for the outage tests: /healthz and a plain listing view and its
API twin, so the middleware's 503 can be checked before the real pages exist."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from articles.store import selectors
from articles.web.views import healthz


def listing(request: HttpRequest) -> JsonResponse:
    page = selectors.article_list(page=request.GET.get("page", "1"))
    return JsonResponse({"count": page.count, "ids": [a.id for a in page.items]})


urlpatterns = [
    path("healthz", healthz),
    path("listing", listing),
    # Under the API's app_name, as articles.api.urls is: its errors are JSON.
    path("api/", include(([path("listing", listing)], "api"))),
]
