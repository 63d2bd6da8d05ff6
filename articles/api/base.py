"""What every API view shares: the schema pieces of its documentation, the JSON parser,
the base viewset (authentication, rate limits, permissions by action), small helpers.

Cache (articles.caches): "api_queries", content-addressed, 1,024 query strings (64 KB of
their text) with the values their serializer checked them to."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import redis
from django.http import QueryDict
from django.utils.translation import gettext
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import exceptions, parsers, status, viewsets
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.schemas.inspectors import ViewInspector
from rest_framework.serializers import Serializer
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from articles import conf
from articles.api.errors import api_exception_handler
from articles.api.fields import GROUP_NAME_SCHEMA_PATTERN, REASON_SCHEMA
from articles.api.renderers import fast_renderers
from articles.api.serializers import (
    ErrorSerializer,
    article_data,
    page_data,
)
from articles.api.tokens import CachedTokenAuthentication, check_in_handler
from articles.caches import Cache, Kind
from articles.errors import ArticlesError
from articles.store import ratelimits
from articles.types import Actor, Article, Page

# --- schema pieces -------------------------------------------------------------------------

_ERRORS = {
    400: "Invalid input; `field` names the field at fault.",
    401: "Not logged in: send `Authorization: Token <token>` or log in.",
    403: "Logged in, but not allowed to do this.",
    404: "No such article, group or user.",
    409: "Conflict with the store's state (see `code`).",
    410: "Staff removed the article (`article_removed`): `removed_at` and `reason` say when "
    "and why, as the moderation log does.",
    415: "The body is not JSON (send `Content-Type: application/json`).",
    422: "The Idempotency-Key was already used for a different request "
    "(`idempotency_key_reused`, with the `article_id` it made): use a new key.",
    429: "Too many requests: see the Retry-After and RateLimit-* headers.",
    503: "The article store (Redis) or the account database is unreachable, the store is "
    "full and takes no writes (`store_full`), or it holds bad data (`store_corrupt`, `key` "
    "names it); `code` says which. Retry after Retry-After seconds.",
}


def _errors(*statuses: int, described: dict[int, str] | None = None) -> dict[int, OpenApiResponse]:
    """Error responses of an operation; every operation can also answer 429 and 503.
    `described`: what a collection says of a status beyond _ERRORS (the comments')."""
    descriptions = {**_ERRORS, **(described or {})}
    return {
        code: OpenApiResponse(ErrorSerializer, description=descriptions[code])
        for code in sorted({*statuses, 429, 503})
    }


# --- what each operation's description says (for API users; docstrings are for developers) -

_WHO = {
    "anyone": "**Who:** anyone; no login needed. A logged-in caller also gets their own vote "
    "on each article (`my_vote`).",
    "anyone-plain": "**Who:** anyone; no login needed.",
    "member": "**Who:** a logged-in user: send `Authorization: Token <token>` (see "
    "`/api/auth/token/`), or use the site's session with its CSRF token. Without one: 401.",
    "staff": "**Who:** staff only: 401 without a login, 403 for a user who is not staff.",
    "poster": "**Who:** staff, or the article's poster while voting is open: 401 without a "
    "login, 403 for anyone else.",
}
# Who a limit counts: "caller" is the user, or the client address before a login is checked.
_BY = {"address": "client address", "user": "user", "caller": "user"}
_PERIODS = {60: "a minute", 600: "every 10 minutes", 3600: "an hour"}


def _limits(*actions: str) -> str:
    """The rate limits an operation counts in, with their default figures (ratelimits.py)."""
    parts = []
    for name in actions:
        rule = ratelimits.DEFAULT_RULES[name]
        period = _PERIODS.get(rule.period, f"per {rule.period} s")
        parts.append(f"{rule.limit} {rule.noun} {period} per {_BY[rule.by]}")
    return (
        f"**Rate limits** (defaults; the site may set others): {'; '.join(parts)}. Past one: "
        "429, with Retry-After; every answer that counted carries RateLimit-* headers."
    )


_READ = ("api", "api_user")
_WRITE = ("api", "api_user", "api_write")


def _about(what: str, who: str, limits: tuple[str, ...], errors: str = "") -> str:
    """An operation's description: what it does, who may call it, its rate limits and the
    errors its own (beyond those every operation can give: 429, 503)."""
    return "\n\n".join(
        part
        for part in (what, _WHO[who], _limits(*limits), errors and f"**Errors:** {errors}")
        if part
    )


PAGE = OpenApiParameter(
    "page",
    {"type": "integer", "minimum": 1, "maximum": conf.max_page()},
    description="Page number, from 1; a page past the end is empty.",
)
ORDER = OpenApiParameter("order", str, enum=["score", "time"], default="score")
PERIOD = OpenApiParameter(
    "period", str, enum=["day", "week", "month", "year", "all"], default="all"
)
DATE = OpenApiParameter(
    "date", OpenApiTypes.DATE, description="A UTC day: that day's good articles, paginated."
)
REASON = OpenApiParameter(
    "reason", REASON_SCHEMA, description="Why (kept in the public moderation log)."
)
ARTICLE_ID = OpenApiParameter(
    "id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="Article id."
)
GROUP_NAME = OpenApiParameter(
    "name", {"type": "string", "pattern": GROUP_NAME_SCHEMA_PATTERN}, OpenApiParameter.PATH
)
USERNAME = OpenApiParameter(
    "username", {"type": "string", "pattern": r"^[\w.@+-]{1,150}$"}, OpenApiParameter.PATH
)
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,128}$"},
    OpenApiParameter.HEADER,
    description="A retry with the same key and the same body gets what the first request "
    "got (201, the article as it was created, even if since deleted or past the posting "
    "limit) instead of posting it twice; the same key with a different body is a 422 "
    "(`idempotency_key_reused`). Kept for 24 hours, per user.",
)
LOCATION = OpenApiParameter(
    "Location",
    OpenApiTypes.URI,
    OpenApiParameter.HEADER,
    required=True,
    description="The new article in the API (its `url`).",
    response=[201],
)


