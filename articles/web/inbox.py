"""The replies inbox's pages: /inbox/ (private: the logged-in user's own) and marking read.

Showing the inbox marks nothing read: a GET changes nothing (a prefetch, a link preview or
a second tab must not clear the count), and the unread replies stay marked until their
reader says so, with "Mark all read" (a POST form: no JavaScript needed). It marks up to
the newest reply the page showed, so one that arrived meanwhile stays unread.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from articles.errors import InvalidInput
from articles.http.addresses import user_pk
from articles.http.loginpage import LOGIN_URL
from articles.store import selectors, services
from articles.web import rendering
from articles.web.helpers import html_errors, listing_status, page_param


@login_required(login_url=LOGIN_URL)
@require_GET
@never_cache
@html_errors
def inbox(request: HttpRequest) -> HttpResponse:
    """/inbox/: replies to the user's articles and comments, newest first, paged; the
    unread ones marked."""
    page = selectors.inbox_page(user_id=user_pk(request), page=page_param(request))
    return rendering.render(
        request, "articles/inbox.html", {"page": page}, status=listing_status(page)
    )


@login_required(login_url=LOGIN_URL)
@require_POST
@html_errors
def inbox_read(request: HttpRequest) -> HttpResponse:
    """Mark the replies read up to `up_to` (the newest the page showed; none given: all)."""
    raw = request.POST.get("up_to", "").strip()
    if raw and not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        raise InvalidInput("up_to", gettext("A reply's number is a whole number from 0."))
    services.inbox_mark_read(user_id=user_pk(request), up_to=int(raw) if raw else None)
    messages.success(request, gettext("Your replies are marked read."))
    return redirect("articles:inbox")
