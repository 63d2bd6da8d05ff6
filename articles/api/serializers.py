"""REST API input validation and output shape; the rules themselves live in validation.py
and the store, so a serializer only checks types and names the field at fault."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar

from django.http import HttpRequest
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.utils.urls import replace_query_param

from articles import conf, validation
from articles.errors import InvalidInput
from articles.types import Article, Group, Order, Page, Period, SearchOrder, SearchPage, Vote
from articles.urlcache import url_for

VOTE_CHOICES = [v.label for v in (Vote.UP, Vote.DOWN, Vote.NONE)]


def article_url(article_id: int, request: HttpRequest | None = None) -> str:
    """The article's web page (`articles:article-detail`), absolute when there is a request.
    The pattern is reversed once: reverse() per article was a sixth of an API page."""
    path = url_for("articles:article-detail", article_id)
    return request.build_absolute_uri(path) if request is not None else path


def _origin(request: HttpRequest | None) -> str:
    """What build_absolute_uri() puts before a path ("" with no request): worked out once
    a page, where build_absolute_uri() per article was a tenth of a 50-article page. The
    article paths are ASCII, so they need none of its quoting."""
    return request.build_absolute_uri("/")[:-1] if request is not None else ""


def _cleaned(clean: Callable[..., Any], *args: Any) -> Any:
    """Run a validation.py function; its InvalidInput becomes this field's error."""
    try:
        return clean(*args)
    except InvalidInput as exc:
        raise serializers.ValidationError(exc.message) from None


# --- output ----------------------------------------------------------------------------


class ArticleSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    link = serializers.CharField(help_text='An http(s) URL, or "" for a text post.')
    text = serializers.CharField()
    poster = serializers.CharField(source="poster_name", help_text="The poster's username.")
    posted_at = serializers.DateTimeField(help_text="Post time, ISO 8601 in UTC.")
    time = serializers.IntegerField(help_text="Post time in Unix seconds.")
    edited_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When its title, link or text was last edited, ISO 8601 in UTC; null if never.",
    )
    votes = serializers.IntegerField(help_text="Up-votes, the poster's own included.")
    downvotes = serializers.IntegerField()
    score = serializers.FloatField(help_text="time + 432 * (votes - downvotes).")
    groups = serializers.ListField(child=serializers.CharField())
    comments = serializers.IntegerField(
        help_text="How many comments it has (its thread: /api/articles/{id}/comments/)."
    )
    voting_closes_at = serializers.DateTimeField(source="closes_at")
    my_vote = serializers.SerializerMethodField(
        help_text="The caller's vote: up, down or none; null when not logged in."
    )
    url = serializers.SerializerMethodField(help_text="The article's web page.")

    @extend_schema_field(serializers.ChoiceField(choices=VOTE_CHOICES, allow_null=True))
    def get_my_vote(self, article: Article) -> str | None:
        return article.my_vote.label if article.my_vote is not None else None

    @extend_schema_field(serializers.URLField())
    def get_url(self, article: Article) -> str:
        return article_url(article.id, self.context.get("request"))


@extend_schema_serializer(many=False)  # a list action answering one page object
class ArticlePageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Articles in the whole listing.")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ArticleSerializer(many=True)


class SearchPageSerializer(ArticlePageSerializer):
    words = serializers.ListField(
        child=serializers.CharField(), help_text="The words looked for, as normalised."
    )
    excluded = serializers.ListField(
        child=serializers.CharField(), help_text="The words left out (`-word`), normalised."
    )


def search_page_data(page: SearchPage, request: HttpRequest) -> dict[str, Any]:
    return {**page_data(page, request), "words": list(page.words), "excluded": list(page.excluded)}


def article_data(
    article: Article, request: HttpRequest | None = None, *, origin: str | None = None
) -> dict[str, Any]:
    """What ArticleSerializer gives (it stays the schema; a test pins them equal), built as
    a plain dict: the serializer's per-field machinery was ~0.15 ms an article. A page
    passes its `origin` (see _origin) so the URL's host is worked out once."""
    if origin is None:
        origin = _origin(request)
    vote = article.my_vote
    return {
        "id": article.id,
        "title": article.title,
        "link": article.link,
        "text": article.text,
        "poster": article.poster_name,
        "posted_at": _iso(article.time),
        "time": int(article.time),
        "edited_at": _iso(article.edited) if article.edited is not None else None,
        "votes": article.votes,
        "downvotes": article.downvotes,
        "score": float(article.score),
        "groups": list(article.groups),
        "comments": article.comments,
        "voting_closes_at": _iso(article.voting_closes_at),
        "my_vote": vote.label if vote is not None else None,
        "url": origin + url_for("articles:article-detail", article.id),
    }


