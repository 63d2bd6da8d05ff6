"""The OpenAPI schema and its interactive pages, with the app's own drf-spectacular
settings, so a host project needs no SPECTACULAR_SETTINGS of its own."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from django.core.signals import setting_changed
from django.dispatch import receiver
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
    """The schema, as `manage.py spectacular` writes it (the host's SPECTACULAR_SETTINGS
    may be SCHEMA_SETTINGS). Generated once per process and URL: it depends only on the
    code and the URLconf, and generating it takes over a second."""

    schema = AutoSchema()  # drf-spectacular's, whatever the host's DEFAULT_SCHEMA_CLASS
    custom_settings = SCHEMA_SETTINGS
    _generated: ClassVar[dict[str, tuple[Any, str]]] = {}

    @documented(exclude=True)  # the schema does not describe itself
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def _get_schema_response(self, request: Request) -> Response:
        key = f"{request.path}|{self.urlconf}"
        if key not in self._generated:
            fresh = super()._get_schema_response(request)
            self._generated[key] = (fresh.data, fresh["Content-Disposition"])
        data, disposition = self._generated[key]
        return Response(data=data, headers={"Content-Disposition": disposition})


@receiver(setting_changed)
def _forget_schemas(**kwargs: Any) -> None:
    SchemaView._generated.clear()  # tests switch URLconfs and settings


def _page_options(view: APIView) -> HttpResponse:
    """OPTIONS on a docs page: its allowed methods and no body. DRF's own answer is the
    view's metadata, which the pages' HTML renderer has no template for (a 500)."""
    response = HttpResponse(status=200)
    response["Allow"] = ", ".join(view.allowed_methods)
    return response


# What the docs pages need beyond a strict Content-Security-Policy (django-csp, when the host
# runs it, adds this to the policy of a response that carries it): Swagger UI's set-up is an
# inline script, both pages have inline styles, Swagger's icons are data: images, and Redoc
# runs its search in a blob: worker. Every script file still comes from the site itself.
DOCS_CSP = {
    "script-src": ["'unsafe-inline'"],
    "style-src": ["'unsafe-inline'"],
    "img-src": ["data:"],
    "worker-src": ["blob:"],
}


class _DocsPage(APIView):
    """A docs page: the app's schema settings, the page's own CSP additions, and OPTIONS
    answered by its allowed methods."""

    schema = AutoSchema()  # drf-spectacular's, whatever the host's DEFAULT_SCHEMA_CLASS

    @documented(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        with patched_settings(SCHEMA_SETTINGS):
            response: Response = super().get(request, *args, **kwargs)  # type: ignore[misc]
        response._csp_update = DOCS_CSP  # type: ignore[attr-defined]  # django-csp reads it
        return response

    def options(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:  # type: ignore[override]  # a plain response: no renderer
        return _page_options(self)


class SwaggerView(_DocsPage, SpectacularSwaggerView):
    title = str(SCHEMA_SETTINGS["TITLE"])
    # drf-spectacular's page, with lang="en" and colours that pass contrast (axe-core).
    template_name = "articles/api/swagger_ui.html"

    @documented(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response = super().get(request, *args, **kwargs)
        # drf-spectacular opens COOP up for OAuth2 pop-ups, which this API (tokens) has none of:
        # left to the host's policy (Django's SECURE_CROSS_ORIGIN_OPENER_POLICY).
        response.headers.pop("Cross-Origin-Opener-Policy", None)
        return response


class RedocView(_DocsPage, SpectacularRedocView):
    title = str(SCHEMA_SETTINGS["TITLE"])
    # drf-spectacular's page, with lang="en" and no fonts fetched from another site.
    template_name = "articles/api/redoc.html"


# --- answers every operation can give, declared once -------------------------------------

_RATE_LIMIT = {
    "RateLimit-Limit": "Requests allowed in the tightest window this request counted in.",
    "RateLimit-Remaining": "Requests left in that window.",
    "RateLimit-Reset": "Seconds until that window starts afresh.",
}
_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
_COMMON = {
    "401": "The token or session is not valid: a bad `Authorization` header is refused "
    "even where no login is needed.",
    "405": "This path does not answer this method; `Allow` lists those it does.",
    "406": "The Accept header asks for something other than JSON.",
}


def _header(kind: str, description: str, *, required: bool = False) -> dict[str, Any]:
    # Inline where `required` matters: next to a $ref it would be ignored (OpenAPI 3.0).
    return {"schema": {"type": kind}, "description": description, "required": required}


def declare_common_answers(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: the answers the API's base class gives to any
    operation (401 for a bad token wherever a token is read, 405, 406) and the headers it
    sends (RateLimit-* on any answer that counted, Retry-After on 429 and 503), which a
    generated client otherwise meets undeclared."""
    components = result.setdefault("components", {})
    components["headers"] = {
        name: _header("integer", description) for name, description in _RATE_LIMIT.items()
    }
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            responses = operation["responses"]
            reads_a_token = any(requirement for requirement in operation.get("security", []))
            for code, description in _COMMON.items():
                if code == "401" and not reads_a_token:
                    continue
                responses.setdefault(code, {"content": _ERROR, "description": description})
            responses["405"].setdefault("headers", {})["Allow"] = _header(
                "string", "The methods this path answers.", required=True
            )
            for code, response in responses.items():
                headers = response.setdefault("headers", {})
                if code in ("429", "503"):
                    # Always on 429; on 503 when waiting helps (not for bad data in the store).
                    headers["Retry-After"] = _header(
                        "integer", "Seconds to wait before trying again.", required=code == "429"
                    )
                for name in _RATE_LIMIT:
                    headers[name] = {"$ref": f"#/components/headers/{name}"}
            operation["responses"] = dict(sorted(responses.items()))
    return result


