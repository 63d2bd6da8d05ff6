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

from typing import Any

from django.contrib.auth import get_user_model
from django.http import HttpRequest
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from articles import conf, markdown, validation
from articles.api.base import _ERRORS, _READ, _WRITE, PAGE, ApiViewSet, _about, _valid, _viewer
from articles.api.schema import documented
from articles.api.serializers import (
    VOTE_CHOICES,
    ErrorSerializer,
    PageQuerySerializer,
    StringField,
    VoteSerializer,
    _cleaned,
    _iso,
    _origin,
    paged,
)
from articles.http.addresses import user_pk
from articles.store import ratelimits, selectors, services
from articles.types import Actor, Comment, CommentOrder, Page, ThreadPage
from articles.urlcache import url_for

# --- output --------------------------------------------------------------------------------

_STATES = {"": "visible", "deleted": "deleted", "removed": "removed"}


def _html(text: str) -> str:
    return str(markdown.render(text)) if text else ""


def comment_url(comment_id: int, origin: str) -> str:
    """The comment in the API (`api:comment-detail`)."""
    return origin + url_for("api:comment-detail", comment_id)


class CommentSerializer(serializers.Serializer):
    """The schema of one comment; comment_data() builds it (a test pins them equal)."""

    id = serializers.IntegerField()
    article_id = serializers.IntegerField()
    parent_id = serializers.IntegerField(
        allow_null=True, help_text="The comment this replies to; null for a top-level comment."
    )
    author = serializers.CharField(
        source="author_name",
        help_text='The author\'s username; "[deleted]" for a deleted comment or account.',
    )
    text = serializers.CharField(
        help_text='The Markdown source as written; "" once deleted or removed.'
    )
    text_html = serializers.SerializerMethodField(
        help_text="The text as sanitised HTML, as the pages show it: paragraphs, emphasis, "
        'code, lists, quotes and http(s)/mailto links (rel="nofollow ugc noopener"); no '
        "raw HTML, images or headings."
    )
    posted_at = serializers.DateTimeField(help_text="Post time, ISO 8601 in UTC.")
    time = serializers.IntegerField(help_text="Post time in Unix seconds.")
    edited_at = serializers.DateTimeField(
        allow_null=True, help_text="When its author last edited it; null if never."
    )
    votes = serializers.IntegerField(help_text="Up-votes.")
    downvotes = serializers.IntegerField()
    points = serializers.IntegerField(help_text="votes - downvotes.")
    depth = serializers.IntegerField(help_text="0 for a top-level comment, 1 for a reply, ...")
    replies = serializers.IntegerField(help_text="Direct replies, deleted ones with replies kept.")
    state = serializers.SerializerMethodField(
        help_text="`deleted` by its author (kept because it has replies) or `removed` by "
        'staff; its text is then blank and its author "[deleted]".'
    )
    reason = serializers.CharField(help_text='Why staff removed it; "" otherwise.')
    more = serializers.BooleanField(
        help_text="It has replies this page does not show: get them from "
        "/api/comments/{id}/replies/."
    )
    my_vote = serializers.SerializerMethodField(
        help_text="The caller's vote: up, down or none; null when not logged in."
    )
    url = serializers.SerializerMethodField(help_text="This comment in the API.")

    @extend_schema_field(serializers.CharField())
    def get_text_html(self, comment: Comment) -> str:
        return _html(comment.text)

    @extend_schema_field(serializers.ChoiceField(choices=list(_STATES.values())))
    def get_state(self, comment: Comment) -> str:
        return _STATES.get(comment.state, comment.state)

    @extend_schema_field(serializers.ChoiceField(choices=VOTE_CHOICES, allow_null=True))
    def get_my_vote(self, comment: Comment) -> str | None:
        return comment.my_vote.label if comment.my_vote is not None else None

    @extend_schema_field(serializers.URLField())
    def get_url(self, comment: Comment) -> str:
        return comment_url(comment.id, _origin(self.context.get("request")))


class ListedCommentSerializer(CommentSerializer):
    article_title = serializers.CharField(help_text="The title of the article it is on.")


