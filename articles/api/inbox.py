"""The replies inbox in the REST API: /api/inbox/ (a page of the replies to your articles
and comments), /api/inbox/unread/ (the count) and /api/inbox/read/ (mark read), over the
same selectors and service as the pages. Reading marks nothing read (see web/inbox.py)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from articles import conf
from articles.api import base
from articles.api.base import _READ, _WRITE, PAGE, ApiViewSet, _about, _valid
from articles.api.comment_serializers import ListedCommentSerializer, comment_data, comment_urls
from articles.api.queries import PageQuerySerializer
from articles.api.schema import documented
from articles.api.serializers import _origin, paged
from articles.http.addresses import user_pk
from articles.store import selectors, services
from articles.types import InboxPage

_NUMBER = (
    "Its number in your inbox: they rise with each reply, so `up_to` of "
    "`POST /api/inbox/read/` marks this one and every older one read."
)


class InboxReplySerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text=_NUMBER)
    unread = serializers.BooleanField(help_text="Not yet marked read.")
    comment = ListedCommentSerializer(help_text="The reply, with the title of its article.")


@extend_schema_serializer(many=False)
class InboxPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(
        help_text="Replies the inbox holds (deleted ones among them are left out of pages)."
    )
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    unread = serializers.IntegerField(help_text="Replies not yet marked read.")
    newest = serializers.IntegerField(
        help_text="The number of the newest reply (0: none yet): give it as `up_to` to mark "
        "read what you have seen, and no reply that arrives after."
    )
    results = InboxReplySerializer(many=True)


class InboxUnreadSerializer(serializers.Serializer):
    unread = serializers.IntegerField(help_text="Replies not yet marked read.")


class InboxReadSerializer(serializers.Serializer):
    up_to = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=10**18 - 1,
        help_text="Mark read the replies numbered up to this one (the `newest` you were "
        "shown); leave it out to mark every reply read. Read stays read.",
    )


def inbox_data(page: InboxPage, request: HttpRequest) -> dict[str, Any]:
    origin, urls = _origin(request), comment_urls()
    results = [
        {
            "number": reply.number,
            "unread": reply.unread,
            "comment": comment_data(reply.comment, origin=origin, listed=True, urls=urls),
        }
        for reply in page.items
    ]
    data = paged(results, page.number, page.has_next, page.count, request)
    data["unread"] = page.unread
    data["newest"] = page.newest
    data["results"] = data.pop("results")  # results last, as in every other page
    return data


class InboxViewSet(ApiViewSet):
    """/api/inbox/: the logged-in user's replies inbox."""

    permission_classes = [IsAuthenticated]

    @documented(
        summary="Your replies inbox",
        parameters=[PAGE],
        responses={200: InboxPageSerializer, **base._errors(400, 401)},
        description=_about(
            f"Replies to your articles and comments, newest first, "
            f"{conf.DEFAULTS['COMMENT_LIST_PER_PAGE']} a page, each with its number and "
            f"whether it is unread; the newest {conf.DEFAULTS['INBOX_SIZE']} are kept. "
            "Deleted and removed replies are left out. Reading marks nothing read.",
            "member",
            _READ,
            "400 for a bad `page`.",
        ),
    )
    def list(self, request: Request) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        page = selectors.inbox_page(user_id=user_pk(request), page=query["page"])
        return Response(inbox_data(page, request))

    @documented(
        summary="How many replies you have not read",
        responses={200: InboxUnreadSerializer, **base._errors(401)},
        description=_about("The count the site's header shows; one cheap read.", "member", _READ),
    )
    @action(detail=False, methods=["get"])
    def unread(self, request: Request) -> Response:
        return Response({"unread": selectors.inbox_unread(user_id=user_pk(request))})

    @documented(
        summary="Mark replies read",
        request=InboxReadSerializer,
        responses={200: InboxUnreadSerializer, **base._errors(400, 401)},
        description=_about(
            "Marks read every reply numbered up to `up_to` (or all of them); answers how "
            "many are still unread. Safe to repeat: read stays read.",
            "member",
            _WRITE,
            "400 for a bad `up_to`.",
        ),
    )
    @action(detail=False, methods=["post"])
    def read(self, request: Request) -> Response:
        data = _valid(InboxReadSerializer, request.data)
        unread = services.inbox_mark_read(user_id=user_pk(request), up_to=data.get("up_to"))
        return Response({"unread": unread})
