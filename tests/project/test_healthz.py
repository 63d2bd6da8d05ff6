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
