"""The comments part of the REST API: threads, one comment, posting, replying, voting,
editing, deleting and staff removal; thin views over the store's comment services and
selectors.

A thread is answered flat, in display order (depth-first, each reply right after its
parent, siblings in the chosen order), each comment with its `depth` and `parent_id`: a
client shows it by indenting `depth` steps, without walking a tree, and a generated
client gets one plain model rather than a recursive one. `more` marks a comment whose
replies go deeper than the page shows ("continue this thread"): fetch them with
`GET /api/comments/<id>/replies/`.
"""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
)
from rest_framework import exceptions, status
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from articles import conf
from articles.api import base, personal
from articles.api.base import _READ, _WRITE, PAGE, PERIOD, ApiViewSet, _about, _valid, _viewer
from articles.api.comment_serializers import (
    CommentCreateSerializer,
    CommentEditSerializer,
    CommentPageSerializer,
    CommentRemoveSerializer,
    CommentSearchPageSerializer,
    CommentSerializer,
    ThreadQuerySerializer,
    ThreadSerializer,
    comment_data,
    comment_search_data,
    comment_url,
    listing_data,
    thread_data,
)
from articles.api.personal import CommentListsMixin
from articles.api.queries import CommentSearchQuerySerializer, PageQuerySerializer
from articles.api.schema import documented
from articles.api.serializers import VoteSerializer, _origin, vote_value
from articles.http.addresses import user_pk
from articles.store import people, ratelimits, selectors, services
from articles.types import Actor, Comment, CommentOrder

# --- schema pieces -------------------------------------------------------------------------

_COMMENT_ERRORS = {
    403: "Not allowed: not the author (`not_allowed`), the article no longer takes "
    "comments (`commenting_closed`), or the edit window is over (`edit_window_closed`).",
    404: "No such article (`article_not_found`) or comment (`comment_not_found`).",
    409: "Voting on the article and its comments has closed (`voting_closed`), or the "
    "article is archived and its thread read-only (`article_archived`).",
    422: "The Idempotency-Key was already used for a different request "
    "(`idempotency_key_reused`, with the `comment_id` it made): use a new key.",
}


def _errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error responses of a comment operation: the API's, in the comments' words."""
    return base._errors(*statuses, described=_COMMENT_ERRORS)


ID = OpenApiParameter(
    "id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="Article id."
)
COMMENT_ID = OpenApiParameter(
    "id", {"type": "integer", "minimum": 1}, OpenApiParameter.PATH, description="Comment id."
)
SORT = OpenApiParameter(
    "sort",
    str,
    enum=[o.value for o in CommentOrder],
    default=CommentOrder.BEST.value,
    description="`best`: by the lower bound of the Wilson score interval of the share of "
    "up-votes (Reddit's best: 10 up and 1 down beats 1 up and none); `new`: newest first. "
    "Replies follow the same order under their parent.",
)
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,128}$"},
    OpenApiParameter.HEADER,
    description="A retry with the same key and the same body gets what the first request "
    "got (201, the comment, even past the commenting limit) instead of posting it twice; "
    "the same key with a different body is a 422 (`idempotency_key_reused`). Kept for 24 "
    "hours, per user, apart from the keys of article posts.",
)
LOCATION = OpenApiParameter(
    "Location",
    OpenApiTypes.URI,
    OpenApiParameter.HEADER,
    required=True,
    description="The new comment in the API (its `url`).",
    response=[201],
)
USERNAME = OpenApiParameter(
    "username", {"type": "string", "pattern": r"^[\w.@+-]{1,150}$"}, OpenApiParameter.PATH
)
_TOO_LONG = (
    f"400 naming `text` when it is empty or longer than {conf.comment_max_length():,} characters"
)


def _comment(comment: Comment, request: Request, code: int = status.HTTP_200_OK) -> Response:
    return Response(comment_data(comment, request), status=code)


# --- views ---------------------------------------------------------------------------------


class ArticleCommentViewSet(ApiViewSet):
    """/api/articles/<id>/comments/: an article's thread, and posting into it."""

    action_permissions = {"create": [IsAuthenticated]}

    @documented(
        summary="An article's comments, a page of top-level comments with their replies",
        parameters=[ID, SORT, PAGE],
        responses={200: ThreadSerializer, **_errors(400, 404)},
        description=_about(
            f"Each page holds up to {conf.comments_per_page()} top-level comments, each "
            f"followed by its replies (depth-first, down to {conf.comment_display_depth()} "
            "levels below it; a comment with deeper replies has `more` set). `count` counts "
            "the top-level comments. Logged in, each comment carries your vote in `my_vote`.",
            "anyone-plain",
            _READ,
            "400 for a bad `sort` or `page`; 404 (`article_not_found`).",
        ),
    )
    def list(self, request: Request, id: str) -> Response:
        query = _valid(ThreadQuerySerializer, request.query_params)
        page = selectors.comment_thread(
            article_id=int(id), order=query["sort"], page=query["page"], user_id=_viewer(request)
        )
        return Response(thread_data(page, request))

    @documented(
        summary="Comment on an article, or reply to a comment (`parent`)",
        parameters=[ID, IDEMPOTENCY_KEY, LOCATION],
        request=CommentCreateSerializer,
        responses={201: CommentSerializer, **_errors(400, 401, 403, 404, 409, 415, 422)},
        description=_about(
            "Posts a comment in Markdown (`text`); with `parent`, a reply to that comment. "
            "The answer is the comment as stored, its address in `Location`.",
            "member",
            (*_WRITE, "comment"),
            f"{_TOO_LONG}; 400 naming `parent` when it is on another article or the reply "
            f"would be nested deeper than {conf.comment_max_depth()} levels "
            "(`comment_too_deep`); 403 (`commenting_closed`) once the article takes no more "
            "comments; 404 when the article or the parent does not exist; 409 "
            "(`article_archived`) when the article is archived; 422 "
            "(`idempotency_key_reused`) for a key sent before with another body. The "
            "commenting limit is shared with the web pages.",
        ),
    )
    def create(self, request: Request, id: str) -> Response:
        data = _valid(CommentCreateSerializer, request.data)
        comment = services.comment_submit(
            {
                "article_id": int(id),
                "user_id": user_pk(request),
                "author_name": request.user.get_username(),
                "text": data["text"],
                "parent_id": data["parent"],
            },
            idempotency_key=request.headers.get("Idempotency-Key"),
            limit=lambda: ratelimits.check(request, "comment"),
        )
        assert comment is not None  # check() raises, never answers False
        response = _comment(comment, request, status.HTTP_201_CREATED)
        response["Location"] = comment_url(comment.id, _origin(request))
        return response


