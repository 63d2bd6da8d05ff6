"""/healthz and /healthz/ready: 200 with the Redis status, or a clear 503 when Redis or the
database is unreachable; /healthz/live: 200 while the process answers, whatever they do."""

from __future__ import annotations

import time

import pytest

from tests.harness import redis_down, redis_refusing_writes
from tests.project.test_database_outage import _get, site_without_database  # noqa: F401

pytestmark = pytest.mark.django_db  # /healthz probes the database too


def test_healthz_reports_redis(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["redis"]["aof_enabled"] is True


def test_healthz_answers_503_fast_when_redis_is_unreachable(client):
    with redis_down("default", "articles"):
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
    from articles.store import services
    from tests.actors import staff_actor

    services.group_create(name="books", actor=staff_actor())
    with redis_refusing_writes(redis_server, "min-replicas-to-write"):
        response = client.get("/g/books/")
        api = client.get("/api/groups/books/articles/")
    assert response.status_code == 503
    assert "unreachable" in response.content.decode() or "try again" in response.content.decode()
    assert (api.status_code, api.json()["code"]) == (503, "store_unavailable")
    assert client.get("/g/books/").status_code == 200


def test_healthz_shows_each_dependency_and_keeps_figures_for_staff_and_internal_addresses(
    client, make_user
):
    outside = client.get("/healthz", REMOTE_ADDR="203.0.113.7").json()
    assert outside == {
        "status": "ok",
        "redis": {
            "reachable": True,
            "role": "primary",
            "persistence": "aof+rdb",  # the embedded server's own config
            "aof_enabled": True,
            "full": False,
        },
        "database": {"reachable": True},
    }
    inside = client.get("/healthz").json()  # the test client is 127.0.0.1
    assert inside["redis"]["details"]["used_memory"] > 0
    client.force_login(make_user("mod", staff=True))
    staff = client.get("/healthz", REMOTE_ADDR="203.0.113.7").json()
    assert staff["redis"]["details"]["articles"] == 0


def test_healthz_names_no_host_or_port_when_redis_is_unreachable(client):
    with redis_down("default", "articles", at="redis://127.0.0.1:1/0"):
        response = client.get("/healthz", REMOTE_ADDR="203.0.113.7")
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    assert response.json()["redis"] == {"reachable": False}
    assert "127.0.0.1" not in response.content.decode() and ":1" not in response.content.decode()


def test_liveness_stays_200_while_redis_is_unreachable_and_readiness_says_503(client):
    """Ensure an orchestrator restarting on /healthz/live leaves workers alone in a Redis
    outage, while /healthz/ready takes them out of rotation (as /healthz does)."""
    with redis_down("default", "articles"):
        live = client.get("/healthz/live")
        ready = client.get("/healthz/ready")
        legacy = client.get("/healthz")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    assert live["Cache-Control"].startswith("max-age=0")
    assert ready.status_code == 503 and int(ready["Retry-After"]) > 0
    assert ready.json() == legacy.json()
    assert ready.json()["redis"] == {"reachable": False}
    assert client.get("/healthz/ready").status_code == 200  # and back once Redis is


def test_liveness_asks_neither_redis_nor_the_database(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert client.get("/healthz/live").status_code == 200


@pytest.mark.slow
def test_liveness_stays_200_while_the_database_is_unreachable(site_without_database):  # noqa: F811
    base = site_without_database
    status, _, body = _get(f"{base}/healthz/live")
    assert (status, body) == (200, b'{"status": "ok"}')
    status, headers, body = _get(f"{base}/healthz/ready")
    assert status == 503 and int(headers["Retry-After"]) > 0
    assert b'"database": {"reachable": false}' in body
