"""Where the app sends people to log in: every login address it makes (page links, the
vote arrows, redirects of login_required, staff pages, the browsable API) comes from here,
so a host's own login (django.contrib.auth.urls, allauth, SSO) is the one login page.

The page is, in this order:
1. ARTICLES_LOGIN_URL, when set (a path, a full URL or a URL name);
2. the host's LOGIN_URL, when the host changed it from Django's default "/accounts/login/";
3. "/accounts/login/" itself when it is a page of the host's URLconf (Django's default
   LOGIN_URL with `path("accounts/", include("django.contrib.auth.urls"))`, or the app
   mounted at the root);
4. else the app's own login page ("articles:login").

The app's own page takes a vote to cast after the login (`vote_on`, `direction`: see
web/intents.py). Another login page knows nothing of votes, so a vote goes there as its
`next`: the vote's offer (/a/<id>/vote/offer/), a form of the vote once logged in. A
comment vote goes to its offer (/c/<id>/vote/offer/) through any login page.

The resolved page is a content-addressed cache ("login_page": keyed by both settings, the
URLconf and the script prefix, so never stale; any settings change empties it).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.conf import global_settings, settings
from django.http import HttpResponseRedirect, QueryDict
from django.shortcuts import resolve_url
from django.urls import Resolver404, get_script_prefix, get_urlconf, resolve, reverse
from django.utils.functional import lazy

from articles import conf
from articles.caches import Cache, Kind

OWN = "articles:login"
_pages: Cache[tuple[object, ...], tuple[str, bool]] = Cache("login_page", Kind.CONTENT, entries=64)


def address() -> str:
    """The login page's address, without `next`."""
    return _page()[0]


def is_own() -> bool:
    """Is the login page the app's own (which casts a vote asked for while logged out)?"""
    return _page()[1]


# For login_required(login_url=...): the page as it is when a request asks.
LOGIN_URL: Any = lazy(address, str)()


def url(
    next: str = "",
    *,
    vote: tuple[int, str] | None = None,
    request: Any = None,
    safe: str = "/",
    **own: str,
) -> str:
    """The login page with `next`, added to its own query as redirect_to_login does.
    `vote` (article id, "up" or "down") is the vote to cast after it; `own` are more query
    values for the app's own page only (a signed intent). A login page on another site
    gets `next` as a full address when `request` is given. `safe`: characters left as
    they are in the query ("/", as Django's urlencode filter)."""
    page, mine = _page()
    if mine:
        extra = own or ({"vote_on": str(vote[0]), "direction": vote[1]} if vote else {})
        return _with_query(page, {"next": next, **extra}, safe)
    if vote is not None:
        next = vote_page(vote[0], vote[1], next, safe)
    if request is not None and urlsplit(page).netloc not in ("", request.get_host()):
        next = request.build_absolute_uri(next)
    return _with_query(page, {"next": next}, safe)


def vote_link(article_id: int, direction: str, back: str) -> str:
    """Where a logged-out vote arrow leads: the app's login page with the vote, or the
    vote's own page, which sends a visitor on to the host's login and back."""
    if is_own():
        return url(back, vote=(article_id, direction))
    return vote_page(article_id, direction, back)


def vote_page(article_id: int, direction: str, back: str, safe: str = "/") -> str:
    """The page that offers the vote to a logged-in user: a form of it."""
    page = reverse("articles:article-vote-offer", args=[article_id])
    return _with_query(page, {"direction": direction, "next": back}, safe)


def comment_vote_page(comment_id: int, direction: str, back: str, safe: str = "/") -> str:
    """The page that offers a comment vote to a logged-in user, a form of it; a logged-out
    comment arrow leads there, and it sends a visitor on to the login page and back."""
    page = reverse("articles:comment-vote-offer", args=[comment_id])
    return _with_query(page, {"direction": direction, "next": back}, safe)


def redirect(next: str, request: Any = None) -> HttpResponseRedirect:
    """Log in first, then come back to `next` (redirect_to_login's, to this page)."""
    return HttpResponseRedirect(url(next, request=request))


def _with_query(page: str, values: dict[str, str], safe: str) -> str:
    parts = list(urlsplit(page))
    query = QueryDict(parts[3], mutable=True)
    for name, value in values.items():
        query[name] = value
    parts[3] = query.urlencode(safe=safe)
    return urlunsplit(parts)


def _page() -> tuple[str, bool]:
    key = (conf.get("LOGIN_URL"), settings.LOGIN_URL, get_urlconf(), get_script_prefix())
    found = _pages.get(key)
    if found is None:
        found = _resolved()
        _pages.put(key, found)
    return found


def _resolved() -> tuple[str, bool]:
    own = reverse(OWN)
    chosen = conf.get("LOGIN_URL")
    host = settings.LOGIN_URL
    if not chosen and host != global_settings.LOGIN_URL:
        chosen = host
    if not chosen and _is_a_page(str(host)):
        chosen = host
    if not chosen:
        return own, True
    page = str(resolve_url(chosen))
    return page, page == own


def _is_a_page(path: str) -> bool:
    try:
        resolve(path)
    except Resolver404:
        return False
    return True
