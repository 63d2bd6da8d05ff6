"""Django's database down (here a PostgreSQL address nothing listens on, for real): every
surface that needs it answers a clear 503, pages served from Redis alone keep working,
and /healthz reports each dependency without echoing the error, host or port."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from articles.operations.embedded import EmbeddedRedis
from articles.store import services
from articles.types import NewPost
from tests.actors import staff_actor
from tests.harness import ROOT, answered, free_port, gunicorn_command, production_env

pytestmark = pytest.mark.slow


def _get(
    url: str,
    headers: dict[str, str] | None = None,
    data: bytes | None = None,
    method: str | None = None,
):  # type: ignore[no-untyped-def]
    request = urllib.request.Request(url, headers=headers or {}, data=data, method=method)  # noqa: S310 http://127.0.0.1 only
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture
def site_without_database(redis_server: EmbeddedRedis, tmp_path: Path) -> Iterator[str]:
    """The project under gunicorn, DEBUG off, its database a PostgreSQL port that refuses."""
    db_port = free_port()
    port = free_port()
    env = production_env(
        DATABASE_URL=f"postgresql://votesite:secret@127.0.0.1:{db_port}/votesite",
        REDIS_URL=f"{redis_server.url}?db=0",
        VOTESITE_VAR_DIR=str(tmp_path),
    )
    process = subprocess.Popen(
        gunicorn_command(port, "--workers", "1", "--log-level", "warning"),
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        answered(
            process,
            lambda: _get(f"{base}/healthz"),
            seconds=30,
            said=lambda: process.stderr.read().decode() if process.stderr else "",
        )
        yield base
    finally:
        process.terminate()
        process.wait(10)


def test_a_database_outage_is_a_503_where_it_is_needed_and_nowhere_else(site_without_database):
    base = site_without_database
    services.article_post(NewPost(user_id=1, poster_name="ann", title="Still here", text="body"))

    status, headers, body = _get(f"{base}/healthz")
    health = json.loads(body)
    assert status == 503 and int(headers["Retry-After"]) > 0
    assert health["status"] == "unavailable" and "database" in health["detail"]
    assert health["database"] == {"reachable": False}
    assert health["redis"]["reachable"] is True and health["redis"]["role"] == "primary"
    assert "used_memory" in health["redis"]["details"]  # asked from loopback: internal
    for leak in ("127.0.0.1", "5432", "postgres", "refused", "votesite:secret"):
        assert leak not in body.decode(), leak

    token = {"Authorization": "Token 0123456789abcdef0123456789abcdef01234567"}
    for path in ("/api/articles/", "/api/articles/1/"):
        status, headers, body = _get(f"{base}{path}", token)
        assert status == 503, (path, body)
        assert json.loads(body)["code"] == "database_unavailable"
        assert int(headers["Retry-After"]) > 0
    # A plain token vote by a token the process does not keep reads it itself (api/lean.py).
    vote = {**token, "Content-Type": "application/json"}
    status, headers, body = _get(f"{base}/api/articles/1/vote/", vote, b'{"value": "up"}', "PUT")
    assert status == 503 and json.loads(body)["code"] == "database_unavailable", body
    form = b"username=ann&password=pw"
    status, _, body = _get(
        f"{base}/api/auth/token/", {"Content-Type": "application/x-www-form-urlencoded"}, form
    )
    assert status == 503 and json.loads(body)["code"] == "database_unavailable"

    # A logged-in visitor's page needs the session's user: a clear 503 page.
    status, _, body = _get(
        f"{base}/new/", {"Cookie": f"sessionid={'s' * 32}", "Accept": "text/html"}
    )
    assert status == 503 and b"database is unreachable" in body and b"Traceback" not in body

    # Anonymous readers are served from Redis alone.
    status, _, body = _get(f"{base}/api/articles/")
    assert status == 200 and json.loads(body)["count"] == 1
    status, _, body = _get(f"{base}/new/")
    assert status == 200 and b"Still here" in body
    # The moderation log too: its people named, not linked (their accounts are unknown).
    services.group_create(name="redis", actor=staff_actor("mod"))
    status, _, body = _get(f"{base}/modlog/")
    assert status == 200 and b"created a group" in body and b'href="/u/mod/"' not in body
