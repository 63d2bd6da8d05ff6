"""The REST API of a reader's own lists: hide and save an article, save a comment (PUT
puts it in, DELETE takes it out; both safe to repeat), and list what the caller hid,
saved and voted up. Mixed into ArticleViewSet and CommentViewSet, whose addresses they
extend (/api/articles/{id}/hide/, /api/articles/saved/, /api/comments/{id}/save/, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from articles import conf
from articles.api.base import _READ, _WRITE, ARTICLE_ID, PAGE, _about, _errors, _page, _valid
from articles.api.comment_serializers import CommentPageSerializer, listing_data
from articles.api.queries import PageQuerySerializer
from articles.api.schema import documented
from articles.api.serializers import ArticlePageSerializer
from articles.http.addresses import user_pk
from articles.store import keys, selectors, services

if TYPE_CHECKING:
    from rest_framework.viewsets import ViewSet as _ViewSet
else:
    _ViewSet = object

_MEMBER: list[type[BasePermission]] = [IsAuthenticated]
ARTICLE_PERMISSIONS: dict[str, list[type[BasePermission]]] = dict.fromkeys(
    ("hide", "unhide", "save", "unsave", "saved", "hidden", "upvoted"), _MEMBER
)
COMMENT_PERMISSIONS: dict[str, list[type[BasePermission]]] = dict.fromkeys(
    ("save", "unsave", "saved"), _MEMBER
)
# The writes count in the "save" limit too, folded into the API's own check.
ARTICLE_LIMITS = dict.fromkeys(("hide", "unhide", "save", "unsave"), ("save",))
COMMENT_LIMITS = dict.fromkeys(("save", "unsave"), ("save",))

# What the listings a hidden article leaves say of it.
HIDDEN_LEFT_OUT = (
    " A logged-in caller's hidden articles (`/api/articles/hidden/`) are left out, and "
    "the pages stay full."
)
_PRIVATE = "Only the caller's own list: nobody else can read it."
_COMMENT_404 = {404: "No such comment (`comment_not_found`)."}
COMMENT_ID = OpenApiParameter(
    "id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="Comment id."
)


def _write(what: str, errors: str = "") -> str:
    return _about(what + " Answers 204, no body.", "member", (*_WRITE, "save"), errors)


def _listing(what: str) -> str:
    return _about(f"{what} {_PRIVATE}", "member", _READ, "400 for a bad `page`.")


class ArticleListsMixin(_ViewSet):
    """/api/articles/{id}/hide/ and save/ (PUT, DELETE); /api/articles/saved/, hidden/,
    upvoted/ (GET): the caller's."""

    @documented(
        summary="Hide an article from your listings",
        parameters=[ARTICLE_ID],
        request=None,
        responses={204: None, **_errors(401, 403, 404)},
        description=_write(
            "Leaves the article out of every listing you get (articles, top, groups, users' "
            f"submissions, the front page); hiding it again changes nothing. At most "
            f"{keys.HIDDEN_KEEP} hidden articles are kept: past that, the longest hidden "
            "comes back.",
            "404 (`article_not_found`).",
        ),
    )
    @action(detail=True, methods=["put"])
    def hide(self, request: Request, id: str) -> Response:
        services.article_hide(article_id=int(id), user_id=user_pk(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Unhide an article",
        parameters=[ARTICLE_ID],
        request=None,
        responses={204: None, **_errors(401, 403, 404)},
        description=_write(
            "Puts a hidden article back in your listings (not hidden: nothing).",
            "404 (`article_not_found`) for an id no article can have (0).",
        ),
    )
    @hide.mapping.delete
    def unhide(self, request: Request, id: str) -> Response:
        services.article_hide(article_id=int(id), user_id=user_pk(request), hide=False)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Save an article",
        parameters=[ARTICLE_ID],
        request=None,
        responses={204: None, **_errors(401, 403, 404)},
        description=_write(
            "Adds the article to your saved articles; saving it again changes nothing (it "
            f"keeps its place). At most {keys.SAVED_KEEP} are kept: past that, the longest "
            "saved goes.",
            "404 (`article_not_found`).",
        ),
    )
    @action(detail=True, methods=["put"])
    def save(self, request: Request, id: str) -> Response:
        services.article_save(article_id=int(id), user_id=user_pk(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Unsave an article",
        parameters=[ARTICLE_ID],
        request=None,
        responses={204: None, **_errors(401, 403, 404)},
        description=_write(
            "Takes the article off your saved articles (not saved: nothing).",
            "404 (`article_not_found`) for an id no article can have (0).",
        ),
    )
    @save.mapping.delete
    def unsave(self, request: Request, id: str) -> Response:
        services.article_save(article_id=int(id), user_id=user_pk(request), save=False)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Your saved articles",
        parameters=[PAGE],
        responses={200: ArticlePageSerializer, **_errors(400, 401, 403)},
        description=_listing(
            f"The articles you saved, the last saved first, {conf.DEFAULTS['PER_PAGE']} a page."
        ),
    )
    @action(detail=False, methods=["get"])
    def saved(self, request: Request) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        return _page(
            selectors.saved_article_list(user_id=user_pk(request), page=query["page"]), request
        )

    @documented(
        summary="Your hidden articles",
        parameters=[PAGE],
        responses={200: ArticlePageSerializer, **_errors(400, 401, 403)},
        description=_listing(
            f"The articles you hid, the last hidden first, {conf.DEFAULTS['PER_PAGE']} a page."
        ),
    )
    @action(detail=False, methods=["get"])
    def hidden(self, request: Request) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        page = selectors.hidden_article_list(user_id=user_pk(request), page=query["page"])
        return _page(page, request)

    @documented(
        summary="Articles you voted up",
        parameters=[PAGE],
        responses={200: ArticlePageSerializer, **_errors(400, 401, 403)},
        description=_listing(
            "The articles you voted up, the latest vote first, "
            f"{conf.DEFAULTS['PER_PAGE']} a page: up to the newest {keys.UPVOTED_KEEP}; an "
            "up-vote taken back or turned down leaves the list."
        ),
    )
    @action(detail=False, methods=["get"])
    def upvoted(self, request: Request) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        page = selectors.upvoted_article_list(user_id=user_pk(request), page=query["page"])
        return _page(page, request)


