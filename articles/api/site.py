"""The REST API's groups, users, moderation log, statistics and tokens, and its 404."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.parsers import FormParser
from rest_framework.permissions import AllowAny, IsAdminUser, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from articles import conf, validation
from articles.api.base import (
    _READ,
    _WRITE,
    GROUP_NAME,
    ORDER,
    PAGE,
    REASON,
    USERNAME,
    ApiMixin,
    ApiViewSet,
    JSONParser,
    _about,
    _actor,
    _errors,
    _page,
    _valid,
    _viewer,
    rides_on_rows,
)
from articles.api.domains import UserProfileMixin
from articles.api.personal import HIDDEN_LEFT_OUT
from articles.api.queries import (
    ListQuerySerializer,
    PageQuerySerializer,
    ReasonQuerySerializer,
    StatsQuerySerializer,
)
from articles.api.schema import documented
from articles.api.serializers import (
    ArticlePageSerializer,
    GroupCreateSerializer,
    GroupSerializer,
    GroupUpdateSerializer,
    ModlogEntrySerializer,
    ModlogPageSerializer,
    StatsSerializer,
    TokenRequestSerializer,
    TokenSerializer,
    paged,
)
from articles.store import logins, people, selectors, services, tokens

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
            "A group's articles, page by page, ranked by `order` as in the list of all articles."
            + HIDDEN_LEFT_OUT,
            "anyone",
            _READ,
            "400 for a bad `order` or `page`; 404 (`group_not_found`).",
        ),
        parameters=[GROUP_NAME, ORDER, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400, 404)},
    )
    @action(detail=True, methods=["get"])
    @rides_on_rows
    def articles(self, request: Request, name: str) -> Response:
        query = _valid(ListQuerySerializer, request.query_params)
        page = selectors.group_article_list(
            name=name, order=query["order"], page=query["page"], user_id=_viewer(request)
        )
        return _page(page, request)


# --- users ---------------------------------------------------------------------------------


class UserViewSet(UserProfileMixin, ApiViewSet):
    lookup_field = "username"
    lookup_value_regex = r"[\w.@+-]{1,150}"

    @documented(
        summary="A user's submissions, newest first",
        description=_about(
            "The articles a user posted (not those since deleted), newest first, page by page."
            + HIDDEN_LEFT_OUT,
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
        poster = people.person_named(username)
        if poster is None:
            raise exceptions.NotFound(gettext("No such user."))
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
            "Deletes the caller's tokens: they stop working at once, in every server process "
            "(each checks its kept tokens against the revocation in Redis at their next use). "
            "A password change or reset revokes them too. POST again for a new one. Answers "
            "204, no body.",
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
