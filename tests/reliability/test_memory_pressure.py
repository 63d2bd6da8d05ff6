"""Redis out of memory (maxmemory reached, noeviction): reads keep working, writes get a
503 "storage full" with Retry-After, and /healthz says so. On a Redis of the test's own,
with its maxmemory set below what it uses (CONFIG SET)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client
from rest_framework.test import APIClient

from articles.operations.embedded import EmbeddedRedis
from articles.store import services
from articles.types import NewPost
from tests.harness import redis_refusing_writes


@pytest.fixture
def full_redis(own_redis: EmbeddedRedis) -> Iterator[EmbeddedRedis]:
    """The test's own Redis, with one article, then made full."""
    services.article_post(NewPost(user_id=1, poster_name="a", title="Kept", link="https://e.org/1"))
    with redis_refusing_writes(own_redis):
        yield own_redis


def test_reads_keep_working_while_redis_is_full(full_redis, make_user):
    api = APIClient()
    api.force_authenticate(make_user())
    for response in (
        api.get("/api/articles/"),  # counted against the per-address limit first
        api.get("/api/articles/1/"),
        Client().get("/new/"),
        Client().get("/a/1/"),
    ):
        assert response.status_code == 200
        assert b"Kept" in response.content


def test_writes_get_a_storage_full_503_with_retry_after(full_redis, make_user):
    user = make_user()
    api = APIClient()
    api.force_authenticate(user)
    post = api.post("/api/articles/", {"title": "T", "link": "https://e.org/2"}, format="json")
    vote = api.put("/api/articles/1/vote/", {"value": "up"}, format="json")
    page = Client()
    page.force_login(user)
    voted = page.post("/a/1/vote/", {"direction": "up"})
    for response in (post, vote, voted):
        assert response.status_code == 503
        assert int(response["Retry-After"]) > 0
    assert post.json()["code"] == vote.json()["code"] == "store_full"
    assert "full" in post.json()["detail"] and b"full" in voted.content
    assert full_redis.client().hget("article:1", "votes") == b"1"


def test_healthz_reports_a_full_store(full_redis, db):
    body = Client().get("/healthz").json()
    assert body["status"] == "degraded" and "full" in body["detail"]
    assert body["redis"]["reachable"] is True and body["redis"]["full"] is True
