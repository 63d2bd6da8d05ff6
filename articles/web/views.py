"""HTML views of the articles app: thin, each validates, calls the store, renders."""

from __future__ import annotations

import logging
from datetime import date, timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from articles import conf
from articles.errors import (
    DatabaseUnavailable,
    DuplicateLink,
    EmptySearch,
    InvalidInput,
    NotAllowed,
    StoreFull,
    StoreUnavailable,
)
from articles.http.addresses import user_pk
from articles.http.database import database_reachable, database_unavailable
from articles.http.responses import wants_json
from articles.store import clock, keys, people, selectors, services
from articles.types import (
    DELETED_NAME,
    Actor,
    Article,
    ModlogEntry,
    NewPost,
    Order,
    Period,
    SearchOrder,
)
from articles.web import comments, rendering
from articles.web.accounts import LOGIN_URL
from articles.web.forms import (
    ArticleEditForm,
    ArticleGroupsForm,
    ArticleSubmitForm,
    DeleteReasonForm,
    GroupCreateForm,
    GroupUpdateForm,
    PosterEditForm,
    ReasonForm,
    VoteForm,
)
from articles.web.helpers import (
    day_param,
    form_rate_limit,
    form_response,
    form_status,
    health_details_allowed,
    html_errors,
    listing_status,
    login_first,
    order_param,
    page_param,
    period_param,
    rate_limit,
    safe_next,
    staff_context,
    staff_required,
    viewer_id,
)
from articles.web.pagecache import anonymous_cache
from articles.web.sessionusers import session_user

logger = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz_live(request: HttpRequest) -> JsonResponse:
    """Liveness: 200 whenever the process answers. It asks neither Redis nor the database,
    so an orchestrator restarts a hung worker, not every worker during a Redis or database
    outage (which /healthz/ready reports, and which a restart would not cure)."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Readiness (/healthz/ready, and /healthz as before): each dependency, Redis (reachable,
    persistence, role) and the database (reachable).

    200 when both answer, else 503 with Retry-After and the outage's message. Figures
    (memory, version, article count) only for staff or an internal address
    (ARTICLES_HEALTH_DETAIL_NETWORKS); never an error's own text, which names hosts.
    """
    store = selectors.store_health()
    database = {"reachable": database_reachable()}
    details = store.pop("details", None)
    if details is not None and health_details_allowed(request, database_up=database["reachable"]):
        store["details"] = details
    down = (
        StoreUnavailable()
        if not store["reachable"]
        else DatabaseUnavailable()
        if not database["reachable"]
        else None
    )
    body: dict[str, object] = {"status": "ok" if down is None else "unavailable"}
    if down is not None:
        body["detail"] = down.message
    elif store.get("full"):
        # Reads work, writes are refused: 200, so a balancer keeps serving the reads.
        body = {"status": "degraded", "detail": StoreFull.message}
    response = JsonResponse(
        {**body, "redis": store, "database": database},
        status=200 if down is None else down.status_code,
    )
    for name, value in (down.headers if down is not None else {}).items():
        response[name] = value
    return response


# --- listings --------------------------------------------------------------------------


@require_GET
@session_user
@anonymous_cache
@html_errors
def home(request: HttpRequest) -> HttpResponse:
    """The newest good articles (at most 50), then what is rising by score; 25 a page."""
    page = selectors.front_page(page=page_param(request), user_id=viewer_id(request))
    # A link to the archive of each day that has good articles listed here.
    context = {"page": page, "days": page.days, "good_votes": conf.good_votes()}
    return rendering.render(request, "articles/home.html", context, status=listing_status(page))


@require_GET
@session_user
@anonymous_cache
@html_errors
def top(request: HttpRequest) -> HttpResponse:
    period = period_param(request)
    page = selectors.top_article_list(
        period=period, page=page_param(request), user_id=viewer_id(request)
    )
    return rendering.render(
        request,
        "articles/top.html",
        {"page": page, "period": period, "periods": list(Period)},
        status=listing_status(page),
    )


@require_GET
@session_user
@anonymous_cache
@html_errors
def new(request: HttpRequest) -> HttpResponse:
    page = selectors.article_list(
        order=Order.TIME, page=page_param(request), user_id=viewer_id(request)
    )
    return rendering.render(
        request, "articles/new.html", {"page": page}, status=listing_status(page)
    )


