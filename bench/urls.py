"""votesite's URLs plus the benchmark's bare view (not part of the product)."""

from django.http import HttpRequest, JsonResponse
from django.urls import path

from bench.baseline import FIXED
from votesite.urls import urlpatterns as site_urlpatterns


def fixed_json(request: HttpRequest) -> JsonResponse:
    """votesite's middleware on a view with no work behind it; the baseline (plain Django)
    serves the same body from a fresh project (bench/baseline.py)."""
    return JsonResponse(FIXED)


urlpatterns = [path("bench/fixed/", fixed_json, name="bench-fixed"), *site_urlpatterns]