@functools.lru_cache(maxsize=4096)
def _iso(timestamp: float) -> str:
    """DRF's DateTimeField output for a UTC time: ISO 8601 with Z. Kept per time: a page
    shows the same articles' times request after request, and formatting them was a
    twentieth of an API page."""
    text = datetime.fromtimestamp(timestamp, tz=UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def page_data(page: Page[Article], request: HttpRequest) -> dict[str, Any]:
    """DRF's page-number shape for one page of a listing."""
    origin = _origin(request)
    results = [article_data(article, origin=origin) for article in page.items]
    return paged(results, page.number, page.has_next, page.count, request)


def paged(
    results: Any, number: int, has_next: bool, count: int, request: HttpRequest
) -> dict[str, Any]:
    url = request.build_absolute_uri()
    return {
        "count": count,
        "next": replace_query_param(url, "page", number + 1) if has_next else None,
        "previous": replace_query_param(url, "page", number - 1) if number > 1 else None,
        "results": results,
    }


class ModlogEntrySerializer(serializers.Serializer):
    at = serializers.DateTimeField(help_text="When, ISO 8601 in UTC.")
    actor = serializers.CharField(help_text="The staff member's username.")
    action = serializers.CharField(help_text="delete, edit, groups, group_create, ...")
    target = serializers.CharField(
        help_text="The key acted on: article:<id>, group:<name> or comment:<id> (its "
        "article is `details.article`)."
    )
    reason = serializers.CharField()
    details = serializers.DictField()


@extend_schema_serializer(many=False)
class ModlogPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ModlogEntrySerializer(many=True)


class StatsDaySerializer(serializers.Serializer):
    date = serializers.DateField()
    posts = serializers.IntegerField(help_text="Articles posted that UTC day.")
    votes = serializers.IntegerField(help_text="Votes cast that UTC day.")


@extend_schema_serializer(many=False)
class StatsSerializer(serializers.Serializer):
    total_posts = serializers.IntegerField()
    total_votes = serializers.IntegerField()
    days = StatsDaySerializer(many=True, help_text="Oldest first, today last.")


class GroupSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    size = serializers.IntegerField(help_text="Articles in the group.")

    @staticmethod
    def of(group: Group) -> dict[str, Any]:
        return {"name": group.name, "description": group.description, "size": group.size}


class ArticleGroupsSerializer(serializers.Serializer):
    groups = serializers.ListField(child=serializers.CharField())


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, for people.")
    code = serializers.CharField(help_text="What went wrong, for programs.")
    field = serializers.CharField(required=False, help_text="The first field at fault.")
    # The field is named as the API answers it; it shadows Serializer.errors only here.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Every field at fault with its messages.",
    )
    article_id = serializers.IntegerField(
        required=False,
        help_text="The article already posted with this link (409), or the one an article "
        "post's reused Idempotency-Key made (422).",
    )
    comment_id = serializers.IntegerField(
        required=False, help_text="The comment a comment post's reused Idempotency-Key made (422)."
    )
    article_url = serializers.CharField(required=False)


# --- input fields: what the schema tells clients, on top of validation.py's own checks -------

_ONE_LINE = r"^[^\r\n\x00]*$"
# Not all spaces: [^\s\x00], as \S would take a NUL for the one non-space.
_TITLE = r"^[^\r\n\x00]*[^\s\x00][^\r\n\x00]*$"
# The group-name rule (validation.GROUP_NAME) as the schema states it: the whole string.
GROUP_NAME_SCHEMA_PATTERN = f"^{validation.GROUP_NAME_PATTERN}$"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# A port of 1-65535, as urllib reads one.
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
# clean_link's rule as a pattern, but for the spaces it would trim around a link: the API
# refuses what this refuses, and every link that fits it is accepted. A path or query may
# hold any character but a space or a control character (a Wikipedia address in its own
# script), as on the submit page.
_LINK = rf"^(?:https?://(?:{_LABEL}\.)*{_LABEL}(?::{_PORT})?(?:[/?#][^\s\x00-\x1f\x7f]*)?)?$"
_SINGLE_LINE = "Must be a single line, without NUL characters."
_USERNAME = r"^[^\x00]*[^\s\x00][^\x00]*$"