def comment_data(
    comment: Comment,
    request: HttpRequest | None = None,
    *,
    origin: str | None = None,
    listed: bool = False,
) -> dict[str, Any]:
    """What CommentSerializer (ListedCommentSerializer when `listed`) gives, as a plain
    dict: a thread page holds hundreds of comments (see article_data)."""
    if origin is None:
        origin = _origin(request)
    vote = comment.my_vote
    data = {
        "id": comment.id,
        "article_id": comment.article_id,
        "parent_id": comment.parent_id,
        "author": comment.author_name,
        "text": comment.text,
        "text_html": _html(comment.text),
        "posted_at": _iso(comment.time),
        "time": int(comment.time),
        "edited_at": _iso(comment.edited) if comment.edited else None,
        "votes": comment.votes,
        "downvotes": comment.downvotes,
        "points": comment.points,
        "depth": comment.depth,
        "replies": comment.replies,
        "state": _STATES.get(comment.state, comment.state),
        "reason": comment.reason,
        "more": comment.more,
        "my_vote": vote.label if vote is not None else None,
        "url": comment_url(comment.id, origin),
    }
    if listed:
        data["article_title"] = comment.article_title
    return data


@extend_schema_serializer(many=False)
class ThreadSerializer(serializers.Serializer):
    count = serializers.IntegerField(
        help_text="Top-level comments of the article (or direct replies of `focus`): what "
        "the pages count."
    )
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    article_id = serializers.IntegerField()
    sort = serializers.ChoiceField(choices=[o.value for o in CommentOrder])
    voting_open = serializers.BooleanField(help_text="Comments on this article take votes.")
    commenting_open = serializers.BooleanField(help_text="The article takes new comments.")
    focus = CommentSerializer(
        allow_null=True, help_text="The comment whose replies these are; null for a whole thread."
    )
    results = CommentSerializer(
        many=True,
        help_text="Flat, in display order: each comment followed by its replies (depth-first), "
        "siblings in the chosen order; indent by `depth`.",
    )


def thread_data(page: ThreadPage, request: HttpRequest) -> dict[str, Any]:
    origin = _origin(request)
    data = paged(
        [comment_data(c, origin=origin) for c in page.items],
        page.number,
        page.has_next,
        page.count,
        request,
    )
    article = page.article
    data["article_id"] = article.id if article is not None else page.items[0].article_id
    data["sort"] = page.order.value
    data["voting_open"] = page.voting_open
    data["commenting_open"] = page.commenting_open
    data["focus"] = comment_data(page.focus, origin=origin) if page.focus else None
    # The page's keys in the documented order: results last, as in every other page.
    data["results"] = data.pop("results")
    return data


@extend_schema_serializer(many=False)
class CommentPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ListedCommentSerializer(many=True)


def listing_data(page: Page[Comment], request: HttpRequest) -> dict[str, Any]:
    origin = _origin(request)
    results = [comment_data(c, origin=origin, listed=True) for c in page.items]
    return paged(results, page.number, page.has_next, page.count, request)


# --- input ---------------------------------------------------------------------------------


# Not all spaces, no NUL (\S alone would take a NUL as the one non-space); the reason one line.
_COMMENT_TEXT = r"^[^\x00]*[^\s\x00][^\x00]*$"
_REASON = r"^[^\r\n\x00]*[^\s\x00][^\r\n\x00]*$"


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": conf.comment_max_length(),
        "pattern": _COMMENT_TEXT,
    }
)
class CommentTextField(StringField):
    """Markdown, newlines allowed, not all spaces."""

    pattern = _COMMENT_TEXT
    default_error_messages = {"pattern": "A comment needs some text, and no NUL characters."}


def _text_field(**kwargs: Any) -> CommentTextField:
    return CommentTextField(trim_whitespace=False, help_text="Markdown.", **kwargs)


class CommentCreateSerializer(serializers.Serializer):
    text = _text_field()
    # Named as the API reads it; it shadows Field.parent only here (DRF pops declared fields).
    parent = serializers.IntegerField(  # type: ignore[assignment]
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=2**53,
        help_text="The id of the comment this replies to (on the same article); "
        "null or absent for a top-level comment.",
    )

    def validate_text(self, value: str) -> str:
        return _cleaned(validation.clean_comment_text, value)


class CommentEditSerializer(serializers.Serializer):
    text = _text_field(required=False)

    def validate_text(self, value: str) -> str:
        return _cleaned(validation.clean_comment_text, value)


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": validation.REASON_MAX,
        "pattern": _REASON,
    }
)
class ReasonField(StringField):
    """One line of text, not all spaces."""

    pattern = _REASON
    default_error_messages = {"pattern": "Give a reason for the moderation log, on one line."}


class CommentRemoveSerializer(serializers.Serializer):
    reason = ReasonField(
        max_length=validation.REASON_MAX, help_text="Why (kept in the moderation log)."
    )

    def validate_reason(self, value: str) -> str:
        value = _cleaned(validation.clean_reason, value)
        if not value:
            raise serializers.ValidationError("Give a reason for the moderation log.")
        return str(value)


