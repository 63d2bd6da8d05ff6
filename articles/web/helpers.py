"""Helpers of the HTML views: the one error decorator, forms refused by a rate limit,
safe redirects."""

from __future__ import annotations

import functools
import hmac
import ipaddress
from collections.abc import Callable
from datetime import date
from typing import Any, TypeVar

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext

from articles import conf
from articles.errors import ArticlesError, InvalidInput, RateLimited
from articles.http import loginpage
from articles.http.addresses import direct_peer
from articles.http.database import database_unavailable
from articles.http.responses import answered_as, dependency_error, error_response, wants_json
from articles.store import ratelimits
from articles.types import Order, Page, Period

View = Callable[..., HttpResponse]
R = TypeVar("R", bound=HttpResponseBase)  # a class-based view's as_view() answers any response


def html_errors(view: Callable[..., R]) -> Callable[..., R | HttpResponse]:
    """Render any ArticlesError as articles/error.html with the error's own status, and an
    unavailable Redis or database as the 503 page (no middleware of the host's needed)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> R | HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except ArticlesError as exc:
            return error_response(request, exc)
        except Exception as exc:
            error = dependency_error(exc)
            if error is None:
                raise
            return error_response(request, error)

    return wrapper


def form_refused(form: Any, error: ArticlesError) -> None:
    """Show `form` again, with what was typed, refused by `error` (a rate limit, a closed
    window): its message on the form, and form_response() answers with its status and
    headers (429 and Retry-After, 403)."""
    form.add_error(None, error.message)
    form.refused = error


def form_rate_limit(action: str, request: HttpRequest, form: Any) -> bool:
    """ratelimits.check() for a form: past the limit, False, and the form says when to try
    again (form_refused)."""
    try:
        ratelimits.check(request, action)
    except RateLimited as exc:
        form_refused(form, exc)
        return False
    return True


def form_response(response: HttpResponse, form: Any) -> HttpResponse:
    """A form's page with form_status(), and the headers of the error that refused it."""
    refused = getattr(form, "refused", None)
    if refused is not None:
        return answered_as(response, refused)
    response.status_code = form_status(form)
    return response


def login_first(
    request: HttpRequest, back: str, vote: tuple[int, str] | None = None
) -> HttpResponse | None:
    """None for a logged-in user. Anyone else logs in first (loginpage: the host's login
    or the app's) and comes back to `back`, with `vote` (article id, direction) to cast
    or offer after it: the in-page script gets a JSON 401 naming the login page, a form a
    redirect to it."""
    if request.user.is_authenticated:
        return None
    return to_login(request, back, vote)


def to_login(request: HttpRequest, back: str, vote: tuple[int, str] | None = None) -> HttpResponse:
    """login_first()'s answer to someone not logged in."""
    login_url = loginpage.url(back, vote=vote, request=request, safe="")
    if wants_json(request):
        return JsonResponse(
            {"detail": gettext("Log in to vote."), "code": "login_required", "login": login_url},
            status=401,
        )
    return redirect(login_url)


def safe_next(request: HttpRequest, fallback: str) -> str:
    """`next` from the form or query, only if it points at this site; else `fallback`."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback


def viewer_id(request: HttpRequest) -> int | None:
    """The pk of the logged-in user (fills Article.my_vote), or None."""
    return request.user.pk if request.user.is_authenticated else None


def order_param(request: HttpRequest, default: Order = Order.SCORE) -> Order:
    raw = request.GET.get("order", default.value)
    try:
        return Order(raw)
    except ValueError:
        raise InvalidInput("order", gettext("Order must be 'score' or 'time'.")) from None


def period_param(request: HttpRequest) -> Period:
    raw = request.GET.get("period", Period.ALL.value)
    try:
        return Period(raw)
    except ValueError:
        choices = ", ".join(p.value for p in Period)
        raise InvalidInput(
            "period", gettext("Period must be one of %(choices)s.") % {"choices": choices}
        ) from None


def day_param(raw: str) -> date:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise InvalidInput(
            "day", gettext("A day is written YYYY-MM-DD, e.g. 2026-01-31.")
        ) from None


def page_param(request: HttpRequest) -> str:
    return request.GET.get("page", "1")


def staff_required(view: View) -> View:
    """Log in first (and come back); a logged-in non-staff user gets 403."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return loginpage.redirect(request.get_full_path(), request)
        if not request.user.is_staff:
            raise PermissionDenied(gettext("Only staff may moderate."))
        return view(request, *args, **kwargs)

    return wrapper


def staff_context(request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
    """What the Django admin's templates need, so staff pages look like the admin."""
    return {
        **admin.site.each_context(request),
        "site_header": f"{conf.site_name()} staff",
        "site_title": f"{conf.site_name()} staff",
        "title": title,
        **extra,
    }


def listing_status(page: Page[Any]) -> int:
    """404 for a page past the end of its listing (the page says so and links to the last
    one); 200 otherwise, an empty listing's only page included."""
    return 404 if page.number > page.pages else 200


def form_status(form: Any) -> int:
    """400 for a submitted form that was refused (it is shown again with its errors); the
    status of the error that refused it, if one did (form_refused: 429, 403)."""
    refused = getattr(form, "refused", None)
    if refused is not None:
        return int(refused.status_code)
    return 400 if form.is_bound and form.errors else 200


def internal_or_staff(view: View) -> View:
    """For operators only (the host's /metrics): whoever may read /healthz's figures
    (health_details_allowed); anyone else gets 403."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not health_details_allowed(request, database_up=True):
            return HttpResponse(
                "Only staff, internal addresses and the metrics token may read this.\n",
                status=403,
                content_type="text/plain; charset=utf-8",
            )
        return view(request, *args, **kwargs)

    return wrapper


def health_details_allowed(request: HttpRequest, *, database_up: bool) -> bool:
    """Staff; a scraper showing ARTICLES_METRICS_TOKEN as a bearer token; or a peer on an
    ARTICLES_HEALTH_DETAIL_NETWORKS address that reached the site directly (a load
    balancer's or Prometheus' network). Never a forwarded address: a header is the
    client's say (addresses.direct_peer). The user is looked up only while the database
    answers."""
    if _metrics_token_shown(request):
        return True
    address = direct_peer(request)
    if address != "unknown":
        ip = ipaddress.ip_address(address)
        for network in conf.health_detail_networks():
            if ip in ipaddress.ip_network(network, strict=False):
                return True
    if not database_up:
        return False
    try:
        return bool(request.user.is_staff)
    except Exception as exc:  # the database went away between the probe and now
        if database_unavailable(exc):
            return False
        raise


def _metrics_token_shown(request: HttpRequest) -> bool:
    """`Authorization: Bearer <ARTICLES_METRICS_TOKEN>`, compared in constant time; never
    when no token is configured."""
    token = conf.metrics_token()
    scheme, _, given = str(request.META.get("HTTP_AUTHORIZATION", "")).partition(" ")
    if not token or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())