class StringField(serializers.CharField):
    """A CharField that takes only a JSON string: DRF's turns 5 or true into "5" or
    "True", which the schema ("type": "string") says is refused. Its `pattern` (the one
    the schema gives) is matched against the string as sent, before trimming: "\rb" would
    otherwise be taken as "b" where the schema refuses it."""

    pattern: ClassVar[str | None] = None
    default_error_messages = {"invalid": "Not a valid string.", "pattern": "Not a valid string."}

    def run_validation(self, data: Any = empty) -> Any:
        # DRF takes "  " as "" where blank is allowed, before to_internal_value sees it.
        if isinstance(data, str) and data and not data.strip() and self.allow_blank:
            self._match(data)
        return super().run_validation(data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        self._match(data)
        return str(super().to_internal_value(data))

    def _match(self, data: str) -> None:
        if self.pattern is not None and _ecma(self.pattern).search(data) is None:
            self.fail("pattern")


@functools.cache
def _ecma(pattern: str) -> re.Pattern[str]:
    """A schema pattern as JSON Schema reads it: its `$` is the end of the string, where
    Python's also matches before a final newline ("Redis\n" would pass a one-line rule)."""
    return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern)


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": validation.GROUP_NAME_MAX,
        "pattern": GROUP_NAME_SCHEMA_PATTERN,
    }
)
class GroupNameField(StringField):
    """A group's name, by validation.GROUP_NAME."""

    pattern = GROUP_NAME_SCHEMA_PATTERN
    default_error_messages = {"pattern": f"A group name is {validation.GROUP_NAME_HELP}"}


@extend_schema_field(
    {"type": "string", "minLength": 1, "maxLength": validation.TITLE_MAX, "pattern": _TITLE}
)
class TitleField(StringField):
    """One line of text, not all spaces."""

    pattern = _TITLE
    default_error_messages = {"pattern": _SINGLE_LINE}


@extend_schema_field({"type": "string", "maxLength": validation.REASON_MAX, "pattern": _ONE_LINE})
class LineField(StringField):
    """One line of text (a reason, a description)."""

    pattern = _ONE_LINE
    default_error_messages = {"pattern": _SINGLE_LINE}


@extend_schema_field({"type": "string", "maxLength": validation.LINK_MAX, "pattern": _LINK})
class LinkField(StringField):
    """An http(s) URL, or "" for none."""

    pattern = _LINK
    default_error_messages = {
        "pattern": "A link is an http:// or https:// URL in ASCII (a port below 10000, no "
        'spaces), or "" for none.'
    }


@extend_schema_field({"type": "string", "maxLength": validation.TEXT_MAX, "pattern": r"^[^\x00]*$"})
class TextField(StringField):
    """Any text, newlines allowed."""

    pattern = r"^[^\x00]*$"
    default_error_messages = {"pattern": "May not contain NUL characters."}


@extend_schema_field({"type": "string", "minLength": 1, "pattern": _USERNAME})
class UsernameField(StringField):
    """A username as the token endpoint reads it: trimmed, so not all spaces; no NUL."""

    pattern = _USERNAME
    default_error_messages = {"pattern": "Not a valid username."}


@extend_schema_field({"type": "string", "minLength": 1, "pattern": r"^[^\x00]*$"})
class PasswordField(StringField):
    """A password: any characters but NUL, kept as sent."""

    pattern = r"^[^\x00]*$"
    default_error_messages = {"pattern": "Null characters are not allowed."}


def _group_names(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=GroupNameField(max_length=64, trim_whitespace=False),
        required=False,
        default=list,
        max_length=20,
        **kwargs,
    )


# --- input -----------------------------------------------------------------------------


