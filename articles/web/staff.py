"""The staff pages: the dashboard, groups, and moderating one article (edit, groups,
delete). Django templates, like the admin's; the services decide who may write."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from articles.errors import (
    DuplicateLink,
    InvalidInput,
)
from articles.store import selectors, services
from articles.types import (
    Actor,
    Article,
)
from articles.web.forms import (
    ArticleEditForm,
    ArticleGroupsForm,
    DeleteReasonForm,
    GroupCreateForm,
    GroupUpdateForm,
    ReasonForm,
)
from articles.web.helpers import (
    form_status,
    html_errors,
    staff_context,
    staff_required,
)


@staff_required
@require_GET
@html_errors
def staff_dashboard(request: HttpRequest) -> HttpResponse:
    stats = selectors.stats_daily(days=30)
    context = staff_context(
        request,
        gettext("Dashboard"),
        stats=stats,
        total_posts=sum(p for _, p, _ in stats),
        total_votes=sum(v for _, _, v in stats),
    )
    return render(request, "articles/staff/dashboard.html", context)


@staff_required
@require_http_methods(["GET", "POST"])
@html_errors
def staff_groups(request: HttpRequest) -> HttpResponse:
    form = GroupCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.group_create(**form.cleaned_data, actor=Actor.of(request.user))
        except InvalidInput as exc:
            form.add_store_error(exc)
        else:
            messages.success(
                request, gettext("Group %(name)s created.") % {"name": form.cleaned_data["name"]}
            )
            return redirect("articles:staff-groups")
    context = staff_context(request, gettext("Groups"), form=form, groups=selectors.group_list())
    return render(request, "articles/staff/groups.html", context, status=form_status(form))


@staff_required
@require_http_methods(["GET", "POST"])
@html_errors
def staff_group_edit(request: HttpRequest, name: str) -> HttpResponse:
    group = selectors.group_get(name=name)
    form = GroupUpdateForm(request.POST or None, initial={"description": group.description})
    if request.method == "POST" and form.is_valid():
        services.group_update(
            name=group.name,
            description=form.cleaned_data["description"],
            actor=Actor.of(request.user),
        )
        messages.success(request, gettext("Group %(name)s updated.") % {"name": group.name})
        return redirect("articles:staff-groups")
    context = staff_context(
        request,
        gettext("Group %(name)s") % {"name": group.name},
        group=group,
        form=form,
        delete_form=ReasonForm(),
    )
    return render(request, "articles/staff/group_edit.html", context, status=form_status(form))


@staff_required
@require_POST
@html_errors
def staff_group_delete(request: HttpRequest, name: str) -> HttpResponse:
    form = ReasonForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    services.group_delete(name=name, actor=Actor.of(request.user), reason=reason)
    messages.success(request, gettext("Group %(name)s deleted.") % {"name": name})
    return redirect("articles:staff-groups")


@staff_required
@require_http_methods(["GET", "POST"])
@html_errors
def staff_article(request: HttpRequest, article_id: int) -> HttpResponse:
    """Edit an article's title, link and text; its groups and deletion have their own URLs."""
    article = selectors.article_get(article_id=article_id)
    form = _staff_edit_form(article, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.article_edit(
                article_id=article.id, **form.cleaned_data, actor=Actor.of(request.user)
            )
        except InvalidInput as exc:
            form.add_store_error(exc)
        except DuplicateLink as exc:
            form.add_error("link", exc.message)
        else:
            messages.success(request, gettext("Article updated."))
            return redirect("articles:staff-article", article.id)
    return _staff_article_page(request, article, edit_form=form)


@staff_required
@require_POST
@html_errors
def staff_article_groups(request: HttpRequest, article_id: int) -> HttpResponse:
    article = selectors.article_get(article_id=article_id)
    form = ArticleGroupsForm(request.POST, groups=selectors.group_list(), current=article.groups)
    if form.is_valid():
        try:
            services.article_groups_update(
                article_id=article.id, **form.cleaned_data, actor=Actor.of(request.user)
            )
        except InvalidInput as exc:
            form.add_store_error(exc)
        else:
            messages.success(request, gettext("Groups updated."))
            return redirect("articles:staff-article", article.id)
    return _staff_article_page(request, article, groups_form=form)


@staff_required
@require_http_methods(["GET", "POST"])
@html_errors
def staff_article_delete(request: HttpRequest, article_id: int) -> HttpResponse:
    """A page that asks for a reason (for the public moderation log), then deletes."""
    article = selectors.article_get(article_id=article_id)
    form = DeleteReasonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        services.article_delete(
            article_id=article.id, actor=Actor.of(request.user), reason=form.cleaned_data["reason"]
        )
        messages.success(request, gettext("Article %(id)d deleted.") % {"id": article.id})
        return redirect("articles:modlog")
    context = staff_context(
        request, gettext("Delete article %(id)d") % {"id": article.id}, article=article, form=form
    )
    return render(request, "articles/staff/article_delete.html", context, status=form_status(form))


def _staff_edit_form(article: Article, data: object = None) -> ArticleEditForm:
    initial = {"title": article.title, "link": article.link, "text": article.text}
    return ArticleEditForm(data, initial=initial, has_text=bool(article.text))


def _staff_article_page(
    request: HttpRequest, article: Article, **forms: ArticleEditForm | ArticleGroupsForm
) -> HttpResponse:
    forms.setdefault("edit_form", _staff_edit_form(article))
    forms.setdefault(
        "groups_form", ArticleGroupsForm(groups=selectors.group_list(), current=article.groups)
    )
    context = staff_context(
        request, gettext("Moderate article %(id)d") % {"id": article.id}, article=article, **forms
    )
    status = 400 if any(f.is_bound and f.errors for f in forms.values()) else 200
    return render(request, "articles/staff/article.html", context, status=status)