class CommentListsMixin(_ViewSet):
    """/api/comments/{id}/save/ (PUT, DELETE); /api/comments/saved/ (GET): the caller's."""

    @documented(
        summary="Save a comment",
        parameters=[COMMENT_ID],
        request=None,
        responses={204: None, **_errors(401, 403, 404, described=_COMMENT_404)},
        description=_write(
            "Adds the comment to your saved comments; saving it again changes nothing. At "
            f"most {keys.SAVED_KEEP} are kept: past that, the longest saved goes.",
            "404 (`comment_not_found`).",
        ),
    )
    @action(detail=True, methods=["put"])
    def save(self, request: Request, id: str) -> Response:
        services.comment_save(comment_id=int(id), user_id=user_pk(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Unsave a comment",
        parameters=[COMMENT_ID],
        request=None,
        responses={204: None, **_errors(401, 403, 404, described=_COMMENT_404)},
        description=_write(
            "Takes the comment off your saved comments (not saved: nothing).",
            "404 (`comment_not_found`) for an id no comment can have (0).",
        ),
    )
    @save.mapping.delete
    def unsave(self, request: Request, id: str) -> Response:
        services.comment_save(comment_id=int(id), user_id=user_pk(request), save=False)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Your saved comments",
        parameters=[PAGE],
        responses={200: CommentPageSerializer, **_errors(400, 401, 403)},
        description=_listing(
            "The comments you saved, the last saved first, "
            f"{conf.DEFAULTS['COMMENT_LIST_PER_PAGE']} a page, each with its article's title."
        ),
    )
    @action(detail=False, methods=["get"])
    def saved(self, request: Request) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        page = selectors.saved_comment_list(user_id=user_pk(request), page=query["page"])
        return Response(listing_data(page, request))
