"""API tokens: made here, stored as digests (articles.models.ApiToken), the token -> user
lookup kept in each process for a few seconds (the database query was a fifth of a vote's
time), and revocation.

A key is 40 random hex characters, sent as `Authorization: Token <key>`; the database keeps
its SHA-256 only, so a copy of the database (a backup, a leak) gives no usable token. A
fast hash suffices: the key is random, not a password to guess.

A kept entry is dropped at once in the process that deletes the token, or deletes,
deactivates or changes the user (signals); other processes drop it when it expires,
ARTICLES_TOKEN_CACHE_SECONDS (5 s by default) after it was read. 0 turns the cache off.
So a revoked token (user_tokens_revoke, or a password change or reset: any save of a
new password) stops working at once in the process that revoked it, and within those
seconds in every other.

Shared by a process's threads: see articles/kept.py.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from articles import conf
from articles.kept import KeptUsers
from articles.models import ApiToken

MAX_TOKENS = 10_000
# Each POST to the token endpoint makes a new token; past this many a user's oldest goes.
TOKENS_PER_USER = 10

_cache = KeptUsers(MAX_TOKENS)  # token digest -> (user, token)
_kept = _cache.entries


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


class CachedTokenAuthentication(TokenAuthentication):
    model = ApiToken

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        digest = token_digest(key)
        seconds = conf.token_cache_seconds()
        now = time.monotonic()
        kept = _cache.get(digest, now)
        if kept is not None:
            return kept
        seen = _cache.forgets
        try:
            token = ApiToken.objects.select_related("user").get(digest=digest)
        except ApiToken.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if seconds > 0:
            _cache.keep(digest, now + seconds, token.user, token, seen=seen)
        return token.user, token


def user_tokens_revoke(*, user: Any) -> int:
    """Delete every API token of `user` (the post_delete signal forgets each one here);
    returns how many there were."""
    count, _ = ApiToken.objects.filter(user=user).delete()
    forget_user(user.pk)
    return int(count)


def user_token_count(*, user_id: int | None) -> int:
    return ApiToken.objects.filter(user_id=user_id).count() if user_id is not None else 0


forget_token = _cache.forget
forget_user = _cache.forget_user
clear = _cache.clear


def _token_deleted(sender: Any, instance: ApiToken, **kwargs: Any) -> None:
    forget_token(instance.digest)


def _user_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    # AbstractBaseUser.set_password() keeps the new raw password in `_password` until the
    # save after it: a password changed or reset by any route (the app's pages, Django's
    # reset views, the admin, changepassword) revokes the tokens made with the old one.
    if getattr(instance, "_password", None) is not None and not kwargs.get("created"):
        ApiToken.objects.filter(user=instance).delete()
    forget_user(instance.pk)


post_delete.connect(_token_deleted, sender=ApiToken, dispatch_uid="articles-token-deleted")
post_save.connect(_token_deleted, sender=ApiToken, dispatch_uid="articles-token-saved")
post_delete.connect(_user_changed, sender=get_user_model(), dispatch_uid="articles-user-deleted")
post_save.connect(_user_changed, sender=get_user_model(), dispatch_uid="articles-user-saved")