@require_GET
@html_errors
def search(request: HttpRequest) -> HttpResponse:
    """/search/?q=words -excluded&order=score|newest|votes&group=&period=: a form and its
    results, no JavaScript needed. Nothing to look for is a message on the page (200);
    a query too long or with too many words is the 400 page naming `q`."""
    q = request.GET.get("q", "")
    raw_order = request.GET.get("order", SearchOrder.SCORE.value)
    try:
        order = SearchOrder(raw_order)
    except ValueError:
        raise InvalidInput("order", "Order must be 'score', 'newest' or 'votes'.") from None
    period, group = period_param(request), request.GET.get("group", "")
    context: dict[str, object] = {
        "q": q,
        "order": order,
        "orders": list(SearchOrder),
        "period": period,
        "periods": list(Period),
        "group": group,
    }
    try:
        page = selectors.article_search(
            q=q,
            order=order,
            group=group or None,
            period=period,
            page=page_param(request),
            user_id=viewer_id(request),
        )
    except EmptySearch as exc:
        context["message"] = exc.message if "q" in request.GET else ""
        return rendering.render(request, "articles/search.html", context)
    context.update(page=page, marks=page.words)
    return rendering.render(request, "articles/search.html", context)


@require_GET
@session_user
@anonymous_cache
@html_errors
def group_list(request: HttpRequest) -> HttpResponse:
    return rendering.render(request, "articles/group_list.html", {"groups": selectors.group_list()})


@require_GET
@session_user
@anonymous_cache
@html_errors
def group_detail(request: HttpRequest, name: str) -> HttpResponse:
    order = order_param(request)
    page = selectors.group_article_list(
        name=name, order=order, page=page_param(request), user_id=viewer_id(request)
    )
    return rendering.render(
        request,
        "articles/group_detail.html",
        {"group": page.group, "page": page, "order": order},
        status=listing_status(page),
    )


@require_GET
@session_user
@anonymous_cache
@html_errors
def good_day(request: HttpRequest, day: str) -> HttpResponse:
    when = day_param(day)
    page = selectors.good_article_day(
        day=when, page=page_param(request), user_id=viewer_id(request)
    )
    context = {
        "page": page,
        "day": when,
        "previous_day": when - timedelta(days=1) if when > date.min else None,
        "next_day": when + timedelta(days=1) if when < _today() else None,
        "good_votes": conf.good_votes(),
    }
    return rendering.render(request, "articles/good_day.html", context, status=listing_status(page))


@require_GET
@session_user
@anonymous_cache
@html_errors
def user_by_id(request: HttpRequest, user_id: int) -> HttpResponse:
    """/u/<id>/ (what listings link to, by the account, never by a stored name): a
    redirect to the user's page under their current name; the page itself for a name of
    digits alone, whose /u/<name>/ is another account number (rendering.user_url)."""
    person = get_object_or_404(get_user_model(), pk=user_id)
    if person.get_username().isdigit():
        return _user_page(request, person)
    return redirect("articles:user-detail", person.get_username(), permanent=False)


# The user page shows this many of the newest comments; the rest are on the comments page.
USER_PAGE_COMMENTS = 10


@require_GET
@session_user
@anonymous_cache
@html_errors
def user_detail(request: HttpRequest, username: str) -> HttpResponse:
    """A user's page: karma, "about", and their submissions, newest first. Sections are
    blocks of user_detail.html, so more (comments) can be added beside them."""
    User = get_user_model()
    return _user_page(request, get_object_or_404(User, **{User.USERNAME_FIELD: username}))


def _user_page(request: HttpRequest, person: Any) -> HttpResponse:
    page = selectors.user_article_list(
        poster_id=person.pk, page=page_param(request), user_id=viewer_id(request)
    )
    context = {
        "person": person,
        "page": page,
        "karma": selectors.user_karma(user_id=person.pk),
        "about": people.profile_of(person).about,
        "user_comments": selectors.user_comments(user_id=person.pk, per_page=USER_PAGE_COMMENTS),
    }
    return rendering.render(
        request, "articles/user_detail.html", context, status=listing_status(page)
    )


@require_GET
@session_user
@anonymous_cache
@html_errors
def user_comments(request: HttpRequest, username: str) -> HttpResponse:
    """/u/<name>/comments/: all of a user's visible comments, newest first, paged.

    Names made before the sign-up's rule may hold a "/", so this address is also the user
    page of an account named "<name>/comments": such an account keeps its page (read in
    the same query as <name>)."""
    User = get_user_model()
    field = User.USERNAME_FIELD
    other = f"{username}/comments"
    found = list(User.objects.filter(**{f"{field}__in": [username, other]}))
    for person in found:
        if person.get_username() == other:
            return _user_page(request, person)
    if not found:
        raise Http404("No such user.")
    person = found[0]
    page = selectors.user_comments(user_id=person.pk, page=page_param(request))
    return rendering.render(
        request,
        "articles/user_comments.html",
        {"person": person, "page": page},
        status=listing_status(page),
    )


@require_GET
@session_user
@anonymous_cache
@html_errors
def article_detail(request: HttpRequest, article_id: int) -> HttpResponse:
    """The article and a page of its comment thread (?sort=best|new, ?page=)."""
    thread = selectors.comment_thread(
        article_id=article_id,
        order=comments.sort_param(request),
        page=page_param(request),
        user_id=viewer_id(request),
    )
    article = thread.article or selectors.article_get(article_id=article_id)
    own = article.poster_may_change(viewer_id(request), clock.now())
    context = {"article": article, "own": own, **comments.thread_context(thread)}
    return rendering.render(
        request, "articles/article_detail.html", context, status=listing_status(thread)
    )


