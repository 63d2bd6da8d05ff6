"""Atom feeds of top, new, good and each group's articles, and of comments: an article's,
the site's newest and each user's (Django's syndication framework).

Each fetch counts against the "feed" rate limit (articles/store/ratelimits.py; 429 with
Retry-After past it). A feed's entries' HTML comes from markdown.render, whose
per-process cache makes a feed read again render nothing; and the feed's XML is kept in
the process too, content-addressed (articles.caches "feeds"): keyed by a digest of what
it is made of (the feed, its address, its object, the active language, its items as read
now, its title, subtitle and link), so never stale, and bounded by bytes (FEED_CACHE_BYTES,
32 MB). A feed read again, unchanged, costs its selector and the digest (~2 ms for 50 entries of
10,000 characters) instead of its XML (~50-100 ms for the same: Django's feed writer
escapes every character twice).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import translation
from django.utils.feedgenerator import Atom1Feed
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, gettext_lazy, ngettext

from articles import conf, markdown
from articles.caches import Cache, Kind
from articles.errors import GroupNotFound, InvalidInput
from articles.store import ratelimits, selectors
from articles.templatetags.articles_tags import safe_url
from articles.types import Article, Comment, Group, Order, Period

FEED_CACHE_BYTES = 32 * 1024 * 1024  # a feed of 50 long comments is ~2 MB
# digest -> (body, content type, Last-Modified)
_built: Cache[bytes, tuple[bytes, str, str | None]] = Cache(
    "feeds", Kind.CONTENT, entries=4096, max_bytes=FEED_CACHE_BYTES
)


class CountedFeed(Feed):
    """A feed whose every fetch counts against the "feed" rate limit first, and whose XML
    is kept while what it is made of stays the same."""

    def __call__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        ratelimits.check(request, "feed")  # RateLimited: html_errors makes it the 429
        key = self._digest(request, self.get_object(request, *args, **kwargs))
        kept = _built.get(key)
        if kept is not None:
            response = HttpResponse(kept[0], content_type=kept[1])
            if kept[2] is not None:
                response.headers["Last-Modified"] = kept[2]
            return response
        response = super().__call__(request, *args, **kwargs)
        if response.status_code == 200:
            built = (response.content, response["Content-Type"], response.get("Last-Modified"))
            _built.put(key, built, size=len(response.content) + 200)
        return response

    def _digest(self, request: HttpRequest, obj: Any) -> bytes:
        made_of = (
            type(self).__qualname__,
            request.build_absolute_uri(request.path),
            obj,
            translation.get_language(),
            *(self._part(name, obj) for name in ("items", "title", "subtitle", "link")),
        )
        return hashlib.blake2b(repr(made_of).encode(), digest_size=16).digest()

    def _part(self, name: str, obj: Any) -> Any:
        """The feed's `name` as Django's Feed reads it: a method of obj, or of nothing."""
        part = getattr(self, name, None)
        if not callable(part):
            return part
        return part(obj) if part.__code__.co_argcount == 2 else part()


_TOP_OF_THE_LAST = {
    Period.DAY: gettext_lazy("top articles of the last day"),
    Period.WEEK: gettext_lazy("top articles of the last week"),
    Period.MONTH: gettext_lazy("top articles of the last month"),
    Period.YEAR: gettext_lazy("top articles of the last year"),
}


def _formatted(text: str, **values: Any) -> SafeString:
    """A translated text (the app's own, so markup) with its values escaped in: the
    entries' summaries are HTML."""
    escaped = {name: conditional_escape(value) for name, value in values.items()}
    return mark_safe(text % escaped)  # noqa: S308 (every value escaped right here)


def clear() -> None:
    """Forget every kept feed (tests)."""
    _built.clear()


class ArticleFeed(CountedFeed):
    feed_type = Atom1Feed
    heading = gettext_lazy("articles")  # "<site name>: <heading>" is the feed's title

    def title(self) -> str:
        return f"{conf.site_name()}: {self.heading}"

    def subtitle(self) -> str:
        return gettext("Articles voted on by the %(site)s community.") % {"site": conf.site_name()}

    def link(self) -> str:
        return reverse("articles:home")

    def item_title(self, item: Article) -> str:
        return item.title

    def item_link(self, item: Article) -> str:
        return reverse("articles:article-detail", args=[item.id])

    def item_description(self, item: Article) -> str:
        # Atom readers render the summary as HTML (type="html"): escape what users wrote.
        net = item.votes - item.downvotes
        summary = ngettext(
            "%(net)s point (%(up)s up, %(down)s down), posted by %(poster)s.",
            "%(net)s points (%(up)s up, %(down)s down), posted by %(poster)s.",
            net,
        )
        parts: list[str] = [
            format_html(
                "<p>{}</p>",
                _formatted(
                    summary, net=net, up=item.votes, down=item.downvotes, poster=item.poster_name
                ),
            )
        ]
        link = safe_url(item.link)
        if link:
            anchor = format_html('<a href="{}">{}</a>', link, link)
            parts.append(
                format_html("<p>{}</p>", _formatted(gettext("Link: %(link)s"), link=anchor))
            )
        if item.text:
            parts.append(str(markdown.render(item.text)))
        return "\n".join(parts)

    def item_author_name(self, item: Article) -> str:
        return item.poster_name

    def item_pubdate(self, item: Article) -> datetime:
        return item.posted_at

    def item_updateddate(self, item: Article) -> datetime:
        return item.updated_at

    def item_categories(self, item: Article) -> tuple[str, ...]:
        return item.groups


class TopFeed(ArticleFeed):
    heading = gettext_lazy("top articles of all time")

    def link(self) -> str:
        return reverse("articles:top")

    def items(self) -> list[Article]:
        return selectors.top_article_list(period=Period.ALL).items


class TopPeriodFeed(ArticleFeed):
    """The top articles of the last day, week, month or year: one feed each."""

    def get_object(self, request: HttpRequest, period: str) -> Period:
        try:
            found = Period(period)
        except ValueError:
            raise Http404(gettext("No such period.")) from None
        if found is Period.ALL:
            raise Http404(gettext("The all-time feed is /feeds/top/."))
        return found

    def title(self, obj: Period) -> str:  # type: ignore[override]
        return f"{conf.site_name()}: {_TOP_OF_THE_LAST[obj]}"

    def link(self, obj: Period) -> str:  # type: ignore[override]
        return f"{reverse('articles:top')}?period={obj.value}"

    def items(self, obj: Period) -> list[Article]:
        return selectors.top_article_list(period=obj).items


class NewFeed(ArticleFeed):
    heading = gettext_lazy("new articles")

    def link(self) -> str:
        return reverse("articles:new")

    def items(self) -> list[Article]:
        return selectors.article_list(order=Order.TIME).items


class GoodFeed(ArticleFeed):
    heading = gettext_lazy("good articles")

    def subtitle(self) -> str:
        return gettext("Articles with at least %(votes)s up-votes, newest first.") % {
            "votes": conf.good_votes()
        }

    def items(self) -> list[Article]:
        return selectors.good_article_page(per_page=conf.home_good()).items


class GroupFeed(ArticleFeed):
    def get_object(self, request: HttpRequest, name: str) -> Group:
        try:
            return selectors.group_get(name=name)
        except (GroupNotFound, InvalidInput):
            raise Http404(
                gettext("No such group.")
            ) from None  # bad data stays a 503 naming its key

    def title(self, obj: Group) -> str:  # type: ignore[override]
        return f"{conf.site_name()}: {obj.name}"

    def subtitle(self, obj: Group) -> str:  # type: ignore[override]
        return obj.description or gettext("Articles in %(group)s.") % {"group": obj.name}

    def link(self, obj: Group) -> str:  # type: ignore[override]
        return reverse("articles:group-detail", args=[obj.name])

    def items(self, obj: Group) -> list[Article]:
        return selectors.group_article_list(name=obj.name, order=Order.SCORE).items


class CommentFeed(CountedFeed):
    """A feed of comments, newest first (visible ones only): each entry links to the
    comment on its article's page."""

    feed_type = Atom1Feed

    def item_title(self, item: Comment) -> str:
        if item.article_title:
            return gettext("Comment by %(author)s on %(title)s") % {
                "author": item.author_name,
                "title": item.article_title,
            }
        return gettext("Comment by %(author)s") % {"author": item.author_name}

    def item_link(self, item: Comment) -> str:
        return reverse("articles:comment-detail", args=[item.article_id, item.id])

    def item_description(self, item: Comment) -> str:
        return str(markdown.render(item.text))

    def item_author_name(self, item: Comment) -> str:
        return item.author_name

    def item_pubdate(self, item: Comment) -> datetime:
        return item.posted_at

    def item_updateddate(self, item: Comment) -> datetime:
        return item.edited_at or item.posted_at


class ArticleCommentsFeed(CommentFeed):
    """/feeds/a/<id>/comments/: an article's newest comments (visible ones only)."""

    def get_object(self, request: HttpRequest, article_id: int) -> Article:
        return selectors.article_get(article_id=article_id)  # ArticleNotFound: the 404 page

    def title(self, obj: Article) -> str:
        return gettext("%(site)s: comments on %(title)s") % {
            "site": conf.site_name(),
            "title": obj.title,
        }

    def subtitle(self, obj: Article) -> str:
        return gettext("The newest comments on “%(title)s”, newest first.") % {"title": obj.title}

    def link(self, obj: Article) -> str:
        return reverse("articles:article-detail", args=[obj.id]) + "#comments"

    def items(self, obj: Article) -> list[Comment]:
        return selectors.article_comments_feed(article_id=obj.id)


# Entries in the site's and each user's comments feed (one round trip each, as a page).
COMMENT_FEED_ENTRIES = 50


class RecentCommentsFeed(CommentFeed):
    """/feeds/comments/: the site's newest comments (the /comments/ page's)."""

    def title(self) -> str:
        return gettext("%(site)s: new comments") % {"site": conf.site_name()}

    def subtitle(self) -> str:
        return gettext("The newest comments on every article, newest first.")

    def link(self) -> str:
        return reverse("articles:recent-comments")

    def items(self) -> list[Comment]:
        return selectors.recent_comments(per_page=COMMENT_FEED_ENTRIES).items


class UserCommentsFeed(CommentFeed):
    """/feeds/u/<id>/comments/: a user's newest comments. By the account's number, so a
    reader's subscription survives a change of name."""

    def get_object(self, request: HttpRequest, user_id: int) -> Any:
        person = get_user_model().objects.filter(pk=user_id).first()
        if person is None:
            raise Http404(gettext("No such user."))
        return person

    def title(self, obj: Any) -> str:
        return gettext("%(site)s: comments by %(name)s") % {
            "site": conf.site_name(),
            "name": obj.get_username(),
        }

    def subtitle(self, obj: Any) -> str:
        return gettext("The newest comments by %(name)s, newest first.") % {
            "name": obj.get_username()
        }

    def link(self, obj: Any) -> str:
        return reverse("articles:user-comments", args=[obj.get_username()])

    def items(self, obj: Any) -> list[Comment]:
        return selectors.user_comments(user_id=obj.pk, per_page=COMMENT_FEED_ENTRIES).items
