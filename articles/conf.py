"""App settings: ARTICLES_* from django.conf.settings, read at call time, with defaults."""

from __future__ import annotations

from django.conf import settings

DEFAULTS: dict[str, int | str] = {
    "REDIS_ALIAS": "articles",
    "VOTE_SCORE": 432,
    "ONE_WEEK_IN_SECONDS": 604_800,
    "PER_PAGE": 25,
    "MAX_PAGE": 100_000,
    "GOOD_ARTICLE_VOTES": 200,
    "HOME_GOOD_ARTICLES": 50,
    "GROUP_CACHE_SECONDS": 60,
    "IDEMPOTENCY_SECONDS": 86_400,
    "MODLOG_LENGTH": 10_000,
    # branch reliability: replicas a write must reach before it is acknowledged (WAIT)
    "WAIT_REPLICAS": 0,
    "WAIT_TIMEOUT_MS": 500,
}


def get(name: str) -> int | str:
    """ARTICLES_<name> from settings, else the default."""
    value: int | str = getattr(settings, f"ARTICLES_{name}", DEFAULTS[name])
    return value


def redis_alias() -> str:
    return str(get("REDIS_ALIAS"))


def vote_score() -> int:
    return int(get("VOTE_SCORE"))


def window() -> int:
    return int(get("ONE_WEEK_IN_SECONDS"))


def per_page() -> int:
    return int(get("PER_PAGE"))


def max_page() -> int:
    return int(get("MAX_PAGE"))


def good_votes() -> int:
    return int(get("GOOD_ARTICLE_VOTES"))


def home_good() -> int:
    return int(get("HOME_GOOD_ARTICLES"))


def group_cache_seconds() -> int:
    return int(get("GROUP_CACHE_SECONDS"))


def idempotency_seconds() -> int:
    return int(get("IDEMPOTENCY_SECONDS"))


def modlog_length() -> int:
    return int(get("MODLOG_LENGTH"))


# --- branch reliability ----------------------------------------------------------------


def wait_replicas() -> int:
    return int(get("WAIT_REPLICAS"))


def wait_timeout_ms() -> int:
    return int(get("WAIT_TIMEOUT_MS"))


# scope -> (requests allowed, per this many seconds); ARTICLES_RATE_LIMITS overrides. The
# pages and the API count the same per-user "post" and "vote" windows, so neither is a way
# around the other.
RATE_LIMIT_DEFAULTS: dict[str, tuple[int, int] | None] = {
    "post": (10, 3600),
    "vote": (60, 60),
    "signup": (10, 3600),
}


def rate_limits() -> dict[str, tuple[int, int] | None]:
    return {**RATE_LIMIT_DEFAULTS, **getattr(settings, "ARTICLES_RATE_LIMITS", {})}
