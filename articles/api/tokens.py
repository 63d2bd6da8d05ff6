"""The API's token authentication, with the token -> user lookup kept in each process (the
database query was a fifth of a vote's time). Tokens are made and revoked in the store
(articles.store.tokens).

An authorization cache (articles.kept, articles.caches "api_tokens", MAX_TOKENS entries):
a revoked token (user_tokens_revoke, the admin, a password change or reset) stamps its
user's credential epoch in Redis, and every process refuses its kept entry at its next
use. Each use reads the epoch (one GET), but for a view whose handler reads it in its
own round trip (check_in_handler: the vote, http.guarded). An entry also expires
ARTICLES_TOKEN_CACHE_SECONDS (300 s by default) after it was read: the bound on what no
epoch records (a token row deleted by hand in SQL). 0 turns the cache off.
"""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.db.models.signals import post_delete, post_save
from django.utils.translation import gettext
from rest_framework import HTTP_HEADER_ENCODING, exceptions
from rest_framework.authentication import TokenAuthentication

from articles import conf
from articles.kept import KeptUsers, Unchecked
from articles.models import ApiToken
from articles.store.tokens import token_digest

MAX_TOKENS = 10_000

_cache = KeptUsers("api_tokens", MAX_TOKENS)  # token digest -> (user, token)
_kept = _cache.entries

# Set on a request (Django's) whose handler reads a kept token's credential epoch itself:
# None until a kept token authenticates it unread, then that token's Unchecked.
_UNCHECKED = "articles_token_unchecked"


# The Authorization scheme (DRF's default), matched as DRF matches it: in any case.
KEYWORD = "Token"
_SCHEME = KEYWORD.lower().encode()


def token_key(header: str | bytes | None) -> str | None:
    """The key of an `Authorization: Token <key>` header, split and decoded as DRF's
    TokenAuthentication does; "" for a Token header DRF refuses (no key, spaces in it,
    not UTF-8, or a header that is not ISO-8859-1), so that DRF's words refuse it; None
    for no header or another scheme. The one reading of the header, DRF's or lean's."""
    if not header:
        return None
    try:
        raw = header.encode(HTTP_HEADER_ENCODING) if isinstance(header, str) else header
    except UnicodeError:
        return ""
    parts = raw.split()
    if not parts or parts[0].lower() != _SCHEME:
        return None
    try:
        return parts[1].decode() if len(parts) == 2 else ""
    except UnicodeError:
        return ""


class CachedTokenAuthentication(TokenAuthentication):
    model = ApiToken
    keyword = KEYWORD
    http: Any = None  # the request being authenticated (an instance serves one request)

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        """DRF's, reading the header from META: DRF's request.headers copies every header
        of the request to find this one. A malformed header is DRF's to refuse."""
        self.http = _http(request)
        key = token_key(self.http.META.get("HTTP_AUTHORIZATION"))
        if key is None:
            return None
        if not key:
            return super().authenticate(request)  # its AuthenticationFailed, in its words
        return self.authenticate_credentials(key)

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        digest = token_digest(key)
        if self.http is not None and hasattr(self.http, _UNCHECKED):
            found = _unchecked(digest)
            if found is not None:
                user, token, unread = found
                mark_unchecked(self.http, unread)
                return user, token
        kept = _cache.get(digest)
        if kept is not None:
            return kept
        return _read(digest)


def unchecked_credentials(key: str) -> tuple[Any, Any, Unchecked | None] | None:
    """The user and token of `key`, for a guarded action, and what its handler must check:
    the kept ones with their epoch unread, or else read from the database now (and kept),
    as DRF's way would read them, with nothing to check (None). A token's first use in a
    process, or its first since its entry expired, is then no dearer than the read itself.
    None for a key the database refuses: DRF's way answers it, in its words."""
    digest = token_digest(key)
    found = _unchecked(digest)
    if found is not None:
        return found
    try:
        user, token = _read(digest)
    except exceptions.AuthenticationFailed:
        return None
    return user, token, None


def _unchecked(digest: str) -> tuple[Any, Any, Unchecked] | None:
    found = _cache.unchecked(digest)
    if found is None:
        return None
    user, token, revoked_since = found
    return user, token, Unchecked(digest, revoked_since)


def _read(digest: str) -> tuple[Any, Any]:
    """The token's user from the database, kept; AuthenticationFailed if none or inactive."""
    seconds = conf.token_cache_seconds()
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


def check_in_handler(request: Any) -> None:
    """`request`'s handler reads the credential epoch in a round trip of its own: a kept
    token authenticates it with no GET, and unchecked() says what to check."""
    setattr(_http(request), _UNCHECKED, None)


def mark_unchecked(request: Any, found: Unchecked) -> None:
    """`request` is authenticated by a kept token whose epoch its handler reads: `found`."""
    setattr(_http(request), _UNCHECKED, found)


def unchecked(request: Any) -> Unchecked | None:
    """The kept token that authenticated `request` with its epoch unread, if one did."""
    return getattr(_http(request), _UNCHECKED, None)


def authenticate_again(request: Any) -> None:
    """The unchecked token's credentials were revoked since it was kept: drop it and read
    it from the database, as if never kept. Raises AuthenticationFailed (the caller
    anonymous again) when the token or its user is gone or inactive."""
    found = unchecked(request)
    if found is None:
        return
    setattr(_http(request), _UNCHECKED, None)
    _cache.forget(found.key)
    try:
        request.user, request.auth = _read(found.key)
    except exceptions.AuthenticationFailed:
        request.user, request.auth = AnonymousUser(), None
        raise


def _http(request: Any) -> Any:
    return getattr(request, "_request", request)  # DRF's Request wraps Django's


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
