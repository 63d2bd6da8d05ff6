"""The logged-in user of a session kept in each process for a few seconds, for the app's own
views: loading the session and then the user were two database queries on every vote and
page, a third of a session vote's time.

Only a user Django itself authenticated is kept: after AuthenticationMiddleware's full check
(session found, user active, password hash of the session still valid) answered for the
session cookie's own key. The host's settings, its session engine and its own views are
untouched; only views wrapped in `session_user` read the kept user, and the vote, wrapped
in `session_user_unchecked`, checks it in its own script (http.guarded).

An authorization cache (articles.kept, articles.caches "session_users", MAX_SESSIONS
entries): a logout, a password change, a deactivation or a deletion of the user stamps
their credential epoch in Redis, and every process refuses its kept entry at its next
use. An entry also expires ARTICLES_SESSION_CACHE_SECONDS (5 s by default) after it was
read: the bound for a session row deleted some other way. 0 turns it off.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.db.models.signals import post_delete, post_save
from django.http import HttpRequest, HttpResponse
from django.utils.functional import empty

from articles import conf
from articles.kept import KeptUsers, Unchecked
from articles.store import people

MAX_SESSIONS = 10_000

_cache = KeptUsers("session_users", MAX_SESSIONS)  # session key -> user
_kept = _cache.entries

# Set on a request given a kept user with its credential epoch unread (its Unchecked).
_UNCHECKED = "articles_session_unchecked"
# Set on a request whose kept user's epoch was read: (pk, unread replies or None).
_UNREAD = "articles_session_inbox_unread"


def session_user(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Give `view` the session's user from the cache when it is kept there."""
    return _with_session_user(view, unchecked=False)


def session_user_unchecked(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """As session_user, but a kept user is given with its credential epoch unread, for a
    view that reads it in a round trip of its own (the vote, http.guarded): unchecked()
    says what to check, authenticate_again() reads the session anew when it fails."""
    return _with_session_user(view, unchecked=True)


def _with_session_user(
    view: Callable[..., HttpResponse], *, unchecked: bool
) -> Callable[..., HttpResponse]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        seconds = conf.session_cache_seconds()
        key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
        if seconds <= 0 or not key:
            return view(request, *args, **kwargs)
        if unchecked:
            found = _cache.unchecked(key)
            if found is not None:
                request.user = found[0]
                setattr(request, _UNCHECKED, Unchecked(key, found[2]))
                return view(request, *args, **kwargs)
        else:
            kept = _cache.get(key, functools.partial(_epoch_and_unread, request))
            if kept is not None:
                request.user = kept[0]
                return view(request, *args, **kwargs)
        read_at, expires = time.time(), time.monotonic() + seconds
        response = view(request, *args, **kwargs)
        _keep(request, key, read_at, expires)
        return response

    return wrapper


def _epoch_and_unread(request: HttpRequest, user_id: int) -> float:
    """The kept user's credential epoch, read with their unread replies (the header's
    count: rendering), which are kept on the request for the page."""
    epoch, unread = people.credential_epoch_and_unread(user_id)
    setattr(request, _UNREAD, (user_id, unread))
    return epoch


def kept_unread(request: HttpRequest, user_id: int) -> int | None:
    """The unread replies of `user_id` read with the session's check, if they were."""
    found = getattr(request, _UNREAD, None)
    return found[1] if found is not None and found[0] == user_id else None


def unchecked(request: HttpRequest) -> Unchecked | None:
    """The kept session that gave `request` its user with the epoch unread, if one did."""
    return getattr(request, _UNCHECKED, None)


def authenticate_again(request: HttpRequest) -> None:
    """The unchecked session's user had their credentials revoked since it was kept (a
    logout elsewhere, a password change, a deactivation): drop it and let Django read the
    session and its user again, as if never kept. request.user is anonymous if the session
    is no longer logged in; if it still is, it is kept anew."""
    found = unchecked(request)
    if found is None:
        return
    delattr(request, _UNCHECKED)
    _cache.forget(found.key)
    read_at = time.time()
    request.user = auth.get_user(request)
    _keep(request, found.key, read_at, time.monotonic() + conf.session_cache_seconds())


def _keep(request: HttpRequest, key: str, read_at: float, expires: float) -> None:
    """Keep the user the view saw, if Django authenticated it for this very session key
    (and only if the view looked: an unread lazy user is not loaded here)."""
    user = getattr(request, "user", None)
    wrapped = getattr(user, "_wrapped", user)
    if wrapped is None or wrapped is empty or not wrapped.is_authenticated:
        return  # not looked up by the view, or anonymous
    session = getattr(request, "session", None)
    if session is None or session.session_key != key or session.is_empty():
        return  # the cookie's session was missing, flushed or replaced during the request
    _cache.keep(key, wrapped, None, read_at=read_at, expires=expires)


forget_session = _cache.forget
forget_user = _cache.forget_user
clear = _cache.clear


def _logged_in_or_out(sender: Any, request: HttpRequest, user: Any = None, **kwargs: Any) -> None:
    forget_session(request.COOKIES.get(settings.SESSION_COOKIE_NAME))
    session = getattr(request, "session", None)
    forget_session(getattr(session, "session_key", None))
    if user is not None:
        forget_user(user.pk)


def _user_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    forget_user(instance.pk)


user_logged_in.connect(_logged_in_or_out, dispatch_uid="articles-session-login")
user_logged_out.connect(_logged_in_or_out, dispatch_uid="articles-session-logout")
post_delete.connect(
    _user_changed, sender=get_user_model(), dispatch_uid="articles-session-user-deleted"
)
post_save.connect(
    _user_changed, sender=get_user_model(), dispatch_uid="articles-session-user-saved"
)