@require_GET
@html_errors
def modlog(request: HttpRequest) -> HttpResponse:
    page = selectors.modlog_page(page=page_param(request))
    actors, authors = _modlog_people(page.items)
    context = {"page": page, "actors": actors, "authors": authors}
    return rendering.render(request, "articles/modlog.html", context)


def _modlog_people(entries: list[ModlogEntry]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The accounts a page of the log names that still exist: its actors by name and its
    removed comments' authors by key (user:<pk>). In a database outage the names are
    shown without links, as the log itself needs only Redis."""
    names = {e.actor for e in entries if e.actor != DELETED_NAME}
    ids: dict[int, str] = {}
    for entry in entries:
        author = entry.details.get("author")
        pk = keys.user_id_or_none(author) if isinstance(author, str) else None
        if pk is not None:
            ids[pk] = str(author)
    try:
        by_name, by_id = people.accounts_named(names, ids)
    except Exception as exc:
        if not database_unavailable(exc):
            raise
        logger.warning("modlog: names without links, the database is down: %s", exc)
        return {}, {}
    return by_name, {ids[pk]: user for pk, user in by_id.items()}


# --- voting and submitting -------------------------------------------------------------


@require_POST
@session_user
@html_errors
def article_vote(request: HttpRequest, article_id: int) -> HttpResponse:
    """Up, down or withdraw; back to the page the vote came from (JSON for the script)."""
    back = safe_next(request, reverse("articles:article-detail", args=[article_id]))
    # The login page signs the vote as an intent and casts it once logged in.
    intent = {"vote_on": article_id, "direction": request.POST.get("direction")}
    if (login := login_first(request, back, extra=intent)) is not None:
        return login
    form = VoteForm(request.POST)
    if not form.is_valid():
        raise InvalidInput("direction", "A vote is up, down or none.")
    rate_limit("vote", request)
    article = services.article_vote(
        article_id=article_id, user_id=user_pk(request), direction=form.vote
    )
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
    if request.method == "POST" and form.is_valid():
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
                "That link was already posted and is still open for voting, "
                "so here it is: vote for it instead.",
            )
            return redirect("articles:article-detail", exc.article_id)
        except InvalidInput as exc:
            form.add_store_error(exc, {"idempotency_key": "title"})
        else:
            if article is not None:
                messages.success(request, "Your article is posted, with your own up-vote.")
                return redirect("articles:article-detail", article.id)
    return form_response(rendering.render(request, "articles/submit.html", {"form": form}), form)


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
            messages.success(request, "Your changes are saved.")
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
        messages.success(request, f"Your article “{article.title}” is deleted.")
        return redirect(rendering.user_url(request.user))
    return rendering.render(request, "articles/article_delete.html", {"article": article})


def _own_article(request: HttpRequest, article_id: int) -> Article:
    """The article, if the user may change it as its poster now; else NotAllowed (403)."""
    article = selectors.article_get(article_id=article_id)
    if not article.poster_may_change(user_pk(request), clock.now()):
        raise NotAllowed(
            "Only its poster may change an article, and only while voting is open; "
            "staff can help with anything else."
        )
    return article


# --- staff -----------------------------------------------------------------------------


@staff_required
@require_GET
@html_errors
def staff_dashboard(request: HttpRequest) -> HttpResponse:
    stats = selectors.stats_daily(days=30)
    context = staff_context(
        request,
        "Dashboard",
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
            messages.success(request, f"Group {form.cleaned_data['name']} created.")
            return redirect("articles:staff-groups")
    context = staff_context(request, "Groups", form=form, groups=selectors.group_list())
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
        messages.success(request, f"Group {group.name} updated.")
        return redirect("articles:staff-groups")
    context = staff_context(
        request, f"Group {group.name}", group=group, form=form, delete_form=ReasonForm()
    )
    return render(request, "articles/staff/group_edit.html", context, status=form_status(form))


@staff_required
@require_POST
@html_errors
def staff_group_delete(request: HttpRequest, name: str) -> HttpResponse:
    form = ReasonForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    services.group_delete(name=name, actor=Actor.of(request.user), reason=reason)
    messages.success(request, f"Group {name} deleted.")
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
            messages.success(request, "Article updated.")
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
            messages.success(request, "Groups updated.")
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
        messages.success(request, f"Article {article.id} deleted.")
        return redirect("articles:modlog")
    context = staff_context(request, f"Delete article {article.id}", article=article, form=form)
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
    context = staff_context(request, f"Moderate article {article.id}", article=article, **forms)
    status = 400 if any(f.is_bound and f.errors for f in forms.values()) else 200
    return render(request, "articles/staff/article.html", context, status=status)


# --- helpers ---------------------------------------------------------------------------


def _today() -> date:
    return timezone.now().date()
