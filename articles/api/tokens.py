"""Token authentication with the token -> user lookup kept in each process for a few
seconds: the database query was a fifth of a vote's time; and token revocation.

A kept entry is dropped at once in the process that deletes the token, or deletes,
deactivates or changes the user (signals); other processes drop it when it expires,
ARTICLES_TOKEN_CACHE_SECONDS (5 s by default) after it was read. 0 turns the cache off.
So a revoked token (user_tokens_revoke, or a password change or reset: any save of a
new password) stops working at once in the process that revoked it, and within those
seconds in every other.

Shared by a process's threads (gunicorn's gthread workers): changes take `_lock`, and a
token read before a forget in this process is not kept after it (`_forgets` counts them),
so a thread that read a token just before it was revoked cannot bring it back.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from articles import conf

MAX_TOKENS = 10_000

_kept: dict[str, tuple[float, Any, Any]] = {}  # key -> (expires, user, token)
_lock = threading.Lock()
_forgets = 0  # how many forgets this process has seen (see the module)


class CachedTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        seconds = conf.token_cache_seconds()
        now = time.monotonic()
        kept = _kept.get(key)
        if kept is not None and kept[0] > now:
            return kept[1], kept[2]
        forgets = _forgets
        user, token = super().authenticate_credentials(key)
        if seconds > 0:
            with _lock:
                if _forgets == forgets:  # else it may be this token that was revoked
                    if len(_kept) >= MAX_TOKENS:
                        _kept.clear()
                    _kept[key] = (now + seconds, user, token)
        return user, token


def user_tokens_revoke(*, user: Any) -> int:
    """Delete every API token of `user` (the post_delete signal forgets each one here);
    returns how many there were."""
    count, _ = Token.objects.filter(user=user).delete()
    forget_user(user.pk)
    return int(count)


def forget_token(key: str) -> None:
    global _forgets
    with _lock:
        _forgets += 1
        _kept.pop(key, None)


def forget_user(pk: Any) -> None:
    global _forgets
    with _lock:
        _forgets += 1
        for key in [k for k, (_, user, _) in _kept.items() if user.pk == pk]:
            del _kept[key]


def clear() -> None:
    global _forgets
    with _lock:
        _forgets += 1
        _kept.clear()


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
