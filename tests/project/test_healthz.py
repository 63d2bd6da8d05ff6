"""/healthz: 200 with the Redis status, or a clear 503 when Redis is unreachable."""

from __future__ import annotations

import time

from django.test import override_settings

from votesite.settings import redis_cache


def test_healthz_reports_redis(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["redis"]["aof_enabled"] is True


def test_healthz_answers_503_fast_when_redis_is_unreachable(client, tmp_path):
    dead = redis_cache(f"unix://{tmp_path}/nothing.sock?db=0")
    with override_settings(CACHES={"default": dead, "articles": dead}):
        started = time.monotonic()
        response = client.get("/healthz")
        elapsed = time.monotonic() - started
    assert response.status_code == 503
    assert "unreachable" in response.json()["detail"]
    assert elapsed < 1.0
    assert client.get("/healthz").status_code == 200  # and back once Redis is


def test_a_redis_refusing_writes_makes_a_cached_ranking_page_a_503_not_a_500(client, redis_server):
    """Ensure the group page, whose script (re)builds the 60 s cache, says 503 when the
    primary refuses writes (min-replicas-to-write with no replica), and recovers."""
    from articles import services

    services.group_create(name="books")
    server = redis_server.client()
    server.config_set("min-replicas-to-write", 1)
    try:
        response = client.get("/g/books/")
        api = client.get("/api/groups/books/articles/")
    finally:
        server.config_set("min-replicas-to-write", 0)
    assert response.status_code == 503
    assert "unreachable" in response.content.decode() or "try again" in response.content.decode()
    assert (api.status_code, api.json()["code"]) == (503, "store_unavailable")
    assert client.get("/g/books/").status_code == 200
