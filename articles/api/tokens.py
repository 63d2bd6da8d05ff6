"""The API's token authentication, with the token -> user lookup kept in each process (the
database query was a fifth of a vote's time). Tokens are made and revoked in the store
(articles.store.tokens).

An authorization cache (articles.kept, articles.caches "api_tokens", MAX_TOKENS entries):
a revoked token (user_tokens_revoke, the admin, a password change or reset) stamps its
user's credential epoch in Redis, and every process refuses its kept entry at its next
use. An entry also expires ARTICLES_TOKEN_CACHE_SECONDS (5 s by default) after it was
read. 0 turns the cache off.
"""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save
from django.utils.translation import gettext
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from articles import conf
from articles.kept import KeptUsers
from articles.models import ApiToken
from articles.store.tokens import token_digest

MAX_TOKENS = 10_000

_cache = KeptUsers("api_tokens", MAX_TOKENS)  # token digest -> (user, token)
_kept = _cache.entries


class CachedTokenAuthentication(TokenAuthentication):
    model = ApiToken

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        digest = token_digest(key)
        seconds = conf.token_cache_seconds()
        kept = _cache.get(digest)
        if kept is not None:
            return kept
        read_at, expires = time.time(), time.monotonic() + seconds
        try:
            token = ApiToken.objects.select_related("user").get(digest=digest)
        except ApiToken.DoesNotExist:
            raise exceptions.AuthenticationFailed(gettext("Invalid token.")) from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(gettext("User inactive or deleted."))
        if seconds > 0:
            _cache.keep(digest, token.user, token, read_at=read_at, expires=expires)
        return token.user, token


forget_token = _cache.forget
forget_user = _cache.forget_user
clear = _cache.clear


# This process drops its own entries at once too: no epoch read is needed to refuse them.
def _token_changed(sender: Any, instance: ApiToken, **kwargs: Any) -> None:
    forget_token(instance.digest)


def _user_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    forget_user(instance.pk)


post_delete.connect(_token_changed, sender=ApiToken, dispatch_uid="articles-token-deleted")
post_save.connect(_token_changed, sender=ApiToken, dispatch_uid="articles-token-saved")
post_delete.connect(_user_changed, sender=get_user_model(), dispatch_uid="articles-user-deleted")
post_save.connect(_user_changed, sender=get_user_model(), dispatch_uid="articles-user-saved")
