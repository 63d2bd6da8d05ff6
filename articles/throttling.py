"""Rate limits of the REST API: per client address and per user, counted in Redis.

Settings (read at call time, so tests can override them):
- ARTICLES_API_RATE_LIMITS: scope -> (requests, seconds), or None to turn a scope off.
  "address" counts every request of a client address, "user" every request of a logged-in
  user, "write" every POST/PUT/PATCH/DELETE of a user (of an address when anonymous,
  which also slows down password guessing at /api/auth/token/).
- ARTICLES_RATE_LIMITS (conf.rate_limits()): the per-user limits of single actions ("post",
  "vote"), shared with the web pages: the same counters in Redis, so the API is no way
  around them.
- ARTICLES_NUM_PROXIES: how many trusted reverse proxies stand in front of the site. With
  0 (the default) X-Forwarded-For is ignored; with N the client is the N-th address from
  the right of X-Forwarded-For, the one the outermost trusted proxy saw, so a client
  cannot pick its own address by sending the header.
"""

from __future__ import annotations

import functools

from django.conf import settings
from rest_framework.request import Request

from articles import conf, services
from articles.addresses import client_address
from articles.errors import RateLimited
from articles.types import RateLimit

DEFAULT_LIMITS: dict[str, tuple[int, int] | None] = {
    "address": (600, 60),
    "user": (300, 60),
    "write": (60, 60),
}
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def limits() -> dict[str, tuple[int, int] | None]:
    return {**DEFAULT_LIMITS, **getattr(settings, "ARTICLES_API_RATE_LIMITS", {})}


def rate_limit_check(request: Request) -> RateLimit | None:
    """Count this request in every window it belongs to (address, user, write), in one
    round trip, and keep the tightest state for the RateLimit-* headers.

    Raises RateLimited (with the seconds until the window ends) if any window is over.
    """
    configured = limits()
    user = request.user
    who = f"u{user.pk}" if user.is_authenticated else client_address(request)
    counted: list[tuple[str, str, int, int]] = []
    for scope, ident in _scopes(request, who):
        rule = configured.get(scope)
        if rule:
            counted.append((f"api_{scope}", ident, int(rule[0]), int(rule[1])))
    if not counted:
        return None
    states = services.rate_limit_hits(hits=counted)
    tightest = functools.reduce(lambda a, b: b if _tighter(b, a) else a, states)
    request.rate_limit = tightest  # type: ignore[attr-defined]
    if not tightest.allowed:
        raise RateLimited(tightest.reset)
    return tightest


def rate_limit_action(request: Request, scope: str) -> None:
    """Count one valid `scope` action ("post", "vote") of the logged-in user in the window
    shared with the web pages (after validation, so a mistyped request costs nothing).

    Raises RateLimited past the limit; the RateLimit-* headers then describe this window.
    """
    rule = conf.rate_limits().get(scope)
    if not rule:
        return
    limit, period = rule
    state = services.rate_limit_hit(
        scope=scope, ident=str(request.user.pk), limit=int(limit), period=int(period)
    )
    current = getattr(request, "rate_limit", None)
    if current is None or _tighter(state, current):
        request.rate_limit = state  # type: ignore[attr-defined]
    if not state.allowed:
        raise RateLimited(
            state.reset,
            f"Too many {scope}s: at most {limit} every {period} s. Try again in {state.reset} s.",
        )


def _scopes(request: Request, who: str) -> list[tuple[str, str]]:
    scopes = [("address", client_address(request))]
    if request.user.is_authenticated:
        scopes.append(("user", who))
    if request.method in _WRITES:
        scopes.append(("write", who))
    return scopes


def rate_limit_headers(state: RateLimit) -> dict[str, str]:
    """The IETF draft's RateLimit-* fields for the tightest window."""
    return {
        "RateLimit-Limit": str(state.limit),
        "RateLimit-Remaining": str(state.remaining),
        "RateLimit-Reset": str(state.reset),
    }


def _tighter(state: RateLimit, than: RateLimit) -> bool:
    if state.allowed != than.allowed:
        return not state.allowed
    return state.remaining < than.remaining