# --- the base of every API view ------------------------------------------------------------


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser; a body nested too deeply for Python's json module (RecursionError,
    which DRF lets through as a 500) is a 400 like any other malformed JSON, and so is a
    lone surrogate escape ("\\ud800"), which is no text: echoed in an error message or
    sent to Redis it could not be encoded as UTF-8 (a 500)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(gettext("JSON parse error - nested too deeply.")) from None
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise exceptions.ParseError(
                gettext("JSON parse error - a string holds a lone surrogate (\\ud800-\\udfff).")
            ) from None
        return data


# ApiMixin goes on DRF views: the type checker sees the view it goes on.
if TYPE_CHECKING:
    from rest_framework.permissions import _SupportsHasPermission

    _View = APIView
else:
    _View = object


JSON_MEDIA_TYPE = "application/json"
# Accept headers DRF's negotiation answers with the first renderer (JSON) as JSON
PLAIN_ACCEPT = frozenset({None, "*/*", JSON_MEDIA_TYPE})


class ApiMixin(_View):
    """Token auth first (so a missing login is a 401 with WWW-Authenticate), the API's
    exception handler, and the rate limits with their RateLimit-* headers."""

    authentication_classes: Sequence[type[BaseAuthentication]] = [
        CachedTokenAuthentication,
        SessionAuthentication,
    ]
    # action -> the limits its handler counts, counted with the API's own windows in the
    # same round trip when the caller is logged in (the handler's check() then skips them)
    folded_limits: dict[str, tuple[str, ...]] = {}
    # actions whose handler counts the limits (deferred: ratelimits.defer) and reads a kept
    # token's credential epoch (api.tokens.check_in_handler) in its own script: http.guarded
    guarded_actions: frozenset[str] = frozenset()
    # drf-spectacular's AutoSchema, whatever the host's DEFAULT_SCHEMA_CLASS
    schema: ViewInspector | None = AutoSchema()

    def get_exception_handler(self) -> Any:
        return api_exception_handler

    def get_renderers(self) -> list[Any]:
        return fast_renderers(super().get_renderers())

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        """DRF's choice, made without its negotiation where the answer is plain: JSON
        asked for (or anything, or no Accept), no `?format=`, JSON the first renderer.
        DRF answers the same there: the first renderer, as "application/json"."""
        renderers = self.get_renderers()
        if (
            renderers
            and renderers[0].media_type == JSON_MEDIA_TYPE
            and request.META.get("HTTP_ACCEPT") in PLAIN_ACCEPT
            and self.content_negotiation_class is DefaultContentNegotiation
            and self.format_kwarg is None
            and api_settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], JSON_MEDIA_TYPE
        return super().perform_content_negotiation(request, force)

    def perform_authentication(self, request: Request) -> None:
        action = getattr(self, "action", None) or ""
        guarded = action in self.guarded_actions
        if guarded:
            check_in_handler(request)
        try:
            super().perform_authentication(request)
        except exceptions.AuthenticationFailed:
            # A bad token counts against its address, so guessing tokens meets the 429.
            ratelimits.check(request, "api")
            raise
        folded = self.folded_limits.get(action, ())
        if not request.user.is_authenticated:
            folded = ()
        if (guarded and request.user.is_authenticated) or _rides(self, action):
            ratelimits.defer(request, *_api_actions(request), *folded)
        else:
            ratelimits.check(request, *_api_actions(request), *folded)

    def handle_exception(self, exc: Exception) -> Any:
        # Limits deferred to a handler that failed before its script (a 400): counted now,
        # as check() would have counted them first; past one, its 429 answers instead.
        try:
            ratelimits.count_deferred(self.request)
        except (ArticlesError, redis.RedisError) as error:
            exc = error
        return super().handle_exception(exc)

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        for name, value in ratelimits.headers(request).items():
            response[name] = value
        return response


