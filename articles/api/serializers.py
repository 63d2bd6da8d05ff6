"""REST API input validation and output shape; the rules themselves live in validation.py
and the store, so a serializer only checks types and names the field at fault.

Caches (articles.caches): "api_times", content-addressed, 4,096 times as ISO 8601 text;
"api_articles", content-addressed, 4,096 articles' JSON fields (by the very Article the
store keeps decoded, which is frozen, and the origin and URLconf of their addresses);
"api_origins", content-addressed, 256 origins by the scheme and the request headers a
host is read from (any settings change empties it)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest
from django.urls import get_script_prefix, get_urlconf
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.utils.urls import replace_query_param

from articles import validation
from articles.api.fields import (
    GroupNameField,
    LineField,
    LinkField,
    PasswordField,
    TextField,
    TitleField,
    UsernameField,
    _group_names,
)
from articles.caches import Cache, Kind
from articles.errors import InvalidInput
from articles.types import Article, CommentSearchPage, Group, Page, SearchPage, Vote
from articles.urlcache import url_for, url_of

VOTE_CHOICES = [v.label for v in (Vote.UP, Vote.DOWN, Vote.NONE)]


def article_url(article_id: int, request: HttpRequest | None = None) -> str:
    """The article in the API (`api:article-detail`): its `url` and a new article's
    `Location`, absolute when there is a request. The pattern is reversed once: reverse()
    per article was a sixth of an API page."""
    return _origin(request) + url_for("api:article-detail", article_id)


def article_html_url(article_id: int, request: HttpRequest | None = None) -> str:
    """The article's web page (`articles:article-detail`): its `html_url`."""
    return _origin(request) + url_for("articles:article-detail", article_id)


# The environ values get_host() reads the host and port from (the settings that pick among
# them, like ALLOWED_HOSTS, empty the cache when changed: articles.caches).
_HOST_FROM = (
    "HTTP_X_FORWARDED_HOST",
    "HTTP_HOST",
    "SERVER_NAME",
    "HTTP_X_FORWARDED_PORT",
    "SERVER_PORT",
)
_origins: Cache[tuple[Any, ...], str] = Cache("api_origins", Kind.CONTENT, entries=256)


def _origin(request: HttpRequest | None) -> str:
    """What build_absolute_uri() puts before a path ("" with no request): worked out once
    a page, where build_absolute_uri() per article was a tenth of a 50-article page. The
    article paths are ASCII, so they need none of its quoting. Kept by what it is made
    of: get_host()'s checks were most of a vote's article_data, and CommonMiddleware has
    already made them. Only an allowed host is kept (get_host() raises for any other)."""
    if request is None:
        return ""
    meta = request.META
    key = (request.scheme, *[meta.get(name) for name in _HOST_FROM])
    origin = _origins.get(key)
    if origin is None:
        origin = request.build_absolute_uri("/")[:-1]
        _origins.put(key, origin)
    return origin


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
    domain = serializers.SerializerMethodField(
        help_text='The link\'s site (host, lower case, no "www."; "" for none): '
        "/api/domains/{domain}/articles/ lists its articles."
    )
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
    url = serializers.SerializerMethodField(help_text="This article in the API.")
    html_url = serializers.SerializerMethodField(help_text="The article's web page.")

    @extend_schema_field(serializers.CharField())
    def get_domain(self, article: Article) -> str:
        return validation.link_domain(article.link)

    @extend_schema_field(serializers.ChoiceField(choices=VOTE_CHOICES, allow_null=True))
    def get_my_vote(self, article: Article) -> str | None:
        return article.my_vote.label if article.my_vote is not None else None

    @extend_schema_field(serializers.URLField())
    def get_url(self, article: Article) -> str:
        return article_url(article.id, self.context.get("request"))

    @extend_schema_field(serializers.URLField())
    def get_html_url(self, article: Article) -> str:
        return article_html_url(article.id, self.context.get("request"))


@extend_schema_serializer(many=False)  # a list action answering one page object
class ArticlePageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Articles in the whole listing.")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ArticleSerializer(many=True)


class SearchFields(serializers.Serializer):
    """What a page of search results (articles or comments) adds to its listing's page."""

    words = serializers.ListField(
        child=serializers.CharField(), help_text="The words looked for, as normalised."
    )
    excluded = serializers.ListField(
        child=serializers.CharField(), help_text="The words left out (`-word`), normalised."
    )
    count_exact = serializers.BooleanField(
        help_text="False when `count` is an estimate: a search of very common words stops "
        "after a bounded amount of work, so the results listed are exact and in order but "
        "their total is estimated."
    )
    complete = serializers.BooleanField(
        help_text="False when this page may lack results the search has not reached yet "
        "(it stopped after a bounded amount of work): asking for the page again goes on "
        "from where it stopped."
    )