class ThreadQuerySerializer(PageQuerySerializer):
    sort = serializers.ChoiceField(
        choices=[o.value for o in CommentOrder], required=False, default=CommentOrder.BEST.value
    )

    def validate_sort(self, value: str) -> CommentOrder:
        return CommentOrder(value)


# --- schema pieces -------------------------------------------------------------------------

_COMMENT_ERRORS = {
    403: "Not allowed: not the author (`not_allowed`), the article no longer takes "
    "comments (`commenting_closed`), or the edit window is over (`edit_window_closed`).",
    404: "No such article (`article_not_found`) or comment (`comment_not_found`).",
    409: "Voting on the article and its comments has closed (`voting_closed`).",
    422: "The Idempotency-Key was already used for a different request "
    "(`idempotency_key_reused`, with the `comment_id` it made): use a new key.",
}


def _errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error responses of an operation (with 429 and 503, which any can give)."""
    described = {**_ERRORS, **_COMMENT_ERRORS}
    return {
        code: OpenApiResponse(ErrorSerializer, description=described[code])
        for code in sorted({*statuses, 429, 503})
    }


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
    description="The new comment's URL in the API.",
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
        responses={201: CommentSerializer, **_errors(400, 401, 403, 404, 415, 422)},
        description=_about(
            "Posts a comment in Markdown (`text`); with `parent`, a reply to that comment. "
            "The answer is the comment as stored, its address in `Location`.",
            "member",
            (*_WRITE, "comment"),
            f"{_TOO_LONG}; 400 naming `parent` when it is on another article or the reply "
            f"would be nested deeper than {conf.comment_max_depth()} levels "
            "(`comment_too_deep`); 403 (`commenting_closed`) once the article takes no more "
            "comments; 404 when the article or the parent does not exist; 422 "
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
            limit=lambda: ratelimits.consume(request, "comment"),
        )
        assert comment is not None  # consume() raises, never answers False
        response = _comment(comment, request, status.HTTP_201_CREATED)
        response["Location"] = comment_url(comment.id, _origin(request))
        return response


class CommentViewSet(ApiViewSet):
    """/api/comments/: the newest comments site-wide, and each comment by id."""

    lookup_field = "id"
    lookup_value_regex = r"[0-9]{1,18}"
    folded_limits = {"vote": ("vote",)}
    action_permissions = {
        "partial_update": [IsAuthenticated],
        "destroy": [IsAuthenticated],
        "vote": [IsAuthenticated],
        "remove": [IsAuthenticated],  # staff only: the service decides
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
        responses={200: CommentSerializer, **_errors(400, 401, 403, 404, 415)},
        description=_about(
            f"Only its author, for {conf.comment_edit_seconds() // 60} minutes after "
            "posting; the comment then shows `edited_at`. A body without `text` changes "
            "nothing.",
            "member",
            _WRITE,
            f"403 `edit_window_closed` after the window, 403 `not_allowed` for anyone but "
            f"its author; 404 (`comment_not_found`); {_TOO_LONG}.",
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
        responses={204: None, **_errors(401, 403, 404)},
        description=_about(
            'A comment with replies stays in its thread as "[deleted]" so the replies keep '
            "their place; one without replies is gone. Staff remove others' comments with "
            "POST /api/comments/{id}/remove/.",
            "member",
            _WRITE,
            "403 (`not_allowed`) for anyone but its author; 404 (`comment_not_found`).",
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
        data = _valid(VoteSerializer, request.data)
        ratelimits.consume(request, "vote")
        comment = services.comment_vote(
            comment_id=int(id), user_id=user_pk(request), vote=data["value"]
        )
        return _comment(comment, request)

    @documented(
        summary="Staff: remove a comment, with a reason",
        parameters=[COMMENT_ID],
        request=CommentRemoveSerializer,
        responses={204: None, **_errors(400, 401, 403, 404, 415)},
        description=_about(
            "The comment stays in its thread as removed (text and author blank) so its "
            "replies keep their place; the removal and its `reason` go into the moderation "
            "log (/api/modlog/).",
            "staff",
            _WRITE,
            "400 without a `reason`; 404 (`comment_not_found`).",
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
        author = get_user_model().objects.filter(username=username).first()
        if author is None:
            raise exceptions.NotFound("No such user.")
        page = selectors.user_comments(user_id=author.pk, page=query["page"])
        return Response(listing_data(page, request))
