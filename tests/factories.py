"""Test factories: the one way the tests make a user, a staff member, an article, a comment
and a group. Each goes through the real model or the store's own services."""

from __future__ import annotations

import itertools
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from articles.store import services
from articles.types import Article, Comment, NewPost
from tests.actors import staff_actor

PASSWORD = "pw-Secret-123"
_numbers = itertools.count(1)

# Who acts: a user of the database, or a bare user id (the store needs no account).
Who = AbstractBaseUser | int


def restart_numbering() -> None:
    """Unnamed users are user1, user2, ... again (each test's own, from its first)."""
    global _numbers
    _numbers = itertools.count(1)


def user(
    username: str | None = None, *, staff: bool = False, password: str = PASSWORD, email: str = ""
) -> Any:
    """A user in the database (`user<n>` unless named); needs the `db` fixture."""
    name = username or f"user{next(_numbers)}"
    return get_user_model().objects.create_user(
        username=name, email=email, password=password, is_staff=staff
    )


def staff(username: str | None = None, *, password: str = PASSWORD) -> Any:
    return user(username, staff=True, password=password)


def _id_and_name(who: Who) -> tuple[int, str]:
    if isinstance(who, int):
        return who, f"u{who}"
    return int(who.pk), who.get_username()


def article(
    who: Who = 1, title: str = "Hello world", link: str = "https://example.org/a", **fields: Any
) -> Article:
    """An article posted by `who` through services.article_post; `fields` are its other
    NewPost fields (text, groups, now, poster_name) or `idempotency_key`."""
    user_id, name = _id_and_name(who)
    fields.setdefault("poster_name", name)
    key = fields.pop("idempotency_key", None)
    post = NewPost(user_id=user_id, title=title, link=link, **fields)
    return services.article_post(post, idempotency_key=key)


def comment(
    who: Who, article_id: int, text: str = "A comment.", parent_id: int | None = None, **fields: Any
) -> Comment:
    """A comment (a reply when `parent_id` is given) by `who`, through services.comment_post."""
    user_id, name = _id_and_name(who)
    fields.setdefault("author_name", name)
    return services.comment_post(
        article_id=article_id, user_id=user_id, text=text, parent_id=parent_id, **fields
    )


def group(name: str = "redis", description: str = "", **fields: Any) -> str:
    """A registered group (made by staff unless `actor` says otherwise); returns its name."""
    fields.setdefault("actor", staff_actor())
    services.group_create(name=name, description=description, **fields)
    return name
