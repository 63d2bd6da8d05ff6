"""API tokens: made here, stored as digests (articles.models.ApiToken), and revoked.

A key is 40 random hex characters, sent as `Authorization: Token <key>`; the database keeps
its SHA-256 only, so a copy of the database (a backup, a leak) gives no usable token. A
fast hash suffices: the key is random, not a password to guess.

A token deleted by any route (user_tokens_revoke, the admin, the oldest past
TOKENS_PER_USER), and every token of a user whose password is changed or reset (any save
of a new password), stamps the user's credential epoch (store.people): the token stops
working in every process at once, however long a process keeps it (api.tokens).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save

from articles.models import ApiToken
from articles.store import people

# Each POST to the token endpoint makes a new token; past this many a user's oldest goes.
TOKENS_PER_USER = 10


def token_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def token_create(*, user: Any) -> str:
    """A new API token for `user`; returns its key, which is stored nowhere (only its
    digest), so this is the one time it can be shown. Keeps the user's newest
    TOKENS_PER_USER tokens."""
    key = secrets.token_hex(20)
    ApiToken.objects.create(digest=token_digest(key), prefix=key[:8], user=user)
    old = ApiToken.objects.filter(user=user).order_by("-created", "-pk")[TOKENS_PER_USER:]
    ApiToken.objects.filter(pk__in=list(old.values_list("pk", flat=True))).delete()
    return key


def user_tokens_revoke(*, user: Any) -> int:
    """Delete every API token of `user`; returns how many there were."""
    count, _ = ApiToken.objects.filter(user=user).delete()
    people.credentials_revoked(user.pk)
    return int(count)


def user_token_count(*, user_id: int | None) -> int:
    return ApiToken.objects.filter(user_id=user_id).count() if user_id is not None else 0


def _token_deleted(sender: Any, instance: ApiToken, **kwargs: Any) -> None:
    people.credentials_revoked(instance.user_id)


def _password_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    # AbstractBaseUser.set_password() keeps the new raw password in `_password` until the
    # save after it: a password changed or reset by any route (the app's pages, Django's
    # reset views, the admin, changepassword) revokes the tokens made with the old one.
    if getattr(instance, "_password", None) is not None and not kwargs.get("created"):
        ApiToken.objects.filter(user=instance).delete()


post_delete.connect(_token_deleted, sender=ApiToken, dispatch_uid="articles-token-epoch")
post_save.connect(_password_changed, sender=get_user_model(), dispatch_uid="articles-user-pw")
