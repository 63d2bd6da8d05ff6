"""votesite's URLs plus the benchmark's bare view (not part of the product)."""

from django.http import HttpRequest, JsonResponse
from django.urls import path

from votesite.urls import urlpatterns as site_urlpatterns

FIXED = {"status": "ok", "items": [{"id": n, "title": "fixed"} for n in range(3)]}


def fixed_json(request: HttpRequest) -> JsonResponse:
    """The ceiling for HTTP: Django and gunicorn with no work behind the view."""
    return JsonResponse(FIXED)


urlpatterns = [path("bench/fixed/", fixed_json, name="bench-fixed"), *site_urlpatterns]