class CommentViewSet(CommentListsMixin, ApiViewSet):
    """/api/comments/: the newest comments site-wide, and each comment by id."""

    lookup_field = "id"
    lookup_value_regex = r"[0-9]{1,18}"
    folded_limits = {"vote": ("vote",), **personal.COMMENT_LIMITS}
    action_permissions = {
        "partial_update": [IsAuthenticated],
        "destroy": [IsAuthenticated],
        "vote": [IsAuthenticated],
        "remove": [IsAuthenticated],  # staff only: the service decides
        **personal.COMMENT_PERMISSIONS,
    }

    @documented(
        summary="The newest comments on the whole site",
        parameters=[PAGE],
        responses={200: CommentPageSerializer, **_errors(400)},
        description=_about(
            f"Newest first, {conf.DEFAULTS['COMMENT_LIST_PER_PAGE']} a page, each with its "
            "article's title; deleted and removed "
            "comments are left out.",
            "anyone-plain",
            _READ,
            "400 for a bad `page`.",
        ),
    )
    def list(self, request: Request) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        page = selectors.recent_comments(page=query["page"], user_id=_viewer(request))
        return Response(listing_data(page, request))

    @documented(
        summary="Search comments by words",
        parameters=[
            OpenApiParameter(
                "q",
                {"type": "string", "minLength": 1, "maxLength": 400},
                required=True,
                description="Words, all of which must match; `-word` leaves out comments "
                "with that word. At most 8 words, matched as in the article search (stems, "
                "any case or accents).",
            ),
            PERIOD,
            PAGE,
        ],
        responses={200: CommentSearchPageSerializer, **_errors(400, 404)},
        description=_about(
            "Visible comments holding every word of `q` among their first "
            f"{conf.DEFAULTS['SEARCH_COMMENT_WORDS']} distinct words (the site's "
            "ARTICLES_SEARCH_COMMENT_WORDS), newest first, posted in `period` if given, "
            "each with its article's title. Results are cached for a short time, as the "
            "article search's are.",
            "anyone-plain",
            _READ,
            "400 (`empty_search`, field `q`) when the query has no word to look for; 400 "
            "(`invalid`, field `q`) past 400 characters or 8 words; 400 for a bad `period` "
            "or `page`; 404 (`not_found`) when the site does not index comments.",
        ),
    )
    @action(detail=False, methods=["get"])
    def search(self, request: Request) -> Response:
        if not conf.search_comment_words():
            raise exceptions.NotFound(gettext("This site does not search comments."))
        query = _valid(CommentSearchQuerySerializer, request.query_params)
        page = selectors.comment_search(
            q=query["q"], period=query["period"], page=query["page"], user_id=_viewer(request)
        )
        return Response(comment_search_data(page, request))

    @documented(
        summary="One comment",
        parameters=[COMMENT_ID],
        responses={200: CommentSerializer, **_errors(404)},
        description=_about(
            "The comment with its points, its author and its text (Markdown in `text`, the "
            "safe HTML in `text_html`); its replies are at /api/comments/{id}/replies/.",
            "anyone-plain",
            _READ,
            "404 (`comment_not_found`).",
        ),
    )
    def retrieve(self, request: Request, id: str) -> Response:
        return _comment(
            selectors.comment_get(comment_id=int(id), user_id=_viewer(request)), request
        )

    @documented(
        summary="The replies under one comment, as a thread of their own",
        parameters=[COMMENT_ID, SORT, PAGE],
        responses={200: ThreadSerializer, **_errors(400, 404)},
        description=_about(
            "The comment is `focus`; the pages count its direct replies, each followed by "
            "its own replies, as in an article's thread. This is where a comment with "
            "`more` continues.",
            "anyone-plain",
            _READ,
            "400 for a bad `sort` or `page`; 404 (`comment_not_found`).",
        ),
    )
    @action(detail=True, methods=["get"])
    def replies(self, request: Request, id: str) -> Response:
        query = _valid(ThreadQuerySerializer, request.query_params)
        focus = selectors.comment_get(comment_id=int(id))
        page = selectors.comment_thread(
            article_id=focus.article_id,
            order=query["sort"],
            page=query["page"],
            user_id=_viewer(request),
            focus_id=focus.id,
        )
        return Response(thread_data(page, request))

    @documented(
        summary="Edit your comment's text (within its edit window)",
        parameters=[COMMENT_ID],
        request=CommentEditSerializer,
        responses={200: CommentSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            f"Only its author, for {conf.comment_edit_seconds() // 60} minutes after "
            "posting; the comment then shows `edited_at`. A body without `text` changes "
            "nothing.",
            "member",
            _WRITE,
            f"403 `edit_window_closed` after the window, 403 `not_allowed` for anyone but "
            f"its author; 404 (`comment_not_found`); 409 (`article_archived`) on an "
            f"archived article's comment; {_TOO_LONG}.",
        ),
    )
    def partial_update(self, request: Request, id: str) -> Response:
        data = _valid(CommentEditSerializer, request.data)
        if "text" not in data:  # nothing to change: the comment as it is
            comment = selectors.comment_get(comment_id=int(id), user_id=user_pk(request))
            return _comment(comment, request)
        comment = services.comment_edit(
            comment_id=int(id), actor=Actor.of(request.user), text=data["text"]
        )
        return _comment(comment, request)

    @documented(
        summary="Delete your comment",
        parameters=[COMMENT_ID],
        responses={204: None, **_errors(401, 403, 404, 409)},
        description=_about(
            'A comment with replies stays in its thread as "[deleted]" so the replies keep '
            "their place; one without replies is gone. Staff remove others' comments with "
            "POST /api/comments/{id}/remove/.",
            "member",
            _WRITE,
            "403 (`not_allowed`) for anyone but its author; 404 (`comment_not_found`); 409 "
            "(`article_archived`) on an archived article's comment.",
        ),
    )
    def destroy(self, request: Request, id: str) -> Response:
        services.comment_delete(comment_id=int(id), actor=Actor.of(request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Set your vote on a comment: up, down or none (repeating it changes nothing)",
        parameters=[COMMENT_ID],
        request=VoteSerializer,
        responses={200: CommentSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            "Sets your vote; comments take votes as long as their article does. The answer "
            "is the comment with its new counts. The voting limit is shared with article "
            "votes.",
            "member",
            (*_WRITE, "vote"),
            "409 (`voting_closed`) once the article's voting window is over; 403 "
            "(`not_allowed`) on a deleted or removed comment; 404 (`comment_not_found`).",
        ),
    )
    @action(detail=True, methods=["put"])
    def vote(self, request: Request, id: str) -> Response:
        vote = vote_value(request.data)
        ratelimits.check(request, "vote")
        comment = services.comment_vote(comment_id=int(id), user_id=user_pk(request), vote=vote)
        return _comment(comment, request)

    @documented(
        summary="Staff: remove a comment, with a reason",
        parameters=[COMMENT_ID],
        request=CommentRemoveSerializer,
        responses={204: None, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            "The comment stays in its thread as removed (text and author blank) so its "
            "replies keep their place; the removal and its `reason` go into the moderation "
            "log (/api/modlog/).",
            "staff",
            _WRITE,
            "400 without a `reason`; 404 (`comment_not_found`); 409 (`article_archived`) on "
            "an archived article's comment.",
        ),
    )
    @action(detail=True, methods=["post"])
    def remove(self, request: Request, id: str) -> Response:
        data = _valid(CommentRemoveSerializer, request.data)
        services.comment_remove(
            comment_id=int(id), actor=Actor.of(request.user), reason=data["reason"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class UserCommentViewSet(ApiViewSet):
    """/api/users/<username>/comments/."""

    lookup_field = "username"
    lookup_value_regex = r"[\w.@+-]{1,150}"

    @documented(
        summary="A user's comments, newest first",
        parameters=[USERNAME, PAGE],
        responses={200: CommentPageSerializer, **_errors(400, 404)},
        description=_about(
            f"Newest first, {conf.DEFAULTS['COMMENT_LIST_PER_PAGE']} a page, each with its "
            "article's title; deleted and removed "
            "comments are left out.",
            "anyone-plain",
            _READ,
            "400 for a bad `page`; 404 for an unknown user.",
        ),
    )
    @action(detail=True, methods=["get"])
    def comments(self, request: Request, username: str) -> Response:
        query = _valid(PageQuerySerializer, request.query_params)
        author = people.person_named(username)
        if author is None:
            raise exceptions.NotFound(gettext("No such user."))
        page = selectors.user_comments(user_id=author.pk, page=query["page"])
        return Response(listing_data(page, request))
