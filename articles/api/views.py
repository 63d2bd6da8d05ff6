"""The REST API: thin viewsets over the same services and selectors the pages use."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import exceptions, parsers, status, viewsets
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.parsers import FormParser
from rest_framework.permissions import AllowAny, BasePermission, IsAdminUser, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.schemas.inspectors import ViewInspector
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from articles import conf, validation
from articles.api import tokens
from articles.api.errors import api_exception_handler
from articles.api.renderers import fast_renderers
from articles.api.schema import documented
from articles.api.serializers import (
    GROUP_NAME_SCHEMA_PATTERN,
    ArticleCreateSerializer,
    ArticleEditSerializer,
    ArticleGroupsSerializer,
    ArticlePageSerializer,
    ArticleSerializer,
    ErrorSerializer,
    GoodQuerySerializer,
    GroupCreateSerializer,
    GroupSerializer,
    GroupsUpdateSerializer,
    GroupUpdateSerializer,
    ListQuerySerializer,
    ModlogEntrySerializer,
    ModlogPageSerializer,
    PageQuerySerializer,
    ReasonQuerySerializer,
    SearchPageSerializer,
    SearchQuerySerializer,
    StatsQuerySerializer,
    StatsSerializer,
    TokenRequestSerializer,
    TokenSerializer,
    TopQuerySerializer,
    VoteSerializer,
    article_data,
    article_url,
    page_data,
    paged,
    search_page_data,
)
from articles.api.tokens import CachedTokenAuthentication
from articles.http.addresses import user_pk
from articles.store import logins, ratelimits, selectors, services
from articles.types import Actor, Article, NewPost, Page, SearchOrder

# --- schema pieces -------------------------------------------------------------------------

_ERRORS = {
    400: "Invalid input; `field` names the field at fault.",
    401: "Not logged in: send `Authorization: Token <token>` or log in.",
    403: "Logged in, but not allowed to do this.",
    404: "No such article, group or user.",
    409: "Conflict with the store's state (see `code`).",
    415: "The body is not JSON (send `Content-Type: application/json`).",
    422: "The Idempotency-Key was already used for a different request "
    "(`idempotency_key_reused`, with the `article_id` it made): use a new key.",
    429: "Too many requests: see the Retry-After and RateLimit-* headers.",
    503: "The article store (Redis) or the account database is unreachable, the store is "
    "full and takes no writes (`store_full`), or it holds bad data (`store_corrupt`, `key` "
    "names it); `code` says which. Retry after Retry-After seconds.",
}


def _errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error responses of an operation; every operation can also answer 429 and 503."""
    return {
        code: OpenApiResponse(ErrorSerializer, description=_ERRORS[code])
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
REASON = OpenApiParameter("reason", str, description="Why (kept in the public moderation log).")
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
    description="The new article's URL.",
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
            raise exceptions.ParseError("JSON parse error - nested too deeply.") from None
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise exceptions.ParseError(
                "JSON parse error - a string holds a lone surrogate (\\ud800-\\udfff)."
            ) from None
        return data


# ApiMixin goes on DRF views: the type checker sees the view it goes on.
if TYPE_CHECKING:
    from rest_framework.permissions import _SupportsHasPermission

    _View = APIView
else:
    _View = object


class ApiMixin(_View):
    """Token auth first (so a missing login is a 401 with WWW-Authenticate), the API's
    exception handler, and the rate limits with their RateLimit-* headers."""

    authentication_classes: Sequence[type[BaseAuthentication]] = [
        CachedTokenAuthentication,
        SessionAuthentication,
    ]
    # action -> the limits its handler counts, counted with the API's own windows in the
    # same round trip when the caller is logged in (the handler's consume() then skips them)
    folded_limits: dict[str, tuple[str, ...]] = {}
    # drf-spectacular's AutoSchema, whatever the host's DEFAULT_SCHEMA_CLASS
    schema: ViewInspector | None = AutoSchema()

    def get_exception_handler(self) -> Any:
        return api_exception_handler

    def get_renderers(self) -> list[Any]:
        return fast_renderers(super().get_renderers())

    def perform_authentication(self, request: Request) -> None:
        try:
            super().perform_authentication(request)
        except exceptions.AuthenticationFailed:
            # A bad token counts against its address, so guessing tokens meets the 429.
            ratelimits.consume(request, "api")
            raise
        folded = self.folded_limits.get(getattr(self, "action", None) or "", ())
        if not request.user.is_authenticated:
            folded = ()
        ratelimits.consume(request, *_api_actions(request), *folded)

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        state = getattr(request, "rate_limit", None)
        if state is not None:
            for name, value in ratelimits.headers(state).items():
                response[name] = value
        return response


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


def _valid(serializer_class: type[Serializer], data: Any) -> dict[str, Any]:
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


# --- articles ------------------------------------------------------------------------------

EDIT_DESCRIPTION = (
    "Staff may change the title, link and text of any article, at any time; the change and "
    "its `reason` go to the public moderation log. An article's poster may change its title "
    "and text while voting is open, unlogged; 403 after voting closes, or for a changed "
    "link. The search index follows the new words and `edited_at` the time. 400 when the "
    "article would be left with neither link nor text; 409 (`duplicate_link`, with "
    "`article_id`) when another article still open for voting has the new link."
)


class ArticleViewSet(ApiViewSet):
    lookup_field = "id"
    lookup_value_regex = r"[0-9]{1,18}"
    folded_limits = {"vote": ("vote",)}  # a vote: one round trip of limits, one of the vote
    action_permissions = {
        "create": [IsAuthenticated],
        "destroy": [IsAuthenticated],
        "vote": [IsAuthenticated],
        "update": [IsAuthenticated],  # staff, or the poster while voting is open
        "partial_update": [IsAuthenticated],
        "groups": [IsAuthenticated],  # staff only: the service decides
    }

    @documented(
        summary="List articles by score or by time",
        description=_about(
            f"Articles, {conf.DEFAULTS['PER_PAGE']} a page by default, ranked by `order`: "
            "`score` (the front page's ranking: newer articles rank higher, and each net vote, "
            f"up minus down, counts as {conf.DEFAULTS['VOTE_SCORE']} seconds of newness) or "
            "`time` (newest first). Deleted articles are left out; a page past the end is empty.",
            "anyone",
            _READ,
            "400 for an unknown `order` or a bad `page` (`field` names it).",
        ),
        parameters=[ORDER, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400)},
    )
    def list(self, request: Request) -> Response:
        query = _valid(ListQuerySerializer, request.query_params)
        page = selectors.article_list(
            order=query["order"], page=query["page"], user_id=_viewer(request)
        )
        return _page(page, request)

    @documented(
        summary="Post an article (counts the poster's own up-vote)",
        parameters=[IDEMPOTENCY_KEY, LOCATION],
        request=ArticleCreateSerializer,
        responses={201: ArticleSerializer, **_errors(400, 401, 403, 404, 409, 415, 422)},
        description=_about(
            "Posts an article: a title, and a link or a text (or both), in any groups that "
            "exist. The poster's own up-vote counts from the start, and voting is open for a "
            "week. Answers 201 with the article, and its URL in `Location`. With an "
            "`Idempotency-Key`, a retry cannot post it twice.",
            "member",
            (*_WRITE, "post"),
            "400 for a missing or bad field (`field` names it); 404 (`group_not_found`) when a "
            "named group does not exist; 409 (`duplicate_link`, with `article_id`) when the "
            "link was already posted and is still open for voting; 422 "
            "(`idempotency_key_reused`) when the key came with another body. The posting limit "
            "is shared with the web pages.",
        ),
    )
    def create(self, request: Request) -> Response:
        data = _valid(ArticleCreateSerializer, request.data)
        article = services.article_submit(
            NewPost.by(_actor(request), data),
            idempotency_key=request.headers.get("Idempotency-Key"),
            limit=lambda: ratelimits.consume(request, "post"),
        )
        assert article is not None  # consume() raises, never answers False
        response = _article(article, request, status.HTTP_201_CREATED)
        response["Location"] = article_url(article.id, request)
        return response

    @documented(
        summary="One article",
        description=_about(
            "One article: its title, link and text, votes, score, groups, and when its voting "
            "closes.",
            "anyone",
            _READ,
            "404 (`article_not_found`) when there is no such article, or it was deleted.",
        ),
        parameters=[ARTICLE_ID],
        responses={200: ArticleSerializer, **_errors(404)},
    )
    def retrieve(self, request: Request, id: str) -> Response:
        return _article(
            selectors.article_get(article_id=int(id), user_id=_viewer(request)), request
        )

    @documented(
        summary="Edit an article (staff, or its poster while voting is open)",
        parameters=[ARTICLE_ID],
        request=ArticleEditSerializer,
        responses={200: ArticleSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            EDIT_DESCRIPTION + " PUT sends the title and link (the text may be left out: it "
            "stays as it is).",
            "poster",
            _WRITE,
        ),
    )
    def update(self, request: Request, id: str) -> Response:
        return self._edit(request, id, partial=False)

    @documented(
        summary="Edit some of an article's fields (staff, or its poster while voting is open)",
        parameters=[ARTICLE_ID],
        request=ArticleEditSerializer,
        responses={200: ArticleSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            EDIT_DESCRIPTION + " PATCH sends only the fields to change.", "poster", _WRITE
        ),
    )
    def partial_update(self, request: Request, id: str) -> Response:
        return self._edit(request, id, partial=True)

    def _edit(self, request: Request, id: str, *, partial: bool) -> Response:
        serializer = ArticleEditSerializer(data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        article = services.article_edit(
            article_id=int(id),
            title=data.get("title"),
            link=data.get("link"),
            text=data.get("text"),
            actor=_actor(request),
            reason=data.get("reason", ""),
        )
        return _article(article, request)

    @documented(
        summary="Delete an article (staff, or its poster while voting is open)",
        description=_about(
            "Deletes an article: it leaves every list, group and search. Staff may delete any "
            "article, kept in the public moderation log; deleting someone else's takes a "
            "`reason` (shown there). Its poster may delete their own, with no reason, while its "
            "voting is open. Answers 204, no body.",
            "member",
            _WRITE,
            "400 (field `reason`) for staff deleting someone else's article with no reason, or "
            "one too long; 403 (`not_allowed`) for someone else's article (not staff), or the "
            "poster's own once its voting has closed; 404 (`article_not_found`).",
        ),
        parameters=[ARTICLE_ID, REASON],
        responses={204: None, **_errors(400, 401, 403, 404)},
    )
    def destroy(self, request: Request, id: str) -> Response:
        query = _valid(ReasonQuerySerializer, request.query_params)
        services.article_delete(article_id=int(id), actor=_actor(request), reason=query["reason"])
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Set your vote: up, down or none (repeating it changes nothing)",
        parameters=[ARTICLE_ID],
        request=VoteSerializer,
        responses={200: ArticleSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            "Sets your vote on an article: `up`, `down`, or `none` to take it back. Setting the "
            "vote you already have changes nothing, so a retry is safe. Answers the article "
            "with its new counts and score.",
            "member",
            (*_WRITE, "vote"),
            "400 for a `value` other than `up`, `down` or `none`; 404 (`article_not_found`); "
            "409 (`voting_closed`) once the article's one-week voting window is over.",
        ),
    )
    @action(detail=True, methods=["put"])
    def vote(self, request: Request, id: str) -> Response:
        data = _valid(VoteSerializer, request.data)
        ratelimits.consume(request, "vote")
        article = services.article_vote(
            article_id=int(id), user_id=user_pk(request), direction=data["value"]
        )
        return _article(article, request)

    @documented(
        summary="Staff: add the article to groups and remove it from others, in one step",
        description=_about(
            "Adds the article to the groups named in `add` and removes it from those in "
            "`remove`, in one step; answers the groups it is in afterwards. Kept in the "
            "moderation log with the `reason`.",
            "staff",
            _WRITE,
            "400 for a bad group name, or one both added and removed; 404 "
            "(`article_not_found`, or `group_not_found` for a group to add).",
        ),
        parameters=[ARTICLE_ID],
        request=GroupsUpdateSerializer,
        responses={200: ArticleGroupsSerializer, **_errors(400, 401, 403, 404, 415)},
    )
    @action(detail=True, methods=["post"])
    def groups(self, request: Request, id: str) -> Response:
        data = _valid(GroupsUpdateSerializer, request.data)
        groups = services.article_groups_update(
            article_id=int(id),
            add=data["add"],
            remove=data["remove"],
            actor=_actor(request),
            reason=data["reason"],
        )
        return Response({"groups": list(groups)})

    @documented(
        summary=f"Good articles (at least {conf.DEFAULTS['GOOD_ARTICLE_VOTES']} up-votes): the "
        f"newest {conf.DEFAULTS['HOME_GOOD_ARTICLES']}, or one day's",
        description=_about(
            f"Good articles: those with at least {conf.DEFAULTS['GOOD_ARTICLE_VOTES']} up-votes "
            "(by default). Without `date`: the newest "
            f"{conf.DEFAULTS['HOME_GOOD_ARTICLES']}, on one page (a later page is empty). With "
            "`date`: those posted on that UTC day, page by page.",
            "anyone",
            _READ,
            "400 for a bad `date` (YYYY-MM-DD) or `page` (`field` names it).",
        ),
        parameters=[DATE, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400)},
    )
    @action(detail=False, methods=["get"])
    def good(self, request: Request) -> Response:
        query = _valid(GoodQuerySerializer, request.query_params)
        if "date" in query:
            page = selectors.good_article_day(
                day=query["date"], page=query["page"], user_id=_viewer(request)
            )
            return _page(page, request)
        # The newest good articles are one page; a later page is empty, as past any end.
        page = selectors.good_article_page(
            page=query["page"], per_page=conf.home_good(), user_id=_viewer(request)
        )
        return _page(page, request)

    @documented(
        summary="Search articles by words",
        parameters=[
            OpenApiParameter(
                "q",
                {"type": "string", "minLength": 1, "maxLength": 400},
                required=True,
                description="Words, all of which must match; `-word` leaves out articles "
                "with that word. At most 8 words. Case and accents do not matter; very "
                "short and very common words are not indexed.",
            ),
            OpenApiParameter(
                "order",
                str,
                enum=[o.value for o in SearchOrder],
                default="score",
                description="`votes`: by net votes (up - down).",
            ),
            PERIOD,
            OpenApiParameter(
                "group", {"type": "string", "pattern": GROUP_NAME_SCHEMA_PATTERN}, required=False
            ),
            PAGE,
        ],
        responses={200: SearchPageSerializer, **_errors(400)},
        description=_about(
            "Articles whose title or text has every word of `q` (`-word` leaves out those "
            "with it), in one `group` and `period` if given, ranked by `order`. Results are "
            f"cached for a short time ({conf.DEFAULTS['SEARCH_CACHE_SECONDS']} s by default), so "
            "a new article or vote can take that long to show.",
            "anyone",
            _READ,
            "400 (`empty_search`, field `q`) when the query has no word to look for; 400 "
            "(`invalid`, field `q`) when it is longer than 400 characters or names more than 8 "
            "words; 400 for a bad `order`, `period`, `group` or `page` (`field` names it).",
        ),
    )
    @action(detail=False, methods=["get"])
    def search(self, request: Request) -> Response:
        query = _valid(SearchQuerySerializer, request.query_params)
        page = selectors.article_search(
            q=query["q"],
            order=query["order"],
            group=query["group"] or None,
            period=query["period"],
            page=query["page"],
            user_id=_viewer(request),
        )
        return Response(search_page_data(page, request))

    @documented(
        summary="Top articles of the last day, week, month, year or of all time",
        description=_about(
            "Articles ranked by net votes (up-votes minus down-votes), most first: of all "
            "articles (`period=all`, the default), or of those posted in the last day, "
            "week, month or year (those rankings are recomputed at most once a minute). "
            "For the time-decayed ranking of the front page, list articles with "
            "`order=score`.",
            "anyone",
            _READ,
            "400 for an unknown `period` or a bad `page` (`field` names it).",
        ),
        parameters=[PERIOD, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400)},
    )
    @action(detail=False, methods=["get"])
    def top(self, request: Request) -> Response:
        query = _valid(TopQuerySerializer, request.query_params)
        page = selectors.top_article_list(
            period=query["period"], page=query["page"], user_id=_viewer(request)
        )
        return _page(page, request)


