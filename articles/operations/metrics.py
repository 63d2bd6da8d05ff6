"""The site's own Prometheus metrics: votes, posts, rate-limited requests, Redis errors and
Lua script latency. The host exposes them (votesite serves /metrics with django-prometheus)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from articles.errors import StoreCorrupt, StoreFull, StoreUnavailable

VOTES = Counter(
    "articles_votes",
    "Votes recorded, by direction (up, down, none) and outcome (changed, repeated).",
    ["direction", "outcome"],
)
POSTS = Counter("articles_posts", "Articles posted (a repeated idempotent post not counted).")
COMMENTS = Counter("articles_comments", "Comments posted (a repeated idempotent post not counted).")
COMMENT_VOTES = Counter(
    "articles_comment_votes",
    "Votes on comments, by direction (up, down, none) and outcome (changed, repeated).",
    ["direction", "outcome"],
)
RATE_LIMITED = Counter(
    "articles_rate_limited_requests",
    "Requests refused by a rate limit, by action.",
    ["action"],
)
REDIS_ERRORS = Counter(
    "articles_redis_errors",
    "Requests failed because of Redis, by kind: unavailable (down, read-only, too few "
    "replicas), full (out of memory), corrupt (data of the wrong shape).",
    ["kind"],
)
# Buckets from 100 µs: a script is one round trip, 100-300 µs on a quiet machine.
SCRIPT_SECONDS = Histogram(
    "articles_script_seconds",
    "Time to run one Lua script, round trip included, by script.",
    ["script"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
)


def count_error(exc: Exception) -> None:
    """Count an error answered to a client, if it is Redis' (responses and the API's
    handler call it, so each failed request counts once)."""
    for kind, error in _REDIS_KINDS:
        if isinstance(exc, error):
            REDIS_ERRORS.labels(kind=kind).inc()
            return


_REDIS_KINDS = (("unavailable", StoreUnavailable), ("full", StoreFull), ("corrupt", StoreCorrupt))
