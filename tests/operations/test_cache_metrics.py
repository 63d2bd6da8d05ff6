"""Every in-process cache shows on /metrics by name and kind, with its hits and misses."""

from __future__ import annotations

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from articles import caches
from articles.store import services

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
    services.article_post(user_id=9, poster_name="u9", title="Counted", link="https://e.org/c")
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
