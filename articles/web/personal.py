"""A reader's own lists as pages: hide, save and their undoing (plain POST forms that
redirect back, no JavaScript needed), and /u/<name>/saved/, hidden/, upvoted/, which only
their owner may see: anyone else gets a 404, as if there were no such page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from articles.http import loginpage
from articles.http.addresses import user_pk
from articles.store import ratelimits, selectors, services
from articles.web import rendering, views
from articles.web.helpers import html_errors, listing_status, login_first, page_param, safe_next
from articles.web.sessionusers import session_user


def _changed(
    request: HttpRequest,
    fallback: str,
    change: Callable[[int], object],
    message: str | None,
    anchor: str = "",
) -> HttpResponse:
    """Log in first (then back to the page), count the "save" rate limit, make the
    `change` for the reader's pk, say `message` (None: nothing), and go back to `next`
    (else `fallback`) at `anchor`."""
    back = safe_next(request, fallback)
    if (login := login_first(request, back)) is not None:
        return login
    ratelimits.check(request, "save")
    change(user_pk(request))
    if message:
        messages.success(request, message)
    return redirect(f"{back.split('#')[0]}{anchor}" if anchor else back)


@require_POST
@session_user
@html_errors
def article_hide(request: HttpRequest, article_id: int, on: bool) -> HttpResponse:
    """Hide an article from the reader's listings (on=False: unhide); back to the page."""
    return _changed(
        request,
        reverse("articles:article-detail", args=[article_id]),
        lambda pk: services.article_hide(article_id=article_id, user_id=pk, hide=on),
        gettext("Hidden from your listings. Your hidden articles are on your page.")
        if on
        else None,
    )


@require_POST
@session_user
@html_errors
def article_save(request: HttpRequest, article_id: int, on: bool) -> HttpResponse:
    """Save an article to the reader's saved list (on=False: unsave); back to the page."""
    return _changed(
        request,
        reverse("articles:article-detail", args=[article_id]),
        lambda pk: services.article_save(article_id=article_id, user_id=pk, save=on),
        gettext("Saved. Your saved articles are on your page.") if on else None,
        f"#a{article_id}",
    )


@require_POST
@session_user
@html_errors
def comment_save(request: HttpRequest, comment_id: int, on: bool) -> HttpResponse:
    """Save a comment to the reader's saved comments (on=False: unsave); back to it."""
    return _changed(
        request,
        reverse("articles:comment-link", args=[comment_id]),
        lambda pk: services.comment_save(comment_id=comment_id, user_id=pk, save=on),
        gettext("Saved. Your saved comments are on your page.") if on else None,
        f"#c{comment_id}",
    )


def _owner(request: HttpRequest, username: str, suffix: str) -> Any:
    """The logged-in reader when `username` is theirs, else a response: the user page of
    an account named "<username>/<suffix>" (names made outside the sign-up's rule may hold
    a "/": such an account keeps its page, as views.user_comments keeps it), the login page
    for a visitor not logged in, or a 404 (the lists are private)."""
    user = request.user
    if user.is_authenticated and user.get_username() == username:
        return user
    other = views.person_shown(request, f"{username}/{suffix}")
    if other is not None:
        return views.user_page(request, other)
    if not user.is_authenticated:
        return loginpage.redirect(request.get_full_path(), request)
    raise Http404(gettext("No such page."))


# Each list of articles: its read, and the address of a row's way back out (None: none).
_ARTICLE_LISTS = {
    "saved": (selectors.saved_article_list, "articles:article-unsave"),
    "hidden": (selectors.hidden_article_list, "articles:article-unhide"),
    "upvoted": (selectors.upvoted_article_list, None),
}


@require_GET
@session_user
@html_errors
def own_articles(request: HttpRequest, username: str, kind: str) -> HttpResponse:
    """/u/<name>/saved/, hidden/, upvoted/: the reader's own list, the latest first, each
    row with its way back out (unsave, unhide; an up-vote is withdrawn by its arrow)."""
    person = _owner(request, username, kind)
    if isinstance(person, HttpResponse):
        return person
    read, undo = _ARTICLE_LISTS[kind]
    page = read(user_id=person.pk, page=page_param(request))
    context = {"person": person, "page": page, "kind": kind, "undo": undo}
    return rendering.render(request, "articles/own_list.html", context, status=listing_status(page))


@require_GET
@session_user
@html_errors
def own_comments(request: HttpRequest, username: str) -> HttpResponse:
    """/u/<name>/saved/comments/: the comments the reader saved, the last saved first."""
    person = _owner(request, username, "saved/comments")
    if isinstance(person, HttpResponse):
        return person
    page = selectors.saved_comment_list(user_id=person.pk, page=page_param(request))
    context = {"person": person, "page": page, "kind": "saved_comments"}
    return rendering.render(request, "articles/own_list.html", context, status=listing_status(page))
