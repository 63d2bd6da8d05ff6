"""Helpers of the HTML views: the one error decorator, rate limits, safe redirects."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import date
from typing import Any

from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from articles import conf, services
from articles.addresses import client_address
from articles.errors import ArticlesError, InvalidInput, RateLimited
from articles.types import Order, Period

View = Callable[..., HttpResponse]


def wants_json(request: HttpRequest) -> bool:
    """The in-page voting script asks for JSON; every other caller gets HTML."""
    return "application/json" in request.headers.get("Accept", "")


def html_errors(view: View) -> View:
    """Render any ArticlesError as articles/error.html with the error's own status."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except ArticlesError as exc:
            return error_response(request, exc)

    return wrapper


def error_response(request: HttpRequest, exc: ArticlesError) -> HttpResponse:
    field = getattr(exc, "field", None)
    response: HttpResponse
    if wants_json(request):
        body: dict[str, object] = {"detail": exc.message, "code": exc.code}
        if field:
            body["field"] = field
        response = JsonResponse(body, status=exc.status_code)
    else:
        context = {"error": exc, "status": exc.status_code, "field": field}
        response = render(request, "articles/error.html", context, status=exc.status_code)
    if isinstance(exc, RateLimited):
        response["Retry-After"] = str(exc.retry_after)
    return response


def rate_limit(scope: str, request: HttpRequest) -> None:
    """Count one `scope` request of the logged-in user; raises RateLimited past the limit."""
    rule = conf.rate_limits().get(scope)
    if not rule:
        return  # this limit is turned off
    limit, period = rule
    ident = str(request.user.pk) if request.user.is_authenticated else client_address(request)
    state = services.rate_limit_hit(scope=scope, ident=ident, limit=limit, period=period)
    if not state.allowed:
        what = {"post": "posts", "vote": "votes", "signup": "sign-ups"}.get(scope, "requests")
        raise RateLimited(
            state.reset,
            f"Too many {what}: at most {limit} every {_span(period)}. "
            f"Try again in {state.reset} s.",
        )


def safe_next(request: HttpRequest, fallback: str) -> str:
    """`next` from the form or query, only if it points at this site; else `fallback`."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback


def _span(seconds: int) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return "hour" if hours == 1 else f"{hours} hours"
    if seconds % 60 == 0:
        minutes = seconds // 60
        return "minute" if minutes == 1 else f"{minutes} minutes"
    return f"{seconds} seconds"


def viewer_id(request: HttpRequest) -> int | None:
    """The pk of the logged-in user (fills Article.my_vote), or None."""
    return request.user.pk if request.user.is_authenticated else None


def order_param(request: HttpRequest, default: Order = Order.SCORE) -> Order:
    raw = request.GET.get("order", default.value)
    try:
        return Order(raw)
    except ValueError:
        raise InvalidInput("order", "Order must be 'score' or 'time'.") from None


def period_param(request: HttpRequest) -> Period:
    raw = request.GET.get("period", Period.ALL.value)
    try:
        return Period(raw)
    except ValueError:
        choices = ", ".join(p.value for p in Period)
        raise InvalidInput("period", f"Period must be one of {choices}.") from None


def day_param(raw: str) -> date:
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise InvalidInput("day", "A day is written YYYY-MM-DD, e.g. 2026-01-31.") from None


def page_param(request: HttpRequest) -> str:
    return request.GET.get("page", "1")


def staff_required(view: View) -> View:
    """Log in first (and come back); a logged-in non-staff user gets 403."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Only staff may moderate.")
        return view(request, *args, **kwargs)

    return wrapper


def staff_context(request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
    """What the Django admin's templates need, so staff pages look like the admin."""
    return {
        **admin.site.each_context(request),
        "site_header": "votesite staff",
        "site_title": "votesite staff",
        "title": title,
        **extra,
    }
