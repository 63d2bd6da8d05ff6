"""HTML views of the articles app: thin, each validates, calls the store, renders."""

from __future__ import annotations

import logging
from datetime import date, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from articles import conf
from articles.errors import (
    ArticleNotFound,
    DatabaseUnavailable,
    EmptySearch,
    InvalidInput,
    StoreFull,
    StoreUnavailable,
)
from articles.http.database import database_reachable, database_unavailable
from articles.http.responses import dependency_error
from articles.store import clock, keys, people, selectors
from articles.types import (
    DELETED_NAME,
    ModlogEntry,
    Order,
    Period,
    SearchOrder,
)
from articles.web import comments, rendering
from articles.web.helpers import (
    day_param,
    health_details_allowed,
    html_errors,
    listing_status,
    order_param,
    page_param,
    period_param,
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
        body = {"status": "degraded", "detail": str(StoreFull.default_message)}
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


def _group_choices() -> list[str] | None:
    """The groups the search form lists, or None for a text box: too many to list, or the
    store is down (the form alone still answers, as it needs nothing else)."""
    try:
        return selectors.group_names()
    except Exception as exc:
        if dependency_error(exc) is None:
            raise
        return None


@require_GET
@html_errors
def search(request: HttpRequest) -> HttpResponse:
    """/search/?q=words -excluded&order=score|newest|votes&group=&period=&kind=: a form and its
    results, no JavaScript needed. Nothing to look for is a message on the page (200);
    a query too long or with too many words is the 400 page naming `q`. A typed order
    may be any word SearchOrder.from_word knows (`time`, `new`, `top`, ...)."""
    q = request.GET.get("q", "")
    order = SearchOrder.from_word(request.GET.get("order") or SearchOrder.SCORE.value)
    if order is None:
        raise InvalidInput("order", gettext("Order must be 'score', 'newest' or 'votes'."))
    period, group = period_param(request), request.GET.get("group", "")
    context: dict[str, object] = {
        "q": q,
        "order": order,
        "orders": list(SearchOrder),
        "period": period,
        "periods": list(Period),
        "group": group,
        "groups": _group_choices(),
    }
    kind = _search_kind(request)
    context.update(kind=kind, comments_searchable=conf.search_comment_words() > 0)
    try:
        if kind == "comments":
            found: object = selectors.comment_search(
                q=q, period=period, page=page_param(request), user_id=viewer_id(request)
            )
        else:
            found = selectors.article_search(
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
    context.update(page=found, marks=getattr(found, "words", ()))
    return rendering.render(request, "articles/search.html", context)


def _search_kind(request: HttpRequest) -> str:
    """What a search looks through: "articles" (the default) or "comments" (when
    ARTICLES_SEARCH_COMMENT_WORDS is not 0). Raises InvalidInput naming `kind`."""
    kind = request.GET.get("kind") or "articles"
    if kind == "articles" or (kind == "comments" and conf.search_comment_words()):
        return kind
    raise InvalidInput("kind", gettext("Search 'articles' or 'comments'."))


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
    """/u/<id>/ (the address by the account, which listings linked to before they linked
    to /u/<name>/): a redirect to the user's page under their current name; the page itself
    for a name of digits alone, whose /u/<name>/ is another account number (what listings
    link such a name to: rendering.user_page_url)."""
    person = get_object_or_404(get_user_model().objects.select_related(people.PROFILE), pk=user_id)
    if person.get_username().isdigit():
        return user_page(request, people.Person.of(person))
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
    person = person_shown(request, username)
    if person is None:
        raise Http404(gettext("No such user."))
    return user_page(request, person)


def person_shown(request: HttpRequest, name: str) -> people.Person | None:
    """The account named `name` as a page shows it to this reader: kept a few seconds
    (people.person_named), as it is now for the account's owner."""
    return people_shown(request, [name]).get(name)


def people_shown(request: HttpRequest, names: list[str]) -> dict[str, people.Person]:
    """The accounts of `names` that exist, as person_shown reads each, in one query."""
    viewer = request.user
    mine = viewer.is_authenticated and viewer.get_username() in names
    return people.people_named(names, fresh=mine)


def user_page(request: HttpRequest, person: people.Person) -> HttpResponse:
    """The user page of `person` (an account found by its id or by a name)."""
    read = selectors.user_page(
        poster_id=person.pk,
        page=page_param(request),
        user_id=viewer_id(request),
        comments=USER_PAGE_COMMENTS,
    )
    context = {
        "person": person,
        "page": read.articles,
        "karma": read.karma,
        "comment_karma": read.comment_karma,
        "about": person.about,
        "user_comments": read.comments,
    }
    return rendering.render(
        request, "articles/user_detail.html", context, status=listing_status(read.articles)
    )


@require_GET
@session_user
@anonymous_cache
@html_errors
def user_comments(request: HttpRequest, username: str) -> HttpResponse:
    """/u/<name>/comments/: all of a user's visible comments, newest first, paged.

    Names made before the sign-up's rule may hold a "/", so this address is also the user
    page of an account named "<name>/comments": such an account keeps its page."""
    other = f"{username}/comments"
    found = people_shown(request, [other, username])
    if other in found:
        return user_page(request, found[other])
    person = found.get(username)
    if person is None:
        raise Http404(gettext("No such user."))
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
    """The article and a page of its comment thread (?sort=best|new, ?page=); 410 with
    when and why for one staff removed."""
    try:
        thread = selectors.comment_thread(
            article_id=article_id,
            order=comments.sort_param(request),
            page=page_param(request),
            user_id=viewer_id(request),
        )
    except ArticleNotFound:
        selectors.raise_if_removed(article_id=article_id)
        raise
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


# --- helpers ---------------------------------------------------------------------------


def _today() -> date:
    return timezone.now().date()