# --- groups --------------------------------------------------------------------------------


class GroupViewSet(ApiViewSet):
    lookup_field = "name"
    lookup_value_regex = validation.GROUP_NAME_PATTERN
    # Staff only: the services decide (NotAllowed, a 403); the API asks for a login.
    action_permissions = {
        "create": [IsAuthenticated],
        "partial_update": [IsAuthenticated],
        "destroy": [IsAuthenticated],
    }

    @documented(
        summary="Every group, by name",
        description=_about(
            "Every group, by name, with its description and how many articles it holds (`size`).",
            "anyone-plain",
            _READ,
        ),
        responses={200: GroupSerializer(many=True), **_errors()},
    )
    def list(self, request: Request) -> Response:
        return Response([GroupSerializer.of(group) for group in selectors.group_list()])

    @documented(
        summary="Staff: create a group",
        description=_about(
            "Creates a group: a name (1-64 characters of a-z, 0-9 and '-') and a description; "
            "kept in the moderation log. Answers 201 with the group.",
            "staff",
            _WRITE,
            "400 for a bad name or description (`field` names it); 409 (`group_exists`) when "
            "the name is taken.",
        ),
        request=GroupCreateSerializer,
        responses={201: GroupSerializer, **_errors(400, 401, 403, 409, 415)},
    )
    def create(self, request: Request) -> Response:
        data = _valid(GroupCreateSerializer, request.data)
        services.group_create(
            name=data["name"], description=data["description"], actor=_actor(request)
        )
        group = selectors.group_get(name=data["name"])
        return Response(GroupSerializer.of(group), status=status.HTTP_201_CREATED)

    @documented(
        summary="One group",
        description=_about(
            "One group: its name, description and how many articles it holds (`size`).",
            "anyone-plain",
            _READ,
            "404 (`group_not_found`).",
        ),
        parameters=[GROUP_NAME],
        responses={200: GroupSerializer, **_errors(404)},
    )
    def retrieve(self, request: Request, name: str) -> Response:
        return Response(GroupSerializer.of(selectors.group_get(name=name)))

    @documented(
        summary="Staff: change a group's description",
        description=_about(
            "Changes a group's description (its name stays); kept in the moderation log. A "
            "body without `description` changes nothing.",
            "staff",
            _WRITE,
            "400 for a bad description; 404 (`group_not_found`).",
        ),
        parameters=[GROUP_NAME],
        request=GroupUpdateSerializer,
        responses={200: GroupSerializer, **_errors(400, 401, 403, 404, 415)},
    )
    def partial_update(self, request: Request, name: str) -> Response:
        data = _valid(GroupUpdateSerializer, request.data)
        if "description" in data:
            services.group_update(name=name, description=data["description"], actor=_actor(request))
        return Response(GroupSerializer.of(selectors.group_get(name=name)))

    @documented(
        summary="Staff: delete a group (its articles stay, outside it)",
        description=_about(
            "Deletes a group; its articles stay, outside it. Kept in the moderation log with "
            "the `reason`. Answers 204, no body.",
            "staff",
            _WRITE,
            "400 for a bad `reason`; 404 (`group_not_found`).",
        ),
        parameters=[GROUP_NAME, REASON],
        responses={204: None, **_errors(400, 401, 403, 404)},
    )
    def destroy(self, request: Request, name: str) -> Response:
        query = _valid(ReasonQuerySerializer, request.query_params)
        services.group_delete(name=name, actor=_actor(request), reason=query["reason"])
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="A group's articles by score or by time",
        description=_about(
            "A group's articles, page by page, ranked by `order` as in the list of all articles.",
            "anyone",
            _READ,
            "400 for a bad `order` or `page`; 404 (`group_not_found`).",
        ),
        parameters=[GROUP_NAME, ORDER, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400, 404)},
    )
    @action(detail=True, methods=["get"])
    def articles(self, request: Request, name: str) -> Response:
        query = _valid(ListQuerySerializer, request.query_params)
        page = selectors.group_article_list(
            name=name, order=query["order"], page=query["page"], user_id=_viewer(request)
        )
        return _page(page, request)


