"""Atom feeds of top, new, good and each group's articles (Django's syndication framework)."""

from __future__ import annotations

from datetime import datetime

from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed
from django.utils.html import linebreaks

from articles import conf, selectors
from articles.errors import GroupNotFound, InvalidInput
from articles.templatetags.articles_tags import safe_url
from articles.types import Article, Group, Order


class ArticleFeed(Feed):
    feed_type = Atom1Feed
    heading = "articles"  # "<site name>: <heading>" is the feed's title

    def title(self) -> str:
        return f"{conf.site_name()}: {self.heading}"

    def subtitle(self) -> str:
        return f"Articles voted on by the {conf.site_name()} community."

    def link(self) -> str:
        return reverse("articles:home")

    def item_title(self, item: Article) -> str:
        return item.title

    def item_link(self, item: Article) -> str:
        return reverse("articles:article-detail", args=[item.id])

    def item_description(self, item: Article) -> str:
        parts = [f"{item.votes} up, {item.downvotes} down, posted by {item.poster_name}."]
        if safe_url(item.link):
            parts.append(f"Link: {item.link}")
        if item.text:
            parts.append(item.text)
        # Atom readers render the summary as HTML (type="html"): escape what users wrote.
        return linebreaks("\n\n".join(parts), autoescape=True)

    def item_author_name(self, item: Article) -> str:
        return item.poster_name

    def item_pubdate(self, item: Article) -> datetime:
        return item.posted_at

    def item_categories(self, item: Article) -> tuple[str, ...]:
        return item.groups


class TopFeed(ArticleFeed):
    heading = "top articles"

    def link(self) -> str:
        return reverse("articles:top")

    def items(self) -> list[Article]:
        return selectors.article_list(order=Order.SCORE).items


class NewFeed(ArticleFeed):
    heading = "new articles"

    def link(self) -> str:
        return reverse("articles:new")

    def items(self) -> list[Article]:
        return selectors.article_list(order=Order.TIME).items


class GoodFeed(ArticleFeed):
    heading = "good articles"

    def subtitle(self) -> str:
        return f"Articles with at least {conf.good_votes()} up-votes, newest first."

    def items(self) -> list[Article]:
        return selectors.good_article_page(per_page=conf.home_good()).items


class GroupFeed(ArticleFeed):
    def get_object(self, request: HttpRequest, name: str) -> Group:
        try:
            return selectors.group_get(name=name)
        except (GroupNotFound, InvalidInput):
            raise Http404("No such group.") from None  # bad data stays a 503 naming its key

    def title(self, obj: Group) -> str:  # type: ignore[override]
        return f"{conf.site_name()}: {obj.name}"

    def subtitle(self, obj: Group) -> str:  # type: ignore[override]
        return obj.description or f"Articles in {obj.name}."

    def link(self, obj: Group) -> str:  # type: ignore[override]
        return reverse("articles:group-detail", args=[obj.name])

    def items(self, obj: Group) -> list[Article]:
        return selectors.group_article_list(name=obj.name, order=Order.SCORE).items