# --- the host's mount point: the words name the paths the schema lists ----------------------

# "/api/" where a text names an API path (the project's mount point, in which the texts are
# written), not inside another word or path ("/news-api/").
_WRITTEN_PREFIX = re.compile(r"(?<![\w/-])/api/")
_LOGIN_PATH = "auth/token/"


def _mounted(node: Any, prefix: str) -> Any:
    if isinstance(node, list):
        return [_mounted(item, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _WRITTEN_PREFIX.sub(prefix, value)
        if key in ("description", "summary") and isinstance(value, str)
        else _mounted(value, prefix)
        for key, value in node.items()
    }


def name_the_hosts_paths(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: the paths follow the URLconf (a host mounting the
    API at `news-api/` gets `/news-api/articles/`), but the descriptions were written with
    `/api/`; they name the host's prefix, taken from the token endpoint's path."""
    token_paths = [p for p in result.get("paths", {}) if p.endswith(f"/{_LOGIN_PATH}")]
    if len(token_paths) != 1:
        return result
    prefix = token_paths[0][: -len(_LOGIN_PATH)]
    return result if prefix == "/api/" else dict(_mounted(result, prefix))


# --- blank strings: one schema for a field that takes "" ---------------------------------

_BLANK = {"type": "string", "maxLength": 0}


def _takes_blank(schema: dict[str, Any]) -> bool:
    """Whether a string schema already takes "": no format (a validator may refuse "" as
    a URI or a date), no minLength, no enum, and a pattern (if any) that matches ""."""
    if schema.get("type") != "string" or schema.get("minLength", 0) > 0:
        return False
    if "format" in schema or "enum" in schema:
        return False
    pattern = schema.get("pattern")
    return pattern is None or re.search(pattern, "") is not None


def _exclusive_blank(node: Any) -> Any:
    if isinstance(node, list):
        return [_exclusive_blank(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _exclusive_blank(value) for key, value in node.items()}
    branches = node.get("oneOf")
    if isinstance(branches, list) and len(branches) == 2 and branches[1] == _BLANK:
        inner, outer = branches[0], {k: v for k, v in node.items() if k != "oneOf"}
        if _takes_blank(inner):
            return {**inner, **outer}
        node["oneOf"] = [{**inner, "minLength": max(inner.get("minLength", 0), 1)}, _BLANK]
    return node


def exclusive_blank_alternatives(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: a string field with a pattern that also takes
    "" (allow_blank) comes out as `oneOf: [its schema, {maxLength: 0}]`, where "" matches
    both branches and so fails the oneOf: validating clients refused what the server takes.
    One schema where its pattern already takes ""; otherwise branches made exclusive."""
    return dict(_exclusive_blank(result))