# --- users ---------------------------------------------------------------------------------


class UserViewSet(ApiViewSet):
    lookup_field = "username"
    lookup_value_regex = r"[\w.@+-]{1,150}"

    @documented(
        summary="A user's submissions, newest first",
        description=_about(
            "The articles a user posted (not those since deleted), newest first, page by page.",
            "anyone",
            _READ,
            "400 for a bad `page`; 404 when there is no such user.",
        ),
        parameters=[USERNAME, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400, 404)},
    )
    @action(detail=True, methods=["get"])
    def articles(self, request: Request, username: str) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        poster = get_user_model().objects.filter(username=username).first()
        if poster is None:
            raise exceptions.NotFound("No such user.")
        page = selectors.user_article_list(
            poster_id=poster.pk, page=query["page"], user_id=_viewer(request)
        )
        return _page(page, request)


# --- moderation log and statistics -------------------------------------------------------


class ModlogViewSet(ApiViewSet):
    @documented(
        summary="The moderation log: every staff action, newest first, "
        f"{conf.DEFAULTS['MODLOG_PER_PAGE']} a page",
        description=_about(
            "The moderation log: every staff action (edits, deletions, group changes), newest "
            f"first, {conf.DEFAULTS['MODLOG_PER_PAGE']} a page, with who did it, when and why. "
            "It keeps the last "
            f"{conf.DEFAULTS['MODLOG_LENGTH']:,} actions by default.",
            "anyone-plain",
            _READ,
            "400 for a bad `page`.",
        ),
        parameters=[PAGE],
        responses={200: ModlogPageSerializer, **_errors(400)},
    )
    def list(self, request: Request) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        page = selectors.modlog_page(page=query["page"])
        results = ModlogEntrySerializer(page.items, many=True).data
        return Response(paged(results, page.number, page.has_next, page.count, request))