def search_fields(page: SearchPage | CommentSearchPage) -> dict[str, Any]:
    """SearchFields' values of `page`."""
    return {
        "words": list(page.words),
        "excluded": list(page.excluded),
        "count_exact": page.count_exact,
        "complete": page.complete,
    }


class SearchPageSerializer(ArticlePageSerializer, SearchFields):
    """A page of the articles a search found."""


def search_page_data(page: SearchPage, request: HttpRequest) -> dict[str, Any]:
    return {**page_data(page, request), **search_fields(page)}


def article_data(
    article: Article,
    request: HttpRequest | None = None,
    *,
    origin: str | None = None,
    urls: tuple[Callable[[object], str], Callable[[object], str]] | None = None,
) -> dict[str, Any]:
    """What ArticleSerializer gives (it stays the schema; a test pins them equal), built as
    a plain dict: the serializer's per-field machinery was ~0.15 ms an article. A page
    passes its `origin` (see _origin) and `urls` (_article_urls) so the URL's host and
    patterns are worked out once."""
    if origin is None:
        origin = _origin(request)
    api_url, html_url = urls or _article_urls()
    vote = article.my_vote
    return {
        "id": article.id,
        "title": article.title,
        "link": article.link,
        "domain": validation.link_domain(article.link),
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
        "url": origin + api_url(article.id),
        "html_url": origin + html_url(article.id),
    }


def _article_urls() -> tuple[Callable[[object], str], Callable[[object], str]]:
    """An article's two addresses (the API's, the page's) from its id; the URLconf and
    script prefix looked up once for both (each look-up is a thread-local's, ~1-2 µs)."""
    under = (get_urlconf(), get_script_prefix())
    return (
        url_of("api:article-detail", under=under),
        url_of("articles:article-detail", under=under),
    )


# Content-addressed (a time's text never changes), 4,096 times: a page shows the same
# articles' times request after request, and formatting them was a twentieth of an API page.
_iso_texts: Cache[float, str] = Cache("api_times", Kind.CONTENT, entries=4096)


def _iso(timestamp: float) -> str:
    """DRF's DateTimeField output for a UTC time: ISO 8601 with Z."""
    kept = _iso_texts.get(timestamp)
    if kept is None:
        text = datetime.fromtimestamp(timestamp, tz=UTC).isoformat()
        kept = text[:-6] + "Z" if text.endswith("+00:00") else text
        _iso_texts.put(timestamp, kept)
    return kept


# A listing's articles are the Article objects the store keeps decoded while their hash
# is unchanged ("article_hashes"), frozen: their fields are kept by identity (the entry
# holds the article, so its id stays its own), and building them was a tenth of a page.
_fields: Cache[tuple[Any, ...], tuple[Article, dict[str, Any]]] = Cache(
    "api_articles", Kind.CONTENT, entries=4096
)


def page_data(page: Page[Article], request: HttpRequest) -> dict[str, Any]:
    """DRF's page-number shape for one page of a listing."""
    origin, urls = _origin(request), _article_urls()
    where = (origin, get_urlconf(), get_script_prefix())
    results = []
    for article in page.items:
        kept = _fields.get((id(article), *where))
        if kept is None or kept[0] is not article:
            kept = (article, article_data(article, origin=origin, urls=urls))
            _fields.put((id(article), *where), kept)
        row = dict(kept[1])
        row["groups"] = list(row["groups"])  # each answer its own lists
        results.append(row)
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
    removed_at = serializers.DateTimeField(
        required=False, help_text="When staff removed the article (410), ISO 8601 in UTC."
    )
    reason = serializers.CharField(
        required=False, help_text="Why staff removed it (410), as the moderation log says."
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


_VOTES = {label: Vote.from_label(label) for label in VOTE_CHOICES}


def plain_vote(data: Any) -> Vote | None:
    """The vote of a body whose `value` is plainly up, down or none (other fields ignored),
    as VoteSerializer reads it; None for any other body."""
    value = data.get("value") if type(data) is dict else None
    return _VOTES.get(value) if type(value) is str else None


def vote_value(data: Any) -> Vote:
    """The vote a body asks for, as VoteSerializer reads it (other fields ignored), which
    checks any body not plainly one of the three: a serializer made and run for every
    vote was a tenth of its time. Raises its ValidationError."""
    vote = plain_vote(data)
    if vote is not None:
        return vote
    serializer = VoteSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    vote = serializer.validated_data["value"]  # validate_value's
    assert isinstance(vote, Vote)
    return vote


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