_Handler = TypeVar("_Handler", bound=Callable[..., Any])
_RIDES = "rides_on_rows"


def rides_on_rows(handler: _Handler) -> _Handler:
    """A listing handler whose rate limits ride on the store's read of its page's rows, a
    round trip it makes anyway: ApiMixin defers them for it, and its body runs inside
    ratelimits.riding(). One mark does both, so no listing defers a count nobody takes."""

    @functools.wraps(handler)
    def riding(view: Any, request: Request, *args: Any, **kwargs: Any) -> Any:
        with ratelimits.riding(request):
            return handler(view, request, *args, **kwargs)

    setattr(riding, _RIDES, True)
    return cast(_Handler, riding)


def _rides(view: Any, action: str) -> bool:
    """Whether the view's handler for `action` is marked @rides_on_rows."""
    return getattr(getattr(view, action, None), _RIDES, False) is True


class ApiViewSet(ApiMixin, viewsets.ViewSet):
    permission_classes = [AllowAny]
    parser_classes = [JSONParser]  # bodies are JSON; the browsable API posts raw JSON too
    # action -> permission classes; actions not named here are open to everyone.
    action_permissions: dict[str, list[type[BasePermission]]] = {}

    def get_permissions(self) -> Sequence[_SupportsHasPermission]:
        classes = self.action_permissions.get(self.action or "", self.permission_classes)
        return [permission() for permission in classes]


_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _api_actions(request: Request) -> tuple[str, ...]:
    """The windows every API request counts in: its address, its user, and writes."""
    return ("api", "api_user", "api_write") if request.method in _WRITES else ("api", "api_user")


# Content-addressed: a query string's values are its serializer's pure function (and the
# settings', which empty every cache). A listing's few query strings repeat; a serializer
# run each time (its fields deep-copied, each field's validation) was a tenth of a page.
MAX_QUERIES = 1024
MAX_QUERY_BYTES = 64 * 1024
_queries: Cache[tuple[Any, ...], dict[str, Any]] = Cache(
    "api_queries", Kind.CONTENT, entries=MAX_QUERIES, max_bytes=MAX_QUERY_BYTES
)


def _valid(serializer_class: type[Serializer], data: Any) -> dict[str, Any]:
    """`data` as `serializer_class` validates it, or its ValidationError (a 400). A query
    string's (a QueryDict's) values are kept: only those that validate, so every error
    is the serializer's own, in the request's language."""
    if not isinstance(data, QueryDict):
        return _validated(serializer_class, data)
    query = tuple((name, *values) for name, values in data.lists())
    key = (serializer_class, *query)
    kept = _queries.get(key)
    if kept is None:
        kept = _validated(serializer_class, data)
        _queries.put(key, kept, size=sum(len(part) for row in query for part in row))
    return dict(kept)


def _validated(serializer_class: type[Serializer], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _viewer(request: Request) -> int | None:
    return request.user.pk if request.user.is_authenticated else None


def _actor(request: Request) -> Actor:
    return Actor.of(request.user)


def _article(article: Article, request: Request, code: int = status.HTTP_200_OK) -> Response:
    return Response(article_data(article, request), status=code)


def _page(page: Page, request: Request) -> Response:
    return Response(page_data(page, request))
