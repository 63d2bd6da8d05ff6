"""Baseline B operations, written the way the Django docs teach: Paginator, F() updates,
a transaction around the vote, select_related-free querysets of one model."""

from __future__ import annotations

import time

from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import F

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
