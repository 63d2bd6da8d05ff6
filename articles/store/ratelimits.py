"""The one registry of rate limits, counted in Redis, and `check()`: the one way the pages,
the API and every password check count against them (Tildes' lib/ratelimit.py, allauth's
core/ratelimit.py).

Each rule is a fixed window of the app's clock (clock.py): at most `limit` counts every
`period` seconds, per caller. A rule counts one of two things:

- requests: every request is counted (INCR + EXPIRE for each window, in one MULTI/EXEC),
  and refused past the limit; the tightest window is kept for the RateLimit-* headers;
- failures (password checks): an attempt is counted before it is made, in one atomic step
  that refuses it (counting nothing) while a window is spent, and refund() gives it back
  when it succeeded, so only failures stay counted.

defer() plans the same request windows for a script to count in its own round trip (the
API's vote: vote_guarded.lua counts them with INCR and EXPIRE as _count does); counted()
takes its counts as check() takes its own. Inside riding(request), the store's read of a
listing's rows takes them along (ride(): article_rows.lua), so an API listing is counted
in its second round trip rather than one of its own.

ARTICLES_RATE_LIMITS overrides a rule's (limit, period) by its name, or turns it off
with None.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import math
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import redis
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from articles import conf
from articles.errors import RateLimited, StoreFull
from articles.http.addresses import client_address
from articles.operations import metrics
from articles.store import clock, keys, scripts
from articles.store.connection import get_connection, out_of_memory
from articles.types import RateLimit

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise

Who = Literal["caller", "user", "address", "account"]
Counts = Literal["requests", "failures"]


@dataclass(frozen=True, slots=True)
class Rule:
    limit: int
    period: int  # seconds
    by: Who  # caller: the user when logged in, else the client address; account: the
    # username a login names (logged in or not, existing or not)
    noun: str | _StrPromise  # what is counted, for the message: "Too many votes"
    counts: Counts = "requests"


DEFAULT_RULES: dict[str, Rule] = {
    "post": Rule(10, 3600, "caller", _("posts")),
    "vote": Rule(60, 60, "caller", _("votes")),
    "comment": Rule(30, 600, "caller", _("comments")),
    # Hiding and saving articles and comments, and undoing either (pages and API): cheap
    # writes to the user's own capped lists, so only a runaway client meets it.
    "save": Rule(120, 60, "caller", _("hides and saves")),
    # flags on articles and comments: enough for a reader cleaning up after a spam wave,
    # too few for one account to hold a page of articles by itself
    "flag": Rule(20, 3600, "caller", _("flags")),
    "signup": Rule(10, 3600, "address", _("sign-ups")),
    "password_reset": Rule(5, 3600, "address", _("password reset e-mails")),
    "api": Rule(600, 60, "address", _("requests")),
    "api_user": Rule(300, 60, "user", _("requests")),
    "api_write": Rule(60, 60, "caller", _("writes")),
    # Atom feeds, counted like the API's reads: per address, as aggregators fetch many
    # feeds from one; a fetch that builds its XML anew costs up to ~100 ms.
    "feed": Rule(600, 60, "address", _("feed requests")),
    # Opening a live stream (articles:live): a page view opens one and EventSource reconnects
    # after a drop, so generous; the open streams themselves are capped per address by
    # ARTICLES_LIVE_STREAMS_PER_ADDRESS.
    "live": Rule(120, 60, "address", _("live stream connections")),
    # Password checks (every login, the password change, account deletion; logins.py):
    # once locked even the right password waits.
    "login_account": Rule(5, 900, "account", _("failed logins for this account"), "failures"),
    "login_address": Rule(20, 900, "address", _("failed logins from your address"), "failures"),
}
LOGIN_RULES = ("login_account", "login_address")
# The way out a failure rule's message ends with: the login page makes it a link.
RESET_HINT = _("reset your password")


def rules() -> dict[str, Rule | None]:
    """DEFAULT_RULES with the (limit, period) overrides of the settings applied: made again
    only when the overrides differ from the last call's (every request asks)."""
    overrides = conf.rate_limit_overrides()
    last = _merged
    if last is not None and last[0] == overrides:
        return last[1]
    merged: dict[str, Rule | None] = dict(DEFAULT_RULES)
    for action, value in overrides.items():
        base = DEFAULT_RULES.get(action, Rule(0, 60, "caller", _("requests")))
        merged[action] = None if not value else replace(base, limit=value[0], period=value[1])
    _remember(overrides, merged)
    return merged