class StatsViewSet(ApiViewSet):
    action_permissions = {"list": [IsAdminUser]}

    @documented(
        summary="Staff: articles posted and votes cast on each of the last N UTC days",
        description=_about(
            "Articles posted and votes cast on each of the last `days` UTC days (30 by "
            "default, today included), with their totals.",
            "staff",
            _READ,
            "400 (field `days`) outside 1-366.",
        ),
        parameters=[
            OpenApiParameter("days", {"type": "integer", "minimum": 1, "maximum": 366}),
        ],
        responses={200: StatsSerializer, **_errors(400, 401, 403)},
    )
    def list(self, request: Request) -> Response:
        query = _valid(StatsQuerySerializer, request.query_params)
        days = selectors.stats_daily(days=query["days"])
        stats = {
            "total_posts": sum(posts for _, posts, _ in days),
            "total_votes": sum(votes for _, _, votes in days),
            "days": [{"date": d, "posts": p, "votes": v} for d, p, v in days],
        }
        return Response(StatsSerializer(stats).data)


# --- auth and fallbacks --------------------------------------------------------------------


class TokenView(ApiMixin, ObtainAuthToken):
    """POST username and password, get the token to send as `Authorization: Token <token>`."""

    parser_classes = [JSONParser, FormParser]  # no multipart: nothing to upload here

    def get_authenticators(self) -> list[BaseAuthentication]:
        # Getting a token takes a password, not a credential (an old token sent along must
        # not make it a 401); revoking takes the caller's token or session.
        request = getattr(self, "request", None)  # None while the schema is generated
        if request is None or request.method == "DELETE":
            return [auth() for auth in ApiMixin.authentication_classes]
        return []

    @documented(
        summary="Get your API token",
        description=_about(
            "Exchanges a username and password for a new API token; send it as "
            "`Authorization: Token <token>`. It is shown this once: the site keeps only its "
            "digest. Each call makes another (a user keeps the newest 10); a password change "
            "or reset revokes them all.",
            "anyone-plain",
            ("api",),
            "400 (`authorization`) when the username and password do not match an active "
            "user; 400 (`required`, `field` names it) when one is missing. Failed attempts "
            "are limited per account and per address (the `login_account` and "
            "`login_address` rate limits, shared with the login page): past either, 429 "
            "with Retry-After, even for the right password.",
        ),
        # One body schema, JSON: a client generated for JSON and form bodies of one schema
        # did not import. The view still reads a form too (FormParser), undeclared.
        request={"application/json": TokenRequestSerializer},
        responses={200: TokenSerializer, **_errors(400, 415, 429)},
        auth=[],
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = AuthTokenSerializer(data=request.data, context={"request": request})
        data = request.data if isinstance(request.data, dict) else {}
        username = str(data.get("username", ""))
        # Counted first: locked, 429 even for the right password; Redis full or down, 503.
        if not logins.password_check(request, username, serializer.is_valid):
            raise exceptions.ValidationError(serializer.errors)
        return Response({"token": tokens.token_create(user=serializer.validated_data["user"])})

    @documented(
        summary="Revoke your API tokens",
        request=None,
        responses={204: None, **_errors(401, 403)},
        description=_about(
            "Deletes the caller's tokens: they stop working at once in the server process that "
            "answered, and within a few seconds (5 by default) everywhere. A password change "
            "or reset revokes them too. POST again for a new one. Answers 204, no body.",
            "member",
            _WRITE,
        ),
    )
    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if not request.user.is_authenticated:
            raise exceptions.NotAuthenticated()
        tokens.user_tokens_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class NotFoundView(ApiMixin, APIView):
    """Any other path under /api/: a JSON 404 rather than Django's HTML page."""

    schema = None
    permission_classes = [AllowAny]
    answers_only_404 = True  # no breadcrumb in the browsable API (renderers.py)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        raise exceptions.NotFound()
