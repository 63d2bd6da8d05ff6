"""The pages that write an article: its vote, the submit form, and its poster's own edit
and delete. Thin: each validates, calls one service, redirects or renders."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from articles.errors import (
    DuplicateLink,
    InvalidInput,
    LoginRequired,
    NotAllowed,
)
from articles.http import guarded, loginpage
from articles.http.addresses import user_pk
from articles.http.loginpage import LOGIN_URL
from articles.http.responses import wants_json
from articles.store import clock, ratelimits, selectors, services
from articles.types import (
    Actor,
    Article,
    NewPost,
)
from articles.web import rendering, sessionusers
from articles.web.forms import (
    ArticleSubmitForm,
    PosterEditForm,
    VoteForm,
)
from articles.web.helpers import (
    form_rate_limit,
    form_response,
    html_errors,
    login_first,
    safe_next,
    to_login,
)
from articles.web.sessionusers import session_user_unchecked


@require_POST
@session_user_unchecked
@html_errors
def article_vote(request: HttpRequest, article_id: int) -> HttpResponse:
    """Up, down or withdraw; back to the page the vote came from (JSON for the script).
    One Redis round trip when the session's user is kept: its rate limit, the check of
    its credential epoch and the vote are one script (http.guarded)."""
    back = safe_next(request, reverse("articles:article-detail", args=[article_id]))
    vote = _vote_of(request, article_id)
    if (login := login_first(request, back, vote=vote)) is not None:
        return login
    form = VoteForm(request.POST)
    if not form.is_valid():
        raise InvalidInput("direction", gettext("A vote is up, down or none."))
    ratelimits.defer(request, "vote")
    try:
        article = guarded.vote(request, sessionusers, article_id=article_id, direction=form.vote)
    except LoginRequired:  # the kept session was logged out since: read again, it is gone
        return to_login(request, back, vote)
    if wants_json(request):
        return JsonResponse(
            {
                "id": article.id,
                "votes": article.votes,
                "downvotes": article.downvotes,
                "net": article.votes - article.downvotes,
                "score": article.score,
                "my_vote": article.my_vote.label if article.my_vote else "none",
            }
        )
    return redirect(f"{back.split('#')[0]}#a{article.id}")


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def submit(request: HttpRequest) -> HttpResponse:
    groups = selectors.group_list()
    form = ArticleSubmitForm(request.POST or None, groups=groups)
    preview = None
    if request.method == "POST" and "preview" in request.POST:
        # The post as it will read, and the form again: nothing written, nothing counted
        # against the post limit (the same idempotency key goes with the later Post).
        if form.is_valid():
            preview = form.cleaned_data
    elif request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            article = services.article_submit(
                NewPost.by(Actor.of(request.user), data),
                idempotency_key=data["idempotency_key"],
                limit=lambda: form_rate_limit("post", request, form),
            )
        except DuplicateLink as exc:
            messages.info(
                request,
                gettext(
                    "That link was already posted and is still open for voting, "
                    "so here it is: vote for it instead."
                ),
            )
            return redirect("articles:article-detail", exc.article_id)
        except InvalidInput as exc:
            form.add_store_error(exc, {"idempotency_key": "title"})
        else:
            if article is not None:
                messages.success(request, gettext("Your article is posted, with your own up-vote."))
                return redirect("articles:article-detail", article.id)
    context = {"form": form, "preview": preview}
    return form_response(rendering.render(request, "articles/submit.html", context), form)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def article_edit(request: HttpRequest, article_id: int) -> HttpResponse:
    """The poster's own edit, while voting is open: the title, and a text post's text."""
    article = _own_article(request, article_id)
    form = PosterEditForm(
        request.POST or None,
        initial={"title": article.title, "text": article.text},
        has_text=bool(article.text),
    )
    if request.method == "POST" and form.is_valid():
        try:
            services.article_edit(
                article_id=article.id,
                title=form.cleaned_data["title"],
                text=form.cleaned_data.get("text"),
                actor=Actor.of(request.user).as_poster(),
            )
        except InvalidInput as exc:
            form.add_store_error(exc)
        else:
            messages.success(request, gettext("Your changes are saved."))
            return redirect("articles:article-detail", article.id)
    context = {"article": article, "form": form}
    return form_response(rendering.render(request, "articles/article_edit.html", context), form)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def article_delete(request: HttpRequest, article_id: int) -> HttpResponse:
    """The poster deleting their own article while voting is open: a page asks first."""
    article = _own_article(request, article_id)
    if request.method == "POST":
        services.article_delete(article_id=article.id, actor=Actor.of(request.user).as_poster())
        messages.success(
            request, gettext("Your article “%(title)s” is deleted.") % {"title": article.title}
        )
        return redirect(rendering.user_url(request.user))
    return rendering.render(request, "articles/article_delete.html", {"article": article})


@require_GET
@html_errors
def article_vote_offer(request: HttpRequest, article_id: int) -> HttpResponse:
    """The vote asked for while logged out (`direction`), offered as a form once logged
    in: where a login page other than the app's own sends the voter back to (loginpage).
    A GET casts nothing: the vote is the form's POST, CSRF-checked."""
    back = safe_next(request, reverse("articles:article-detail", args=[article_id]))
    vote = _vote_of(request, article_id)
    if not request.user.is_authenticated:  # a page: redirected, whatever it accepts
        return redirect(loginpage.url(back, vote=vote, request=request))
    article = selectors.article_get(article_id=article_id, user_id=user_pk(request))
    if vote is None:
        raise InvalidInput("direction", "A vote is up or down.")
    context = {"article": article, "direction": vote[1], "back": back}
    return rendering.render(request, "articles/vote_offer.html", context)


def _vote_of(request: HttpRequest, article_id: int) -> tuple[int, str] | None:
    """The up- or down-vote a logged-out voter asked for: the app's login page signs it as
    an intent and casts it once logged in; another login page comes back to the offer."""
    direction = request.POST.get("direction") or request.GET.get("direction") or ""
    return (article_id, direction) if direction in ("up", "down") else None


def _own_article(request: HttpRequest, article_id: int) -> Article:
    """The article, if the user may change it as its poster now; else NotAllowed (403)."""
    article = selectors.article_get(article_id=article_id)
    if not article.poster_may_change(user_pk(request), clock.now()):
        raise NotAllowed(
            gettext(
                "Only its poster may change an article, and only while voting is open; "
                "staff can help with anything else."
            )
        )
    return article