# The last overrides seen and the rules they made (read-only once made).
_merged: tuple[dict[str, Any], dict[str, Rule | None]] | None = None


def _remember(overrides: dict[str, Any], merged: dict[str, Rule | None]) -> None:
    global _merged
    _merged = (overrides, merged)


@dataclass(frozen=True, slots=True)
class Checked:
    """What one check() counted: the tightest of its request windows (None when it counted
    none), and the failure windows it took for `account`, which refund() gives back."""

    tightest: RateLimit | None = None
    account: str | None = None
    taken: tuple[str, ...] = ()

    def is_for(self, username: str) -> bool:
        """Is this the check of the account `username` names?"""
        return self.account is not None and self.account == _account(username)


def check(
    request: Any, *actions: str, account: str | None = None, now: float | None = None
) -> Checked:
    """Count one use by `request`'s caller (and, for the failure rules, by the account
    `account` names) against each action's window, and raise RateLimited past any limit,
    saying which and when to try again.

    Request windows are counted once a request (an action already counted for it, folded
    into an earlier call, is skipped) and the tightest is kept for headers(). A full
    Redis counts no request: a read goes on uncounted, a write is StoreFull. Failure
    windows are counted on every call and fail closed: a Redis that cannot count (full,
    down) raises its error, so no password is checked uncounted."""
    moment = clock.now(now)
    requests, failures = _windows(request, actions, account, moment)
    taken = _take(failures, moment) if failures else ()
    states = _count(request, requests, moment) if requests else []
    tightest = _judge(request, requests, states, moment)
    return Checked(tightest, _account(account) if account is not None else None, taken)


@dataclass(frozen=True, slots=True)
class Deferred:
    """Request windows a script counts in its own round trip (the API's vote): for each of
    `keys`, `args` holds its limit and its expiry, which the script applies as _count
    does (INCR, then EXPIRE), and it answers each window's count for counted()."""

    windows: tuple[_Window, ...]
    moment: float

    @property
    def keys(self) -> list[str]:
        return [w.key for w in self.windows]

    @property
    def args(self) -> list[int]:
        return [n for w in self.windows for n in (w.rule.limit, w.rule.period + 1)]


def defer(request: Any, *actions: str, now: float | None = None) -> None:
    """As check(request, *actions), but counted later: by the script its handler runs
    (take_deferred, then counted with the script's counts), or else by count_deferred().
    Request rules only."""
    moment = clock.now(now)
    requests, failures = _windows(request, actions, None, moment)
    if failures:
        raise ValueError("failure windows are counted by check() only")
    seen = _seen(request)
    seen.deferred = Deferred((*seen.deferred.windows, *requests), moment)


def take_deferred(request: Any) -> Deferred:
    """The windows deferred for `request`, now the caller's to have counted (counted())."""
    seen = _seen(request)
    deferred, seen.deferred = seen.deferred, _NOTHING
    return deferred


def counted(request: Any, deferred: Deferred, counts: list[int]) -> None:
    """Take a script's counts of `deferred`'s windows as check() takes its own: kept for
    the headers, and RateLimited past any limit."""
    states = [
        _state(window, int(count), deferred.moment)
        for window, count in zip(deferred.windows, counts, strict=True)
    ]
    _judge(request, list(deferred.windows), states, deferred.moment)


# The request whose deferred windows the store's next read of article rows counts.
_riding: contextvars.ContextVar[Any] = contextvars.ContextVar("articles_limits_riding")


