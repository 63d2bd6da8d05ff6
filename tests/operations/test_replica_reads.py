"""Reads from a real replica: anonymous pages and API reads go there, a writer's next pages
and token clients go to the primary, and a replica that falls behind or goes away is
left for the primary, never a 503."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client, override_settings

from articles.operations.checks import check_configuration
from articles.operations.embedded import EmbeddedRedis
from articles.store import replicas, services
from articles.store.tokens import token_create
from articles.types import NewPost
from tests import factories
from tests.harness import free_port, primary_and_replica, redis_hung, store_on

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture
def replica(tmp_short: Path) -> Iterator[tuple[EmbeddedRedis, EmbeddedRedis]]:
    primary, copy = primary_and_replica(tmp_short, "repl-diskless-sync-delay 0\n")
    try:
        with (
            store_on(f"redis://127.0.0.1:{primary.port}/0"),
            override_settings(
                ARTICLES_REDIS_READ_URLS=[f"redis://127.0.0.1:{copy.port}/0"],
                ARTICLES_ANONYMOUS_PAGE_SECONDS=0,  # every page read, none kept
            ),
        ):
            _until(lambda: _caught_up(primary, copy), "the replica's first sync")
            yield primary, copy
    finally:
        for server in (copy, primary):
            if server.process is not None:
                server.process.kill()
                server.process.wait()


def _until(predicate, what: str, timeout: float = 20) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:  # noqa: S110 (a server still starting)
            pass
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {timeout} s")


def _caught_up(primary: EmbeddedRedis, copy: EmbeddedRedis) -> bool:
    mine = copy.client().info("replication")
    theirs = primary.client().info("replication")
    return bool(
        mine.get("master_link_status") == "up"
        and mine["slave_repl_offset"] >= theirs["master_repl_offset"]
    )


def _reads(server: EmbeddedRedis) -> int:
    """Scripts run on `server` (every page reads its rows with one)."""
    stats = server.client().info("commandstats")
    return sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in ("evalsha", "eval"))


def _post(title: str) -> int:
    return services.article_post(NewPost(user_id=1, poster_name="ann", title=title, text="t")).id


def _settle(primary: EmbeddedRedis, copy: EmbeddedRedis) -> None:
    """The replica holds every write, and this process's next check will see it."""
    _until(lambda: _caught_up(primary, copy), "the replica catching up")
    time.sleep(replicas.CHECK_SECONDS + 0.1)


def test_anonymous_pages_and_api_reads_come_from_the_replica(replica, client: Client):
    primary, copy = replica
    article_id = _post("Read from a copy")
    _settle(primary, copy)
    before = _reads(primary), _reads(copy)
    for path in (
        "/",
        "/new/",
        f"/a/{article_id}/",
        "/api/articles/",
        f"/api/articles/{article_id}/",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert b"Read from a copy" in response.content, path
    assert _reads(copy) - before[1] >= 5
    assert _reads(primary) == before[0]


def test_a_token_client_and_a_writer_read_from_the_primary(replica, client: Client):
    primary, copy = replica
    article_id = _post("Mine")
    member = factories.user("voter")
    token = token_create(user=member)
    _settle(primary, copy)
    before = _reads(copy)
    response = client.get(f"/api/articles/{article_id}/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200 and _reads(copy) == before

    client.force_login(member)
    voted = client.post(f"/a/{article_id}/vote/", {"direction": "up"})
    assert voted.status_code in (200, 302, 303)
    cookie = voted.cookies[replicas.WROTE_COOKIE]
    assert int(cookie["max-age"]) == 5 and cookie["httponly"]
    page = client.get(f"/a/{article_id}/")
    assert page.status_code == 200 and _reads(copy) == before  # its own vote, on the primary
    del client.cookies[replicas.WROTE_COOKIE]  # what the browser does after 5 s
    assert client.get(f"/a/{article_id}/").status_code == 200
    assert _reads(copy) > before


def test_a_replica_that_falls_behind_is_left_until_it_catches_up(replica, client: Client):
    primary, copy = replica
    _settle(primary, copy)
    copy.client().replicaof("127.0.0.1", free_port())  # its link is cut: it stops following
    newest = _post("Written after the copy stopped")
    time.sleep(replicas.CHECK_SECONDS + 0.1)
    before = _reads(copy)
    response = client.get(f"/a/{newest}/")
    assert response.status_code == 200 and b"Written after the copy stopped" in response.content
    assert b"Written after the copy stopped" in client.get("/new/").content
    assert _reads(copy) == before

    copy.client().replicaof("127.0.0.1", primary.port)
    _settle(primary, copy)
    assert client.get(f"/a/{newest}/").status_code == 200
    assert _reads(copy) > before


def _read_from_the_copy(
    replica: tuple[EmbeddedRedis, EmbeddedRedis], client: Client
) -> tuple[EmbeddedRedis, int]:
    """An article, and the copy found fit and read from by a page, before the next check."""
    primary, copy = replica
    article_id = _post("Still here")
    _settle(primary, copy)
    before = _reads(copy)
    assert client.get("/").status_code == 200 and _reads(copy) > before
    return copy, article_id


def test_a_replica_that_hangs_costs_a_retry_on_the_primary_never_a_503(replica, client: Client):
    copy, article_id = _read_from_the_copy(replica, client)
    with redis_hung(copy):  # before the next check: the read itself meets it
        response = client.get(f"/a/{article_id}/")
        assert response.status_code == 200 and b"Still here" in response.content
        started = time.monotonic()
        assert client.get("/api/articles/").status_code == 200
        assert time.monotonic() - started < 0.5  # left alone now, not waited for again


def test_a_replica_that_goes_away_costs_a_retry_on_the_primary_never_a_503(replica, client: Client):
    copy, article_id = _read_from_the_copy(replica, client)
    copy.stop()
    for path in ("/", f"/a/{article_id}/", "/api/articles/"):
        response = client.get(path)
        assert response.status_code == 200 and b"Still here" in response.content, path


def test_the_checks_want_the_middleware_and_a_writers_window_longer_than_the_lag(settings):
    settings.ARTICLES_REDIS_READ_URLS = ["redis://127.0.0.1:1/0"]
    assert [m.id for m in check_configuration() if m.id.startswith("articles.")] == []
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if "ReplicaReads" not in m]
    settings.ARTICLES_READ_YOUR_WRITES_SECONDS = 3
    ids = [m.id for m in check_configuration()]
    assert "articles.W007" in ids and "articles.E006" in ids


def test_the_middleware_leaves_the_stack_without_replicas(settings):
    """Made without ARTICLES_REDIS_READ_URLS (as a process makes its stack once), it is
    not used: no layer for requests to pass through. With them it is made."""
    from django.core.exceptions import MiddlewareNotUsed
    from django.http import HttpResponse

    from articles.http.middleware import ReplicaReadsMiddleware

    settings.ARTICLES_REDIS_READ_URLS = []
    with pytest.raises(MiddlewareNotUsed):
        ReplicaReadsMiddleware(lambda request: HttpResponse())
    settings.ARTICLES_REDIS_READ_URLS = ["redis://127.0.0.1:1/0"]
    assert ReplicaReadsMiddleware(lambda request: HttpResponse()).get_response
