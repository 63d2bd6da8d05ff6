"""Token authentication with the token -> user lookup kept in each process for a few
seconds: the database query was a fifth of a vote's time; and token revocation.

A kept entry is dropped at once in the process that deletes the token, or deletes,
deactivates or changes the user (signals); other processes drop it when it expires,
ARTICLES_TOKEN_CACHE_SECONDS (5 s by default) after it was read. 0 turns the cache off.
So a revoked token (user_tokens_revoke, or a password change or reset: any save of a
new password) stops working at once in the process that revoked it, and within those
seconds in every other.

Shared by a process's threads: see articles/kept.py.
"""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from articles import conf
from articles.kept import KeptUsers

MAX_TOKENS = 10_000

_cache = KeptUsers(MAX_TOKENS)  # token key -> (user, token)
_kept = _cache.entries


class CachedTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        seconds = conf.token_cache_seconds()
        now = time.monotonic()
        kept = _cache.get(key, now)
        if kept is not None:
            return kept
        seen = _cache.forgets
        user, token = super().authenticate_credentials(key)
        if seconds > 0:
            _cache.keep(key, now + seconds, user, token, seen=seen)
        return user, token


def user_tokens_revoke(*, user: Any) -> int:
    """Delete every API token of `user` (the post_delete signal forgets each one here);
    returns how many there were."""
    count, _ = Token.objects.filter(user=user).delete()
    forget_user(user.pk)
    return int(count)


forget_token = _cache.forget
forget_user = _cache.forget_user
clear = _cache.clear


def _token_deleted(sender: Any, instance: Token, **kwargs: Any) -> None:
    forget_token(instance.key)


def _user_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    # AbstractBaseUser.set_password() keeps the new raw password in `_password` until the
    # save after it: a password changed or reset by any route (the app's pages, Django's
    # reset views, the admin, changepassword) revokes the tokens made with the old one.
    if getattr(instance, "_password", None) is not None and not kwargs.get("created"):
        Token.objects.filter(user=instance).delete()
    forget_user(instance.pk)


post_delete.connect(_token_deleted, sender=Token, dispatch_uid="articles-token-deleted")
post_save.connect(_token_deleted, sender=Token, dispatch_uid="articles-token-saved")
post_delete.connect(_user_changed, sender=get_user_model(), dispatch_uid="articles-user-deleted")
post_save.connect(_user_changed, sender=get_user_model(), dispatch_uid="articles-user-saved")