@contextlib.contextmanager
def riding(request: Any) -> Iterator[None]:
    """Let the windows deferred for `request` ride on the store's read of article rows in
    the body (ride()); those none took are counted after it, as check() would have (a
    body that raises leaves them to count_deferred, as the vote's handler does)."""
    token = _riding.set(request)
    try:
        yield
    finally:
        _riding.reset(token)
    count_deferred(request)


def ride() -> tuple[Any, Deferred] | None:
    """For the store's read of article rows (on the primary): the request inside riding()
    and its deferred windows, now the reader's to count and pass to counted(); None when
    there are none."""
    request = _riding.get(None)
    if request is None:
        return None
    deferred = take_deferred(request)
    return (request, deferred) if deferred.windows else None


def count_deferred(request: Any) -> None:
    """Count the windows deferred for `request` that no script has taken (its handler
    failed first: a 400), as check() would have. Raises what check() raises."""
    deferred = take_deferred(request)
    if deferred.windows:
        windows = list(deferred.windows)
        _judge(request, windows, _count(request, windows, deferred.moment), deferred.moment)


def refund(checked: Checked) -> None:
    """Give back the failure windows of a check whose attempt succeeded: a success is no
    failure. A window already gone stays gone."""
    if checked.taken:
        scripts.LOGIN_REFUND(keys=list(checked.taken), client=get_connection(retry=False))


def headers(request: Any) -> dict[str, str]:
    """The IETF draft's RateLimit-* fields for the tightest window `request` was counted
    in, or none."""
    state = _seen(request).tightest
    if state is None:
        return {}
    return {
        "RateLimit-Limit": str(state.limit),
        "RateLimit-Remaining": str(state.remaining),
        "RateLimit-Reset": str(state.reset),
    }


@dataclass(frozen=True, slots=True)
class _Window:
    action: str
    who: str
    rule: Rule
    start: int  # the window's number: its start is start * rule.period

    @property
    def key(self) -> str:
        return keys.rate_limit(self.action, self.who, self.start)

    def reset(self, now: float) -> int:
        """Whole seconds until the window has ended (Retry-After), rounded up: a client
        that waits them is not refused again by the same window."""
        return max(1, math.ceil((self.start + 1) * self.rule.period - now))

    def refused(self, now: float, *, reset_hint: bool = False) -> RateLimited:
        """The refusal, saying what was counted and when to try again; with `reset_hint`,
        it ends with RESET_HINT, the way out of a failed-login lock."""
        metrics.RATE_LIMITED.labels(action=self.action).inc()
        rule, reset = self.rule, self.reset(now)
        params = {
            "noun": rule.noun,
            "limit": rule.limit,
            "span": _span(rule.period),
            "when": clock.in_words(reset),
            "hint": RESET_HINT,
        }
        if reset_hint:
            message = gettext(
                "Too many %(noun)s: at most %(limit)d %(span)s. Try again %(when)s, or %(hint)s."
            )
        else:
            message = gettext("Too many %(noun)s: at most %(limit)d %(span)s. Try again %(when)s.")
        return RateLimited(reset, message % params)


_NOTHING = Deferred((), 0.0)


@dataclass(slots=True)
class _Seen:
    """What one request was counted in so far: the actions, the tightest window, and the
    windows deferred to a script (defer())."""

    counted: set[str] = field(default_factory=set)
    tightest: RateLimit | None = None
    deferred: Deferred = _NOTHING


_SEEN = "articles_rate_limits"


def _seen(request: Any) -> _Seen:
    http = getattr(request, "_request", request)  # DRF's Request wraps Django's
    seen = getattr(http, _SEEN, None)
    if seen is None:
        seen = _Seen()
        setattr(http, _SEEN, seen)
    return seen


def _count(request: Any, windows: list[_Window], now: float) -> list[RateLimit]:
    """Count one request in each window, in one round trip: each window's state."""
    pipe = get_connection().pipeline(transaction=True)
    for window in windows:
        pipe.incr(window.key)
        pipe.expire(window.key, window.rule.period + 1)
    try:
        counts = pipe.execute()[::2]
    except redis.ResponseError as exc:
        if not out_of_memory(exc):
            raise
        # Redis is full: it takes no counts. A read goes on uncounted (reads still work);
        # a write could not be stored anyway.
        if getattr(request, "method", "GET") in ("GET", "HEAD", "OPTIONS"):
            return []
        raise StoreFull() from None
    return [_state(w, int(count), now) for w, count in zip(windows, counts, strict=True)]


