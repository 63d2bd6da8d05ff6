"""The API's comments as it answers them (output) and reads them (input)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from django.urls import get_script_prefix, get_urlconf
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import (
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers

from articles import conf, markdown, validation
from articles.api.fields import StringField
from articles.api.queries import PageQuerySerializer
from articles.api.serializers import (
    VOTE_CHOICES,
    SearchFields,
    _cleaned,
    _iso,
    _origin,
    paged,
    search_fields,
)
from articles.types import Comment, CommentOrder, CommentSearchPage, Page, ThreadPage
from articles.urlcache import url_for, url_of

# --- output --------------------------------------------------------------------------------

_STATES = {"": "visible", "deleted": "deleted", "removed": "removed"}


def _html(text: str) -> str:
    return str(markdown.render(text)) if text else ""


def comment_url(comment_id: int, origin: str) -> str:
    """The comment in the API (`api:comment-detail`): its `url` and a new comment's
    `Location`."""
    return origin + url_for("api:comment-detail", comment_id)


def comment_html_url(comment: Comment, origin: str) -> str:
    """The comment's web page, its permalink (`articles:comment-detail`): its `html_url`."""
    return origin + url_for("articles:comment-detail", comment.article_id, comment.id)


def comment_urls() -> tuple[Callable[..., str], Callable[..., str]]:
    """A comment's two addresses (comment_url's from its id, comment_html_url's from its
    article's id and its own) for a page of them: the URLconf, script prefix and patterns
    looked up once, where two look-ups a comment were 46 % of a 300-comment thread page."""
    under = (get_urlconf(), get_script_prefix())
    return url_of("api:comment-detail", under=under), url_of(
        "articles:comment-detail", 2, under=under
    )


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
    html_url = serializers.SerializerMethodField(
        help_text="The comment's web page: its permalink, with its replies."
    )

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

    @extend_schema_field(serializers.URLField())
    def get_html_url(self, comment: Comment) -> str:
        return comment_html_url(comment, _origin(self.context.get("request")))


class ListedCommentSerializer(CommentSerializer):
    article_title = serializers.CharField(help_text="The title of the article it is on.")


def comment_data(
    comment: Comment,
    request: HttpRequest | None = None,
    *,
    origin: str | None = None,
    listed: bool = False,
    urls: tuple[Callable[..., str], Callable[..., str]] | None = None,
) -> dict[str, Any]:
    """What CommentSerializer (ListedCommentSerializer when `listed`) gives, as a plain
    dict: a thread page holds hundreds of comments (see article_data). `urls`: a page's
    comment_urls()."""
    if origin is None:
        origin = _origin(request)
    api_url, html_url = urls or comment_urls()
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
        "url": origin + api_url(comment.id),
        "html_url": origin + html_url(comment.article_id, comment.id),
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
    origin, urls = _origin(request), comment_urls()
    data = paged(
        [comment_data(c, origin=origin, urls=urls) for c in page.items],
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
    data["focus"] = comment_data(page.focus, origin=origin, urls=urls) if page.focus else None
    # The page's keys in the documented order: results last, as in every other page.
    data["results"] = data.pop("results")
    return data


@extend_schema_serializer(many=False)
class CommentPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ListedCommentSerializer(many=True)


class CommentSearchPageSerializer(CommentPageSerializer, SearchFields):
    """A page of the comments a search found."""


def comment_search_data(page: CommentSearchPage, request: HttpRequest) -> dict[str, Any]:
    return {**listing_data(page, request), **search_fields(page)}


def listing_data(page: Page[Comment], request: HttpRequest) -> dict[str, Any]:
    origin = _origin(request)
    urls = comment_urls()
    results = [comment_data(c, origin=origin, listed=True, urls=urls) for c in page.items]
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
    default_error_messages = {"pattern": _("A comment needs some text, and no NUL characters.")}


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
    default_error_messages = {"pattern": _("Give a reason for the moderation log, on one line.")}


class CommentRemoveSerializer(serializers.Serializer):
    reason = ReasonField(
        max_length=validation.REASON_MAX, help_text="Why (kept in the moderation log)."
    )

    def validate_reason(self, value: str) -> str:
        value = _cleaned(validation.clean_reason, value)
        if not value:
            raise serializers.ValidationError(gettext("Give a reason for the moderation log."))
        return str(value)


class ThreadQuerySerializer(PageQuerySerializer):
    sort = serializers.ChoiceField(
        choices=[o.value for o in CommentOrder], required=False, default=CommentOrder.BEST.value
    )

    def validate_sort(self, value: str) -> CommentOrder:
        return CommentOrder(value)
