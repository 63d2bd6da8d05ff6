"""The one registry of rate limits, counted in Redis, and the one `consume()` that the pages
and the API call (Tildes' lib/ratelimit.py, allauth's core/ratelimit.py).

Each rule is a fixed window: at most `limit` requests every `period` seconds, per caller.
Every window a request belongs to is counted in one round trip (INCR + EXPIRE each, in
one MULTI/EXEC); the tightest is kept on the request for the RateLimit-* headers.
ARTICLES_RATE_LIMITS (and ARTICLES_API_RATE_LIMITS) override a rule's (limit, period),
or turn it off with None.
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import redis

from articles import conf
from articles.errors import RateLimited, StoreFull
from articles.http.addresses import client_address
from articles.operations import metrics
from articles.store import clock, keys, scripts
from articles.store.connection import get_connection, out_of_memory
from articles.types import RateLimit

Who = Literal["caller", "user", "address", "account"]


@dataclass(frozen=True, slots=True)
class Rule:
    limit: int
    period: int  # seconds
    by: Who  # caller: the user when logged in, else the client address; account: the
    # username a login names (logged in or not, existing or not)
    noun: str  # what is counted, for the message: "Too many votes"


DEFAULT_RULES: dict[str, Rule] = {
    "post": Rule(10, 3600, "caller", "posts"),
    "vote": Rule(60, 60, "caller", "votes"),
    "comment": Rule(30, 600, "caller", "comments"),
    "signup": Rule(10, 3600, "address", "sign-ups"),
    "password_reset": Rule(5, 3600, "address", "password reset e-mails"),
    "api": Rule(600, 60, "address", "requests"),
    "api_user": Rule(300, 60, "user", "requests"),
    "api_write": Rule(60, 60, "caller", "writes"),
    # Atom feeds, counted like the API's reads: per address, as aggregators fetch many
    # feeds from one; a fetch that builds its XML anew costs up to ~100 ms.
    "feed": Rule(600, 60, "address", "feed requests"),
    # Password checks (every login, the password change, account deletion): each counted
    # before its password is checked and given back when it was right (login_attempt), so
    # once locked even the right password waits.
    "login_account": Rule(5, 900, "account", "failed logins for this account"),
    "login_address": Rule(20, 900, "address", "failed logins from your address"),
}
LOGIN_RULES = ("login_account", "login_address")
# The way out a login lock's message ends with: the login page makes it a link.
RESET_HINT = "reset your password"


def rules() -> dict[str, Rule | None]:
    """DEFAULT_RULES with the (limit, period) overrides of the settings applied."""
    merged: dict[str, Rule | None] = dict(DEFAULT_RULES)
    for action, value in conf.rate_limit_overrides().items():
        base = DEFAULT_RULES.get(action, Rule(0, 60, "caller", "requests"))
        merged[action] = None if not value else replace(base, limit=value[0], period=value[1])
    return merged


def consume(request: Any, *actions: str, now: float | None = None) -> RateLimit | None:
    """Count one request of `request`'s caller against each action's window, in one round
    trip. Keeps the tightest window on `request.rate_limit` (for the headers); raises
    RateLimited past any limit, saying which and when to try again. An action already
    counted for this request (folded into an earlier call) is not counted twice."""
    table = rules()
    done: set[str] = getattr(request, "rate_limits_counted", set())
    actions = tuple(a for a in actions if a not in done)
    request.rate_limits_counted = done | set(actions)
    counted: list[tuple[str, str, Rule]] = []
    for action in actions:
        rule = table.get(action)
        who = _identity(request, rule.by) if rule else None
        if rule and who:
            counted.append((action, who, rule))
    if not counted:
        return None
    try:
        states = hits(
            [(action, who, rule.limit, rule.period) for action, who, rule in counted], now
        )
    except redis.ResponseError as exc:
        if not out_of_memory(exc):
            raise
        # Redis is full: it takes no counts. A read goes on uncounted (reads still work);
        # a write could not be stored anyway.
        if getattr(request, "method", "GET") in ("GET", "HEAD", "OPTIONS"):
            return None
        raise StoreFull() from None
    tightest = functools.reduce(lambda a, b: b if _tighter(b, a) else a, states)
    current = getattr(request, "rate_limit", None)
    if current is None or _tighter(tightest, current):
        request.rate_limit = tightest
    for (action, _, rule), state in zip(counted, states, strict=True):
        if not state.allowed:
            metrics.RATE_LIMITED.labels(action=action).inc()
            raise RateLimited(
                state.reset,
                f"Too many {rule.noun}: at most {rule.limit} every {_span(rule.period)}. "
                f"Try again {clock.in_words(state.reset)}.",
            )
    return tightest


@dataclass(frozen=True, slots=True)
class LoginAttempt:
    """One password check's place in the failed-login windows (login_attempt): given back
    by login_refund when the password was right, else it stays, counted as a failure."""

    username: str
    keys: tuple[str, ...]

    def is_for(self, username: str) -> bool:
        """Is this the attempt of the account `username` names?"""
        return _account(self.username) == _account(username)


def login_attempt(request: Any, username: str, now: float | None = None) -> LoginAttempt:
    """Count one password check for the account `username` and the caller's address before
    the password is checked, in one atomic step; refuse it (RateLimited, nothing counted)
    while either has failed too often in its window. Fails closed: a Redis that cannot
    count (full, down) raises its error, and no password is checked uncounted."""
    windows = _login_windows(request, username)
    now = clock.now(now)
    starts = [int(now // rule.period) for _, _, rule in windows]
    counters = [
        keys.rate_limit(action, who, start)
        for (action, who, _), start in zip(windows, starts, strict=True)
    ]
    if not counters:
        return LoginAttempt(username, ())
    args = [n for _, _, rule in windows for n in (rule.limit, rule.period + 1)]
    # Sent once: after a timeout the count may have been taken. Its error (OOM, timeout,
    # refused connection) goes up as it is, for every surface to answer with its 503.
    spent = int(scripts.LOGIN_ATTEMPT(keys=counters, args=args, client=get_connection(retry=False)))
    if spent:
        (action, _, rule), start = windows[spent - 1], starts[spent - 1]
        metrics.RATE_LIMITED.labels(action=action).inc()
        reset = max(1, int((start + 1) * rule.period - now))
        raise RateLimited(
            reset,
            f"Too many {rule.noun}: at most {rule.limit} every {_span(rule.period)}. "
            f"Try again {clock.in_words(reset)}, or {RESET_HINT}.",
        )
    return LoginAttempt(username, tuple(counters))


def login_refund(attempt: LoginAttempt) -> None:
    """Give back a counted attempt whose password was right: a success is no failure."""
    if attempt.keys:
        scripts.LOGIN_REFUND(keys=list(attempt.keys), client=get_connection(retry=False))


def _login_windows(request: Any, username: str) -> list[tuple[str, str, Rule]]:
    table = rules()
    found: list[tuple[str, str, Rule]] = []
    for action in LOGIN_RULES:
        rule = table.get(action)
        if rule is None:
            continue
        who = _account(username) if rule.by == "account" else client_address(request)
        found.append((action, who, rule))
    return found


def _account(username: str) -> str:
    """A key-safe name for the account a login names, whatever its characters or case, and
    as the login form reads it (stripped, NFKC), so " dave" is counted as dave."""
    name = unicodedata.normalize("NFKC", username.strip()).casefold()
    return "a" + hashlib.sha256(name.encode()).hexdigest()[:24]


def hits(windows: Sequence[tuple[str, str, int, int]], now: float | None = None) -> list[RateLimit]:
    """Count one request in each (action, who, limit, period) window; one round trip."""
    now = clock.now(now)
    starts = [int(now // period) for _, _, _, period in windows]
    pipe = get_connection().pipeline(transaction=True)
    for (action, who, _, period), start in zip(windows, starts, strict=True):
        key = keys.rate_limit(action, who, start)
        pipe.incr(key)
        pipe.expire(key, period + 1)
    counts = pipe.execute()[::2]
    return [
        RateLimit(
            allowed=int(count) <= limit,
            limit=limit,
            remaining=max(0, limit - int(count)),
            reset=max(1, int((start + 1) * period - now)),
        )
        for (_, _, limit, period), start, count in zip(windows, starts, counts, strict=True)
    ]


def headers(state: RateLimit) -> dict[str, str]:
    """The IETF draft's RateLimit-* fields for the tightest window."""
    return {
        "RateLimit-Limit": str(state.limit),
        "RateLimit-Remaining": str(state.remaining),
        "RateLimit-Reset": str(state.reset),
    }


def _identity(request: Any, by: Who) -> str | None:
    if by == "account":
        return None  # counted only by login_attempt, which knows the account
    user = getattr(request, "user", None)
    logged_in = bool(user is not None and user.is_authenticated)
    if by == "user" or (by == "caller" and logged_in):
        return f"u{user.pk}" if logged_in and user is not None else None
    return client_address(request)


def _span(seconds: int) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return "hour" if hours == 1 else f"{hours} hours"
    if seconds % 60 == 0:
        minutes = seconds // 60
        return "minute" if minutes == 1 else f"{minutes} minutes"
    return f"{seconds} seconds"


def _tighter(state: RateLimit, than: RateLimit) -> bool:
    if state.allowed != than.allowed:
        return not state.allowed
    return state.remaining < than.remaining