def _state(window: _Window, count: int, now: float) -> RateLimit:
    limit = window.rule.limit
    return RateLimit(
        allowed=count <= limit,
        limit=limit,
        remaining=max(0, limit - count),
        reset=window.reset(now),
    )


def _windows(
    request: Any, actions: tuple[str, ...], account: str | None, moment: float
) -> tuple[list[_Window], list[_Window]]:
    """The request windows and the failure windows `actions` count `request` in now; a
    request action already counted for it is skipped, and marked counted."""
    table, seen = rules(), _seen(request)
    requests: list[_Window] = []
    failures: list[_Window] = []
    for action in actions:
        rule = table.get(action)
        if rule is None:
            continue  # turned off
        if rule.counts == "requests":
            if action in seen.counted:
                continue
            seen.counted.add(action)
        who = _identity(request, rule.by, account)
        if who is not None:
            window = _Window(action, who, rule, int(moment // rule.period))
            (requests if rule.counts == "requests" else failures).append(window)
    return requests, failures


def _judge(
    request: Any, windows: list[_Window], states: list[RateLimit], moment: float
) -> RateLimit | None:
    """Keep the tightest of `states` for the headers (a refusal's too: for the 429), and
    raise RateLimited for the first window past its limit."""
    seen = _seen(request)
    tightest = _tightest(*states)
    seen.tightest = _tightest(seen.tightest, tightest)
    for window, state in zip(windows, states, strict=False):
        if not state.allowed:
            raise window.refused(moment)
    return tightest


def _take(windows: list[_Window], now: float) -> tuple[str, ...]:
    """Take one attempt from each failure window, or none (RateLimited) if one is spent."""
    counters = [w.key for w in windows]
    args = [n for w in windows for n in (w.rule.limit, w.rule.period + 1)]
    # Sent once: after a timeout the count may have been taken. Its error (OOM, timeout,
    # refused connection) goes up as it is, for every surface to answer with its 503.
    spent = int(scripts.LOGIN_ATTEMPT(keys=counters, args=args, client=get_connection(retry=False)))
    if spent:
        raise windows[spent - 1].refused(now, reset_hint=True)
    return tuple(counters)


def _identity(request: Any, by: Who, account: str | None) -> str | None:
    if by == "account":
        return _account(account) if account is not None else None
    user = getattr(request, "user", None)
    logged_in = bool(user is not None and user.is_authenticated)
    if by == "user" or (by == "caller" and logged_in):
        return f"u{user.pk}" if logged_in and user is not None else None
    return client_address(request)


def _account(username: str) -> str:
    """A key-safe name for the account a login names, whatever its characters or case, and
    as the login form reads it (stripped, NFKC), so " dave" is counted as dave."""
    name = unicodedata.normalize("NFKC", username.strip()).casefold()
    return "a" + hashlib.sha256(name.encode()).hexdigest()[:24]


def _span(seconds: int) -> str:
    """'every hour', 'every 15 minutes': a rule's period, as its refusal says it."""
    if seconds % 3600 == 0:
        count = seconds // 3600
        words = ngettext("every hour", "every %(count)d hours", count)
    elif seconds % 60 == 0:
        count = seconds // 60
        words = ngettext("every minute", "every %(count)d minutes", count)
    else:
        count = seconds
        words = ngettext("every %(count)d second", "every %(count)d seconds", count)
    return words % {"count": count}


def _tightest(*states: RateLimit | None) -> RateLimit | None:
    """The first of the tightest windows given."""
    found: RateLimit | None = None
    for state in states:
        if state is not None and (found is None or _tighter(state, found)):
            found = state
    return found


def _tighter(state: RateLimit, than: RateLimit) -> bool:
    if state.allowed != than.allowed:
        return not state.allowed
    return state.remaining < than.remaining
