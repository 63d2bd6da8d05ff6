"""A short-lived cache of listing pages for visitors with no session, in each process.

The anonymous listing pages are the same for every such visitor; rendering 25 rows costs
about 15x a bare view. A TTL cache (articles.caches "anonymous_pages"): a page is kept
ARTICLES_ANONYMOUS_PAGE_SECONDS (2 s by default), at most MAX_PAGES of them (one per
address and language), so a visitor sees a vote or a post made in another process at
most that late. A write made in this process, through any surface, drops them at once
(store.scripts.written). Only a request with neither a session cookie nor a messages
cookie is served from it or stored in it: a page made for someone (their votes, their
name, a CSRF token, a message) is never shown to anyone else, and a logged-in user always
sees their own vote at once.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation

from articles import conf
from articles.caches import Cache, Kind
from articles.store import keys, scripts
from articles.types import Status
from articles.urlcache import url_for

MAX_PAGES = 512  # query strings are the visitor's to choose: the cache stays bounded

_pages: Cache[str, tuple[bytes, str]] = Cache("anonymous_pages", Kind.TTL, entries=MAX_PAGES)


def anonymous_cache(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Serve `view`'s 200 GET answers to session-less visitors from the cache."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        seconds = conf.anonymous_page_seconds()
        if seconds <= 0 or request.method != "GET" or not _shared(request):
            return view(request, *args, **kwargs)
        # Per language too (LocaleMiddleware picks one per visitor); after the path, so
        # forget() still finds a path's pages by their start.
        key = f"{request.get_full_path()}#{translation.get_language()}"
        kept = _pages.get(key)
        if kept is not None:
            return HttpResponse(kept[0], content_type=kept[1])
        expires = time.monotonic() + seconds
        response = view(request, *args, **kwargs)
        if response.status_code == 200 and not response.cookies and not response.streaming:
            _pages.put(key, (response.content, response["Content-Type"]), expires=expires)
        return response

    return wrapper


def clear() -> None:
    _pages.clear()


def forget(*paths: str) -> None:
    """Drop the kept pages under any of `paths` (a path and its query strings, and the
    pages below it: "/a/5/" takes "/a/5/?sort=new" and "/a/5/c/9/" too)."""
    _pages.drop_where(lambda key, page: key.startswith(paths))


def _written(sender: str, reply: Any = None, **kwargs: Any) -> None:
    """A write in this process: every kept page goes, but for a vote on a comment, which
    changes only its article's thread (the comment's hash, in the reply, names it)."""
    if sender == "comment_vote" and isinstance(reply, list) and int(reply[0]) != Status.OK:
        return  # refused: nothing changed
    article_id = None
    if sender == "comment_vote" and isinstance(reply, list):
        member = dict(zip(reply[3::2], reply[4::2], strict=False)).get(b"article", b"")
        article_id = keys.article_id_or_none(member.decode("utf-8", "replace"))
    if article_id is None:
        clear()
    else:
        forget(url_for("articles:article-detail", article_id))


scripts.written.connect(_written, dispatch_uid="articles-pagecache-written")


def _shared(request: HttpRequest) -> bool:
    """A visitor with no session and no pending message: the page is everyone's."""
    cookies = request.COOKIES
    if settings.SESSION_COOKIE_NAME in cookies or "messages" in cookies:
        return False
    user = getattr(request, "user", None)
    return user is None or not user.is_authenticated
