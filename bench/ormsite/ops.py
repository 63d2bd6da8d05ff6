"""Baseline B operations, written the way the Django docs teach: Paginator, F() updates,
a transaction around the vote, select_related-free querysets of one model, and search
with `icontains` or PostgreSQL's full-text search."""

from __future__ import annotations

import time

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import F, Q

from bench.ormsite.models import Article, Group, Vote

VOTE_SCORE = 432
WEEK = 7 * 86_400
PER_PAGE = 25


class VotingClosed(Exception):
    pass


def article_vote(db: str, article_id: int, user_id: int, value: int) -> Article:
    """Set a user's vote (1 up, -1 down, 0 none) atomically; the unique constraint keeps
    one vote per user per article."""
    with transaction.atomic(using=db):
        article = Article.objects.using(db).select_for_update().get(pk=article_id)
        if time.time() >= article.posted + WEEK:
            raise VotingClosed()
        current = Vote.objects.using(db).filter(article_id=article_id, user_id=user_id).first()
        old = current.value if current else 0
        if old == value:
            return article
        if current and value:
            current.value = value
            current.save(update_fields=["value"])
        elif current:
            current.delete()
        else:
            Vote.objects.using(db).create(article_id=article_id, user_id=user_id, value=value)
        up = (value == 1) - (old == 1)
        down = (value == -1) - (old == -1)
        Article.objects.using(db).filter(pk=article_id).update(
            votes=F("votes") + up,
            downvotes=F("downvotes") + down,
            score=F("score") + VOTE_SCORE * (up - down),
        )
    article.refresh_from_db(using=db)
    return article


def article_list(db: str, page: int, order: str = "-score") -> list[Article]:
    paginator = Paginator(Article.objects.using(db).order_by(order), PER_PAGE)
    return list(paginator.page(page).object_list)


def group_article_list(db: str, name: str, page: int, order: str = "-score") -> list[Article]:
    group = Group.objects.using(db).get(name=name)
    queryset = Article.objects.using(db).filter(groups=group).order_by(order)
    return list(Paginator(queryset, PER_PAGE).page(page).object_list)


def good_article_list(db: str, limit: int = 50, good_votes: int = 200) -> list[Article]:
    return list(Article.objects.using(db).filter(votes__gte=good_votes).order_by("-posted")[:limit])


def top_article_list(db: str, page: int, now: float, seconds: int = WEEK) -> list[Article]:
    queryset = Article.objects.using(db).filter(posted__gte=now - seconds).order_by("-score")
    return list(Paginator(queryset, PER_PAGE).page(page).object_list)


def article_search_icontains(db: str, words: list[str], exclude: list[str]) -> tuple[int, list]:
    """Search as the Django docs' first example does it: every word in the title or text
    (`icontains`, a scan of every row), ordered by score; Paginator's count and page 1."""
    queryset = Article.objects.using(db)
    for word in words:
        queryset = queryset.filter(Q(title__icontains=word) | Q(text__icontains=word))
    for word in exclude:
        queryset = queryset.exclude(Q(title__icontains=word) | Q(text__icontains=word))
    paginator = Paginator(queryset.order_by("-score"), PER_PAGE)
    return paginator.count, list(paginator.page(1).object_list)


SEARCH_VECTOR_ARGS = ("title", "text")
SEARCH_CONFIG = "english"


def search_vector() -> SearchVector:
    """The expression the GIN index is built on; the query must spell it the same way
    for PostgreSQL to use the index."""
    return SearchVector(*SEARCH_VECTOR_ARGS, config=SEARCH_CONFIG)


def article_search_fts(db: str, words: list[str], exclude: list[str]) -> tuple[int, list]:
    """PostgreSQL full-text search as the Django docs teach it (SearchVector over title
    and text, SearchQuery in web-search syntax for `-word`), over a GIN index on the same
    expression, ordered by score; Paginator's count and page 1."""
    query = SearchQuery(
        " ".join([*words, *(f"-{w}" for w in exclude)]),
        config=SEARCH_CONFIG,
        search_type="websearch",
    )
    queryset = (
        Article.objects.using(db)
        .annotate(search=search_vector())
        .filter(search=query)
        .order_by("-score")
    )
    paginator = Paginator(queryset, PER_PAGE)
    return paginator.count, list(paginator.page(1).object_list)
