"""A short-lived cache of listing pages for visitors with no session, in each process.

The anonymous listing pages are the same for every such visitor; rendering 25 rows costs
about 15x a bare view. A page is kept ARTICLES_ANONYMOUS_PAGE_SECONDS (2 s by default), so a
visitor sees a vote or a post at most that late. Only a request with neither a session
cookie nor a messages cookie is served from it or stored in it: a page made for someone
(their votes, their name, a CSRF token, a message) is never shown to anyone else, and a
logged-in user always sees their own vote at once.

Shared by a process's threads (gunicorn's gthread workers): a lookup needs no lock (an
entry is an immutable tuple; two threads making the same page store the same page), a
store and its eviction take `_lock` (an OrderedDict's reordering is not atomic).
"""

from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from articles import conf

MAX_PAGES = 512  # query strings are the visitor's to choose: the cache stays bounded

_pages: OrderedDict[str, tuple[float, bytes, str]] = OrderedDict()
_lock = threading.Lock()


def anonymous_cache(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Serve `view`'s 200 GET answers to session-less visitors from the cache."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        seconds = conf.anonymous_page_seconds()
        if seconds <= 0 or request.method != "GET" or not _shared(request):
            return view(request, *args, **kwargs)
        key = request.get_full_path()
        now = time.monotonic()
        kept = _pages.get(key)
        if kept is not None and kept[0] > now:
            return HttpResponse(kept[1], content_type=kept[2])
        response = view(request, *args, **kwargs)
        if response.status_code == 200 and not response.cookies and not response.streaming:
            kept = (now + seconds, response.content, response["Content-Type"])
            with _lock:
                _pages[key] = kept
                _pages.move_to_end(key)
                while len(_pages) > MAX_PAGES:
                    _pages.popitem(last=False)
        return response

    return wrapper


def clear() -> None:
    with _lock:
        _pages.clear()


def forget(*paths: str) -> None:
    """Drop the kept pages under any of `paths` (a path and its query strings, and the
    pages below it: "/a/5/" takes "/a/5/?sort=new" and "/a/5/c/9/" too)."""
    with _lock:
        for key in [k for k in _pages if k.startswith(paths)]:
            del _pages[key]


def _shared(request: HttpRequest) -> bool:
    """A visitor with no session and no pending message: the page is everyone's."""
    cookies = request.COOKIES
    if settings.SESSION_COOKIE_NAME in cookies or "messages" in cookies:
        return False
    user = getattr(request, "user", None)
    return user is None or not user.is_authenticated
