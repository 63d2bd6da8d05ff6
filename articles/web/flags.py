"""Flags on pages: the reader's form that flags an article or a comment, and the staff
queue that resolves or dismisses them. Thin, like views.py: each validates, calls one
service or selector, renders or redirects. Forms post without JavaScript."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from articles import validation
from articles.errors import AlreadyFlagged, ArticlesError, InvalidInput, NotAllowed
from articles.http.loginpage import LOGIN_URL
from articles.store import selectors, services
from articles.templatetags.articles_tags import FLAG_REASON_WORDS
from articles.types import Actor, FlagReason
from articles.web import rendering
from articles.web.forms import StoreErrorsMixin
from articles.web.helpers import (
    form_rate_limit,
    form_refused,
    form_response,
    html_errors,
    page_param,
    staff_context,
    staff_required,
)


class FlagForm(StoreErrorsMixin, forms.Form):
    """A reader's flag: one reason of FlagReason."""

    reason = forms.ChoiceField(
        label=_("Why should staff look at this?"),
        choices=[(r.value, FLAG_REASON_WORDS[r.value]) for r in FlagReason],
        widget=forms.RadioSelect,
    )


class FlagDecideForm(StoreErrorsMixin, forms.Form):
    """Staff resolving (the reason is required: the item is removed) or dismissing flags."""

    reason = forms.CharField(
        label=_("Reason"),
        max_length=validation.REASON_MAX,
        required=False,
        help_text=_("Shown in the public moderation log; required to remove."),
    )


def _item(kind: str, item_id: int) -> tuple[str, str]:
    """(the item's title or excerpt, its page) for the flag form; 404 or 403 if gone."""
    if kind == "article":
        article = selectors.article_get(article_id=item_id)
        return article.title, reverse("articles:article-detail", args=[article.id])
    comment = selectors.comment_get(comment_id=item_id)
    if not comment.visible:
        raise NotAllowed(gettext("This comment was deleted."))
    excerpt = comment.text if len(comment.text) <= 140 else comment.text[:139] + "…"
    page = reverse("articles:comment-detail", args=[comment.article_id, comment.id])
    return excerpt, page


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def item_flag(request: HttpRequest, kind: str, item_id: int) -> HttpResponse:
    """Flag an article or a comment for staff, with a reason; once per item."""
    title, back = _item(kind, item_id)
    form = FlagForm(request.POST or None)
    if request.method == "POST" and form.is_valid() and form_rate_limit("flag", request, form):
        try:
            services.item_flag(
                kind=kind,
                item_id=item_id,
                actor=Actor.of(request.user),
                reason=form.cleaned_data["reason"],
            )
        except InvalidInput as exc:
            form.add_store_error(exc)
        except AlreadyFlagged as exc:
            form_refused(form, exc)
        else:
            messages.success(request, gettext("Thank you: staff will look at it."))
            return redirect(back)
    context = {"form": form, "kind": kind, "title": title, "back": back}
    return form_response(rendering.render(request, "articles/flag.html", context), form)


@staff_required
@require_GET
@html_errors
def staff_flags(request: HttpRequest) -> HttpResponse:
    """The staff queue: flagged items, most flags first, each with resolve and dismiss."""
    return _queue(request)


def _queue(request: HttpRequest, refused: ArticlesError | None = None) -> HttpResponse:
    page = selectors.flag_queue(page=page_param(request))
    context = staff_context(
        request,
        gettext("Flags"),
        page=page,
        reasons=FLAG_REASON_WORDS,
        refused=refused.message if refused else "",
    )
    status = int(refused.status_code) if refused else 200
    return render(request, "articles/staff/flags.html", context, status=status)


@staff_required
@require_POST
@html_errors
def staff_flag_decide(request: HttpRequest, kind: str, item_id: str, decision: str) -> HttpResponse:
    """Resolve (remove the item, with a reason) or dismiss one item's flags; a refusal
    (no reason to remove, decided already) shows the queue again with its 4xx."""
    form = FlagDecideForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    actor = Actor.of(request.user)
    try:
        if decision == "resolve":
            services.flag_resolve(kind=kind, item_id=int(item_id), actor=actor, reason=reason)
            done = gettext("Flags resolved: the item is removed.")
        else:
            services.flag_dismiss(kind=kind, item_id=int(item_id), actor=actor, reason=reason)
            done = gettext("Flags dismissed: the item is back.")
    except ArticlesError as exc:
        if exc.status_code >= 500:
            raise
        return _queue(request, exc)
    messages.success(request, done)
    return redirect("articles:staff-flags")