class ArticleCreateSerializer(serializers.Serializer):
    title = TitleField(max_length=validation.TITLE_MAX)
    link = LinkField(required=False, allow_blank=True, default="", max_length=validation.LINK_MAX)
    text = TextField(
        required=False,
        allow_blank=True,
        default="",
        max_length=validation.TEXT_MAX,
        trim_whitespace=False,
        help_text="Give a link, a text, or both.",
    )
    groups = _group_names()

    def validate_title(self, value: str) -> str:
        return _cleaned(validation.clean_title, value)

    def validate_link(self, value: str) -> str:
        return _cleaned(validation.clean_link, value)

    def validate_text(self, value: str) -> str:
        return _cleaned(validation.clean_text, value)

    def validate_groups(self, value: list[str]) -> list[str]:
        return _cleaned(validation.clean_group_names, value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            validation.clean_post(attrs["title"], attrs["link"], attrs["text"])
        except InvalidInput as exc:
            raise serializers.ValidationError({exc.field: [exc.message]}) from None
        return attrs


class ArticleEditSerializer(serializers.Serializer):
    title = TitleField(max_length=validation.TITLE_MAX)
    link = LinkField(
        allow_blank=True,
        max_length=validation.LINK_MAX,
        help_text='Staff only (a poster may send it unchanged). "" only for an article with '
        "a text.",
    )
    text = TextField(
        required=False,
        allow_blank=True,
        max_length=validation.TEXT_MAX,
        help_text='Left out: unchanged. "" only for an article with a link.',
    )
    reason = LineField(
        required=False,
        allow_blank=True,
        default="",
        max_length=validation.REASON_MAX,
        help_text="Staff: why, for the public moderation log (a poster's edit is not logged).",
    )

    def validate_title(self, value: str) -> str:
        return _cleaned(validation.clean_title, value)

    def validate_link(self, value: str) -> str:
        return _cleaned(validation.clean_link, value)

    def validate_text(self, value: str) -> str:
        return _cleaned(validation.clean_text, value)

    def validate_reason(self, value: str) -> str:
        return _cleaned(validation.clean_reason, value)


class TokenRequestSerializer(serializers.Serializer):
    """What the token endpoint reads (the schema's TokenRequest); AuthTokenSerializer checks
    it, but as one component with the answer's read-only `token` it made a generated
    client's request model require the token it asks for."""

    username = UsernameField(min_length=1)
    password = PasswordField(min_length=1, trim_whitespace=False)


class VoteSerializer(serializers.Serializer):
    value = serializers.ChoiceField(choices=VOTE_CHOICES, help_text="up, down or none.")

    def validate_value(self, value: str) -> Vote:
        return Vote.from_label(value)


class GroupsUpdateSerializer(serializers.Serializer):
    add = _group_names()
    remove = _group_names(help_text="No group may be both added and removed.")
    reason = LineField(
        required=False, allow_blank=True, default="", max_length=validation.REASON_MAX
    )

    def validate_add(self, value: list[str]) -> list[str]:
        return _cleaned(validation.clean_group_names, value, "add")

    def validate_remove(self, value: list[str]) -> list[str]:
        return _cleaned(validation.clean_group_names, value, "remove")

    def validate_reason(self, value: str) -> str:
        return _cleaned(validation.clean_reason, value)


class GroupCreateSerializer(serializers.Serializer):
    name = GroupNameField(
        max_length=64, help_text="1-64 characters of a-z, 0-9 and '-'.", trim_whitespace=False
    )
    description = LineField(
        required=False, allow_blank=True, default="", max_length=validation.DESCRIPTION_MAX
    )

    def validate_name(self, value: str) -> str:
        return _cleaned(validation.clean_group_name, value, "name")

    def validate_description(self, value: str) -> str:
        return _cleaned(validation.clean_description, value)


class GroupUpdateSerializer(serializers.Serializer):
    description = LineField(required=False, allow_blank=True, max_length=validation.DESCRIPTION_MAX)

    def validate_description(self, value: str) -> str:
        return _cleaned(validation.clean_description, value)


class QuerySerializer(serializers.Serializer):
    """Query parameters: an empty value (`?page=`) is refused like any invalid one, where
    DRF would take it as absent; the schema allows no empty value."""

    def to_internal_value(self, data: Any) -> Any:
        blank = {
            name: ["This field may not be blank."]
            for name, field in self.fields.items()
            if hasattr(data, "getlist")
            and "" in data.getlist(name)
            and not getattr(field, "allow_blank", False)
        }
        if blank:
            raise serializers.ValidationError(blank, code="blank")
        return super().to_internal_value(data)


class ReasonQuerySerializer(QuerySerializer):
    reason = LineField(
        required=False, allow_blank=True, default="", max_length=validation.REASON_MAX
    )

    def validate_reason(self, value: str) -> str:
        return _cleaned(validation.clean_reason, value)


def _clean_page(value: str) -> int:
    return _cleaned(validation.clean_page, value, conf.max_page())


class PageQuerySerializer(QuerySerializer):
    page = serializers.CharField(required=False, default="1")

    def validate_page(self, value: str) -> int:
        return _clean_page(value)


class ListQuerySerializer(PageQuerySerializer):
    order = serializers.ChoiceField(
        choices=[o.value for o in Order], required=False, default=Order.SCORE.value
    )

    def validate_order(self, value: str) -> Order:
        return Order(value)


class SearchQuerySerializer(PageQuerySerializer):
    # Blank and over-long queries reach the store's own rules, which answer 400 naming q.
    q = serializers.CharField(allow_blank=True, trim_whitespace=False)
    order = serializers.ChoiceField(
        choices=[o.value for o in SearchOrder], required=False, default=SearchOrder.SCORE.value
    )
    period = serializers.ChoiceField(
        choices=[p.value for p in Period], required=False, default=Period.ALL.value
    )
    group = serializers.CharField(required=False, default="")

    def validate_order(self, value: str) -> SearchOrder:
        return SearchOrder(value)

    def validate_period(self, value: str) -> Period:
        return Period(value)


class TopQuerySerializer(PageQuerySerializer):
    period = serializers.ChoiceField(
        choices=[p.value for p in Period], required=False, default=Period.ALL.value
    )

    def validate_period(self, value: str) -> Period:
        return Period(value)


class StatsQuerySerializer(QuerySerializer):
    days = serializers.IntegerField(required=False, default=30, min_value=1, max_value=366)


class GoodQuerySerializer(PageQuerySerializer):
    date = serializers.DateField(required=False, input_formats=["%Y-%m-%d"])
