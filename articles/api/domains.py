"""The REST API's sites (/api/domains/<domain>/articles/) and users (/api/users/<name>/)."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from articles import validation
from articles.api.base import (
    _READ,
    PAGE,
    USERNAME,
    ApiViewSet,
    _about,
    _errors,
    _page,
    _valid,
    _viewer,
)
from articles.api.queries import PageQuerySerializer
from articles.api.schema import documented
from articles.api.serializers import ArticlePageSerializer
from articles.errors import InvalidInput
from articles.store import people, selectors
from articles.urlcache import url_for

DOMAIN = OpenApiParameter(
    "domain",
    {"type": "string", "pattern": r"^[^/]{1,253}$"},
    OpenApiParameter.PATH,
    description="A site: `example.org`; any case, Unicode or IDNA form, with or without "
    "\"www.\" (each article's `domain` gives its site's name).",
)


class DomainViewSet(ApiViewSet):
    """/api/domains/<domain>/articles/: the articles linking to one site."""

    lookup_field = "domain"
    lookup_value_regex = r"[^/]{1,253}"  # a host name's length, in any of its forms

    @documented(
        summary="A site's articles, newest first",
        description=_about(
            'The articles whose links are on a site (its host, without "www."), newest '
            "first, page by page; an empty page for a site nothing links to.",
            "anyone",
            _READ,
            "400 for a bad `page`; 404 for a `domain` no host can have.",
        ),
        parameters=[DOMAIN, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400, 404)},
    )
    @action(detail=True, methods=["get"])
    def articles(self, request: Request, domain: str) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        try:
            name = validation.clean_domain(domain)
        except InvalidInput:  # no host has that name: as an unknown group, a 404
            raise exceptions.NotFound(gettext("No such site.")) from None
        page = selectors.domain_article_list(
            domain=name, page=query["page"], user_id=_viewer(request)
        )
        return _page(page, request)


class UserSerializer(serializers.Serializer):
    username = serializers.CharField()
    karma = serializers.IntegerField(
        help_text="Net votes (up - down) on the articles they posted that still exist."
    )
    comment_karma = serializers.IntegerField(
        help_text="Net votes (up - down) on their comments that are still shown."
    )
    date_joined = serializers.DateTimeField(allow_null=True)
    articles = serializers.URLField(help_text="Their submissions in the API.")
    comments = serializers.URLField(help_text="Their comments in the API.")
    html_url = serializers.URLField(help_text="Their page on the site.")


class UserProfileMixin:
    """GET /api/users/<username>/ (UserViewSet takes it: one route per address)."""

    @documented(
        summary="A user: karma and comment karma",
        description=_about(
            "A user's name, when they joined, their karma (net votes on their articles) and "
            "comment karma (net votes on their comments that are still shown), with links "
            "to their submissions and comments.",
            "anyone-plain",
            _READ,
            "404 when there is no such user.",
        ),
        parameters=[USERNAME],
        responses={200: UserSerializer, **_errors(404)},
    )
    def retrieve(self, request: Request, username: str) -> Response:
        person = people.person_named(username)
        if person is None:
            raise exceptions.NotFound(gettext("No such user."))
        karma, comment_karma = selectors.user_karmas(user_id=person.pk)
        name = person.get_username()
        joined = getattr(person, "date_joined", None)
        return Response(
            {
                "username": name,
                "karma": karma,
                "comment_karma": comment_karma,
                "date_joined": serializers.DateTimeField().to_representation(joined)
                if joined
                else None,
                "articles": request.build_absolute_uri(url_for("api:user-articles", name)),
                "comments": request.build_absolute_uri(url_for("api:user-comment-comments", name)),
                "html_url": request.build_absolute_uri(url_for("articles:user-detail", name)),
            }
        )
