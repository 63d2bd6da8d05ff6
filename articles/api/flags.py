"""The REST API's flags: a reader flags an article or a comment; staff list the queue and
resolve or dismiss an item's flags. The same services as the pages (store.services.flags)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from articles import conf, validation
from articles.api.base import _READ, _WRITE, PAGE, ApiViewSet, _about, _actor, _errors, _valid
from articles.api.comment_serializers import CommentRemoveSerializer, ReasonField
from articles.api.queries import PageQuerySerializer
from articles.api.schema import documented
from articles.api.serializers import _cleaned, paged
from articles.store import ratelimits, selectors, services
from articles.types import Flagged, FlagReason, FlagResult

# --- serializers -------------------------------------------------------------------------


FLAG_REASONS = [r.value for r in FlagReason]  # FlagReasonEnum in the schema
FLAG_KINDS = ["article", "comment"]  # FlagKindEnum


class FlagCreateSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=FLAG_REASONS, help_text="Why staff should look at it.")


class FlagSerializer(serializers.Serializer):
    target = serializers.CharField(help_text="What was flagged: article:<id> or comment:<id>.")
    flags = serializers.IntegerField(help_text="Its flags now, yours included.")
    held = serializers.BooleanField(
        help_text="Out of the listings (an article) or folded (a comment) until staff decide: "
        f"from {conf.DEFAULTS['FLAG_THRESHOLD']} flags by default."
    )


class FlaggedSerializer(serializers.Serializer):
    target = serializers.CharField(help_text="article:<id> or comment:<id>.")
    kind = serializers.ChoiceField(choices=FLAG_KINDS)
    id = serializers.IntegerField()
    flags = serializers.IntegerField()
    reasons = serializers.DictField(
        child=serializers.IntegerField(), help_text="reason -> how many flags give it."
    )
    held = serializers.BooleanField()
    exists = serializers.BooleanField(help_text="False once the item is gone.")
    title = serializers.CharField(help_text="The article's title, or the comment's text.")


@extend_schema_serializer(many=False)
class FlagQueueSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = FlaggedSerializer(many=True)


class FlagDismissSerializer(serializers.Serializer):
    reason = ReasonField(
        max_length=validation.REASON_MAX,
        required=False,
        help_text="Why (kept in the moderation log); optional.",
    )

    def validate_reason(self, value: str) -> str:
        return str(_cleaned(validation.clean_reason, value))


class FlagResolveSerializer(CommentRemoveSerializer):
    """A resolution removes the item: its reason is required, as for any staff removal."""


class FlagDecisionSerializer(serializers.Serializer):
    target = serializers.CharField()
    decided = serializers.IntegerField(help_text="How many flags were decided.")


def _flag_data(result: FlagResult) -> dict[str, Any]:
    return {"target": result.member, "flags": result.flags, "held": result.held}


def _flagged_data(item: Flagged) -> dict[str, Any]:
    title = item.article.title if item.article else item.comment.text if item.comment else ""
    return {
        "target": item.member,
        "kind": item.kind,
        "id": item.id,
        "flags": item.flags,
        "reasons": item.reasons,
        "held": item.held,
        "exists": item.exists,
        "title": title,
    }


# --- views -------------------------------------------------------------------------------

_ID = {
    kind: OpenApiParameter(
        "id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description=f"{kind} id."
    )
    for kind in ("Article", "Comment")
}
_KIND = OpenApiParameter(
    "kind", str, OpenApiParameter.PATH, enum=FLAG_KINDS, description="What is flagged."
)
_ABOUT_FLAG = (
    "Flags the {kind} for staff, with a `reason`: one flag per user per {kind}. A flag is not "
    "a vote: no count or score changes. With ARTICLES_FLAG_THRESHOLD flags "
    f"({conf.DEFAULTS['FLAG_THRESHOLD']} by default) it is held: {{held}} until staff "
    "resolve or dismiss its flags."
)


class _FlagViewSet(ApiViewSet):
    kind = "article"
    action_permissions = {"create": [IsAuthenticated]}

    def create(self, request: Request, id: str) -> Response:
        data = _valid(FlagCreateSerializer, request.data)
        ratelimits.check(request, "flag")
        result = services.item_flag(
            kind=self.kind, item_id=int(id), actor=_actor(request), reason=data["reason"]
        )
        return Response(_flag_data(result), status=status.HTTP_201_CREATED)


class ArticleFlagViewSet(_FlagViewSet):
    """/api/articles/<id>/flag/."""

    kind = "article"

    @documented(
        summary="Flag an article for staff, with a reason",
        parameters=[_ID["Article"]],
        request=FlagCreateSerializer,
        responses={201: FlagSerializer, **_errors(400, 401, 404, 409, 415)},
        description=_about(
            _ABOUT_FLAG.format(kind="article", held="out of every listing"),
            "member",
            (*_WRITE, "flag"),
            "400 (`reason`) for a reason not listed; 404 (`article_not_found`); 409 "
            "(`already_flagged`) for your second flag on it, or (`article_archived`) on an "
            "archived article.",
        ),
    )
    def create(self, request: Request, id: str) -> Response:
        return super().create(request, id)


class CommentFlagViewSet(_FlagViewSet):
    """/api/comments/<id>/flag/."""

    kind = "comment"

    @documented(
        summary="Flag a comment for staff, with a reason",
        parameters=[_ID["Comment"]],
        request=FlagCreateSerializer,
        responses={201: FlagSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            _ABOUT_FLAG.format(kind="comment", held="folded in its thread"),
            "member",
            (*_WRITE, "flag"),
            "400 (`reason`) for a reason not listed; 403 (`not_allowed`) on a deleted or "
            "removed comment; 404 (`comment_not_found`); 409 (`already_flagged`) for your "
            "second flag on it, or (`article_archived`) on an archived article's comment.",
        ),
    )
    def create(self, request: Request, id: str) -> Response:
        return super().create(request, id)


class FlagQueueViewSet(ApiViewSet):
    """/api/flags/: the staff queue."""

    action_permissions = {"list": [IsAdminUser]}

    @documented(
        summary="Staff: the flagged articles and comments, most flags first",
        parameters=[PAGE],
        responses={200: FlagQueueSerializer, **_errors(400, 401, 403)},
        description=_about(
            f"Items with flags waiting for staff, most flags first, {conf.DEFAULTS['PER_PAGE']} "
            "a page, with the reasons given; an item gone since (its poster deleted it) "
            "stays until its flags are decided (`exists` false).",
            "staff",
            _READ,
            "400 for a bad `page`.",
        ),
    )
    def list(self, request: Request) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        page = selectors.flag_queue(page=query["page"])
        results = [_flagged_data(item) for item in page.items]
        return Response(paged(results, page.number, page.has_next, page.count, request))


class FlagDecisionViewSet(ApiViewSet):
    """/api/flags/<kind>/<id>/resolve/ and .../dismiss/."""

    action_permissions = {"resolve": [IsAdminUser], "dismiss": [IsAdminUser]}
    lookup_field = "id"
    lookup_value_regex = r"[0-9]{1,18}"

    @documented(
        summary="Staff: uphold an item's flags, removing it",
        parameters=[_KIND, _ID["Article"]],
        request=FlagResolveSerializer,
        responses={200: FlagDecisionSerializer, **_errors(400, 401, 403, 404, 415)},
        description=_about(
            "Removes the item as a staff removal does (an article deleted, a comment removed), "
            "with `reason`, then clears its flags; the moderation log gets both.",
            "staff",
            _WRITE,
            "400 without a `reason`; 404 (`not_flagged`) when it has no flags waiting.",
        ),
    )
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, kind: str, id: str) -> Response:
        return _decided(request, kind, id, FlagResolveSerializer, services.flag_resolve)

    @documented(
        summary="Staff: dismiss an item's flags, putting it back",
        parameters=[_KIND, _ID["Article"]],
        request=FlagDismissSerializer,
        responses={200: FlagDecisionSerializer, **_errors(400, 401, 403, 404, 415)},
        description=_about(
            "Clears the item's flags: a held article is back in every listing, ranked by its "
            "votes; a held comment unfolds. The moderation log says so, with `reason` if "
            "given.",
            "staff",
            _WRITE,
            "404 (`not_flagged`) when it has no flags waiting.",
        ),
    )
    @action(detail=True, methods=["post"])
    def dismiss(self, request: Request, kind: str, id: str) -> Response:
        return _decided(request, kind, id, FlagDismissSerializer, services.flag_dismiss)


def _decided(
    request: Request, kind: str, id: str, serializer: type[Any], decide: Callable[..., int]
) -> Response:
    """A staff decision on an item's flags (resolve or dismiss), with its `reason`."""
    data = _valid(serializer, request.data)
    decided = decide(
        kind=kind, item_id=int(id), actor=_actor(request), reason=data.get("reason", "")
    )
    return Response({"target": f"{kind}:{id}", "decided": decided})
