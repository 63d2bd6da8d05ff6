"""The OpenAPI schema and its interactive pages, with the app's own drf-spectacular
settings, so a host project needs no SPECTACULAR_SETTINGS of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpResponse
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.settings import patched_settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from articles.api.openapi_settings import SCHEMA_SETTINGS

_F = TypeVar("_F", bound=Callable[..., Any])


def documented(**kwargs: Any) -> Callable[[_F], _F]:
    """drf-spectacular's @extend_schema, based on its own AutoSchema whatever the host's
    DEFAULT_SCHEMA_CLASS (extend_schema takes that setting's class at import otherwise)."""

    def decorate(method: _F) -> _F:
        if not hasattr(method, "kwargs"):
            method.kwargs = {}  # type: ignore[attr-defined]
        method.kwargs.setdefault("schema", AutoSchema)  # type: ignore[attr-defined]
        return extend_schema(**kwargs)(method)

    return decorate


class SchemaView(SpectacularAPIView):
    schema = AutoSchema()  # drf-spectacular's, whatever the host's DEFAULT_SCHEMA_CLASS
    """The schema; `manage.py spectacular --custom-settings
    articles.api.schema.SCHEMA_SETTINGS` writes the same."""

    custom_settings = SCHEMA_SETTINGS

    @documented(exclude=True)  # the schema does not describe itself
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


def _page_options(view: APIView) -> HttpResponse:
    """OPTIONS on a docs page: its allowed methods and no body. DRF's own answer is the
    view's metadata, which the pages' HTML renderer has no template for (a 500)."""
    response = HttpResponse(status=200)
    response["Allow"] = ", ".join(view.allowed_methods)
    return response


class SwaggerView(SpectacularSwaggerView):
    schema = AutoSchema()  # drf-spectacular's, whatever the host's DEFAULT_SCHEMA_CLASS
    title = str(SCHEMA_SETTINGS["TITLE"])

    @documented(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with patched_settings(SCHEMA_SETTINGS):
            return super().get(request, *args, **kwargs)

    def options(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:  # type: ignore[override]  # a plain response: no renderer
        return _page_options(self)


class RedocView(SpectacularRedocView):
    schema = AutoSchema()  # drf-spectacular's, whatever the host's DEFAULT_SCHEMA_CLASS
    title = str(SCHEMA_SETTINGS["TITLE"])

    @documented(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with patched_settings(SCHEMA_SETTINGS):
            return super().get(request, *args, **kwargs)

    def options(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:  # type: ignore[override]  # a plain response: no renderer
        return _page_options(self)
