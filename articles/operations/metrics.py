"""The site's own Prometheus metrics: votes, posts, rate-limited requests, Redis errors, Lua
script latency and the in-process caches. The host exposes them (votesite serves /metrics
with django-prometheus)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import REGISTRY, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from articles import caches
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


class CacheCollector(Collector):
    """Each cache's counters, read when /metrics is scraped (a hit costs no metric call)."""

    def collect(self) -> Iterator[Metric]:
        labels = ["cache", "kind"]
        hits = CounterMetricFamily(
            "articles_cache_hits", "Lookups a cache answered.", labels=labels
        )
        misses = CounterMetricFamily(
            "articles_cache_misses", "Lookups a cache could not answer.", labels=labels
        )
        evictions = CounterMetricFamily(
            "articles_cache_evictions", "Entries pushed out by a cache's bound.", labels=labels
        )
        entries = GaugeMetricFamily(
            "articles_cache_entries", "Entries a cache holds.", labels=labels
        )
        size = GaugeMetricFamily(
            "articles_cache_bytes", "Bytes a size-bounded cache holds (else 0).", labels=labels
        )
        for cache in caches.every():
            named = [cache.name, str(cache.kind)]
            hits.add_metric(named, cache.hits)
            misses.add_metric(named, cache.misses)
            evictions.add_metric(named, cache.evictions)
            entries.add_metric(named, len(cache))
            size.add_metric(named, cache.bytes)
        yield from (hits, misses, evictions, entries, size)


REGISTRY.register(CacheCollector())
