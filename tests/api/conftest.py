"""Fixtures of the REST API tests: DRF's APIClient logged in by token, as each kind of user."""

from __future__ import annotations

import time

import pytest
from django.urls import NoReverseMatch, reverse
from rest_framework.test import APIClient

from articles.store import services, tokens
from articles.types import Article, NewPost

WEEK = 604_800


def page_path(article_id: int) -> str:
    """Where an article's web page is: named by the pages once they are mounted."""
    try:
        return reverse("articles:article-detail", args=[article_id])
    except NoReverseMatch:
        return f"/articles/{article_id}/"


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


def _client_for(user) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {tokens.token_create(user=user)}")
    client.user = user  # type: ignore[attr-defined]
    return client


@pytest.fixture
def as_user(make_user) -> APIClient:  # type: ignore[no-untyped-def]
    return _client_for(make_user("bob"))


@pytest.fixture
def as_poster(make_user) -> APIClient:  # type: ignore[no-untyped-def]
    return _client_for(make_user("ann"))


@pytest.fixture
def as_staff(make_user) -> APIClient:  # type: ignore[no-untyped-def]
    return _client_for(make_user("mod", staff=True))


@pytest.fixture
def post(as_poster):  # type: ignore[no-untyped-def]
    """Post an article as `ann` straight through the store; `age` in seconds ago."""

    def make(title: str = "Hello", link: str = "", age: float = 0, **kwargs) -> Article:  # type: ignore[no-untyped-def]
        user = as_poster.user
        return services.article_post(
            NewPost(
                user_id=user.pk,
                poster_name=user.username,
                title=title,
                link=link or f"https://example.org/{title.replace(' ', '-').lower()}",
                now=time.time() - age,
                **kwargs,
            )
        )

    return make
