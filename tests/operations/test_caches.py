"""The one cache mechanism: bounded by entries and bytes, expiring, emptied by any settings
change, each cache named in its module's docstring and shown on /metrics."""

from __future__ import annotations

import importlib
import pkgutil
import threading
import time

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

import articles
from articles import caches
from articles.caches import Cache, Kind
from articles.store import services
from articles.types import NewPost

pytestmark = pytest.mark.django_db


def samples(client: Client) -> dict[tuple[str, str], float]:
    body = client.get("/metrics").content.decode()
    return {
        (sample.name, sample.labels["cache"]): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
        if family.name.startswith("articles_cache_")
    }


def test_each_cache_is_on_metrics_with_its_hits_and_misses(settings):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    services.article_post(
        NewPost(user_id=9, poster_name="u9", title="Counted", link="https://e.org/c")
    )
    client = Client()
    before = samples(client)
    names = {cache.name for cache in caches.every()}
    assert {"anonymous_pages", "rows", "markdown", "feeds", "url_patterns"} <= names
    assert {"session_users", "api_tokens", "jinja2_environment", "ages"} <= names
    assert {name for _, name in before} == names
    client.get("/new/")
    client.get("/new/")
    after = samples(client)
    assert after[("articles_cache_misses_total", "anonymous_pages")] == (
        before[("articles_cache_misses_total", "anonymous_pages")] + 1
    )
    assert after[("articles_cache_hits_total", "anonymous_pages")] == (
        before[("articles_cache_hits_total", "anonymous_pages")] + 1
    )
    assert after[("articles_cache_entries", "anonymous_pages")] == 1


def test_bounded_by_entries_and_bytes_the_least_recently_used_going_first():
    cache: Cache[str, str] = Cache("test_bounds", Kind.CONTENT, entries=3, max_bytes=100)
    for key in "abc":
        cache.put(key, key, size=10)
    assert cache.get("a") == "a"  # used: "b" is now the oldest
    cache.put("d", "d", size=10)
    assert list(cache) == ["c", "a", "d"] and cache.evictions == 1
    cache.put("e", "e", size=85)
    assert list(cache) == ["d", "e"] and cache.bytes == 95
    cache.put("huge", "x", size=101)  # past the whole bound: not kept, nothing pushed out
    assert "huge" not in cache and list(cache) == ["d", "e"]
    assert (cache.hits, cache.misses) == (1, 0)


def test_an_entry_put_with_an_expiry_is_gone_from_then_on():
    cache: Cache[str, int] = Cache("test_expiry", Kind.TTL, entries=10)
    cache.put("soon", 1, expires=time.monotonic() + 0.05)
    cache.put("never", 2)
    assert cache.get("soon") == 1
    time.sleep(0.06)
    assert cache.get("soon") is None and cache.get("never") == 2
    assert "soon" not in cache


def test_threads_sharing_a_cache_keep_it_within_its_bound():
    cache: Cache[int, int] = Cache("test_threads", Kind.CONTENT, entries=50, max_bytes=400)

    def work(base: int) -> None:
        for i in range(2000):
            cache.put(base + i % 80, i, size=8)
            cache.get(base + (i * 7) % 80)

    threads = [threading.Thread(target=work, args=(n * 1000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) <= 50 and cache.bytes == 8 * len(cache) <= 400
    assert cache.hits + cache.misses == 8000


def test_any_settings_change_empties_every_cache(settings):
    cache: Cache[str, int] = Cache("test_settings", Kind.CONTENT, entries=10)
    cache.put("k", 1)
    settings.ARTICLES_SITE_NAME = "Elsewhere"
    assert len(cache) == 0


def test_each_cache_of_the_app_is_named_in_a_docstring_that_gives_its_kind_and_bound():
    """The app's caches, and the host project's (votesite's), each in its own module."""
    for info in pkgutil.walk_packages(articles.__path__, "articles."):
        if not info.name.startswith(("articles.management.commands", "articles.migrations")):
            importlib.import_module(info.name)
    docs = {
        name: module.__doc__ or ""
        for name, module in list(__import__("sys").modules.items())
        if name in ("articles", "votesite") or name.startswith(("articles.", "votesite."))
    }
    for cache in caches.every():
        if cache.name.startswith("test_") or cache.name.endswith("_other_process"):
            continue
        assert any(f'"{cache.name}"' in doc for doc in docs.values()), cache.name
