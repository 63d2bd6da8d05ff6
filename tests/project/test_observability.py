"""Observability with real requests: the request log lines (key=value or JSON), the start-up
warning about a Redis that can lose votes (under gunicorn too), and /metrics."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from articles.operations.embedded import EmbeddedRedis
from articles.store import services
from articles.types import NewPost
from tests.harness import answered, free_port, gunicorn_command, production_env, redis_down

ROOT = Path(__file__).resolve().parents[2]


def metric_values(body: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of a Prometheus text page."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def test_metrics_are_refused_to_the_public_and_served_to_internal_addresses_and_staff(
    client, make_user
):
    public = {"REMOTE_ADDR": "203.0.113.9"}
    response = client.get("/metrics", **public)
    assert response.status_code == 403
    assert b"articles_votes" not in response.content

    client.force_login(make_user("ops", staff=True))
    assert client.get("/metrics", **public).status_code == 200
    client.logout()

    response = client.get("/metrics")  # the test client's address is 127.0.0.1
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert b"django_http_requests_total_by_method_total" in response.content


@pytest.mark.usefixtures("clock")
def test_metrics_count_votes_posts_rate_limits_redis_errors_and_script_latency(
    client, make_user, settings
):
    settings.ARTICLES_RATE_LIMITS = {"vote": (2, 60)}
    before = metric_values(client.get("/metrics").content)

    ann, bob = make_user("ann"), make_user("bob")
    article = services.article_post(NewPost(user_id=ann.pk, poster_name="ann", title="t", text="b"))
    client.force_login(bob)
    assert client.post(f"/a/{article.id}/vote/", {"direction": "up"}).status_code == 302
    assert client.post(f"/a/{article.id}/vote/", {"direction": "up"}).status_code == 302
    assert client.post(f"/a/{article.id}/vote/", {"direction": "down"}).status_code == 429
    client.logout()
    with redis_down():
        assert client.get("/").status_code == 503

    after = metric_values(client.get("/metrics").content)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert grew("articles_posts_total") == 1
    assert grew("articles_votes_total", direction="up", outcome="changed") == 1
    assert grew("articles_votes_total", direction="up", outcome="repeated") == 1
    assert grew("articles_rate_limited_requests_total", action="vote") == 1
    assert grew("articles_redis_errors_total", kind="unavailable") == 1
    # Votes run vote_guarded.lua, which counts the vote's limit too: the third is refused in it.
    assert grew("articles_script_seconds_count", script="vote_guarded") == 3
    assert grew("articles_script_seconds_count", script="post") == 1
    assert grew("articles_script_seconds_sum", script="vote_guarded") > 0


def test_each_request_is_logged_with_its_id_user_path_status_and_duration(
    client, make_user, caplog
):
    """Ensure the request line carries the user who made it and the id sent back in
    X-Request-ID, and keeps a plain id a proxy gave."""
    caplog.set_level("INFO", logger="votesite.requests")
    user = make_user("ann")
    client.force_login(user)
    response = client.get("/new/", HTTP_X_REQUEST_ID="lb-42.abc")
    assert response["X-Request-ID"] == "lb-42.abc"
    response = client.get("/new/", HTTP_X_REQUEST_ID="bad id\nwith a newline")
    made = response["X-Request-ID"]
    assert len(made) == 32 and made.isalnum()

    lines = [r.msg for r in caplog.records if r.name == "votesite.requests"]
    assert [line["request_id"] for line in lines] == ["lb-42.abc", made]
    for line in lines:
        assert line["event"] == "request"
        assert (line["method"], line["path"], line["status"]) == ("GET", "/new/", 200)
        assert line["user_id"] == user.pk
        assert line["duration_ms"] >= 0
        assert line["level"] == "info" and "timestamp" in line


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 loopback
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture
def careless_redis() -> Iterator[EmbeddedRedis]:
    """A Redis that could lose votes: no persistence, keys evicted under memory pressure."""
    directory = Path(tempfile.mkdtemp(prefix="vs-obs-", dir="/tmp"))  # short: a socket path
    server = EmbeddedRedis(
        directory, daemonize=False, extra_config="appendonly no\nmaxmemory-policy allkeys-lru\n"
    )
    server.start()
    yield server
    server.stop()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.slow
def test_gunicorn_warns_at_start_up_about_a_careless_redis_and_logs_json_lines(
    careless_redis: EmbeddedRedis, tmp_path: Path
):
    port = free_port()
    env = production_env(
        DJANGO_LOG_FORMAT="json",
        REDIS_URL=f"{careless_redis.url}?db=0",
        VOTESITE_VAR_DIR=str(tmp_path),
        # Two workers, one /metrics: each worker writes its figures there (make serve does).
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
    )
    process = subprocess.Popen(
        gunicorn_command(port, "--workers", "2"),
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream: every line of either must be JSON
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def output() -> str:
            process.kill()
            return process.communicate()[0]

        # Sixty seconds: two workers booting on a busy machine.
        status, headers, _ = answered(
            process, lambda: _get(f"{base}/top/"), seconds=60, said=output
        )
        assert status == 200
        for _ in range(9):
            assert _get(f"{base}/top/")[0] == 200
        asked = urllib.request.Request(  # noqa: S310 loopback
            f"{base}/new/?page=1&x=%22y%22",
            headers={"User-Agent": "probe/1.0 (ops)", "X-Forwarded-For": "198.51.100.7"},
        )
        with urllib.request.urlopen(asked, timeout=10) as response:  # noqa: S310 loopback
            assert response.status == 200
        status, _, body = _get(f"{base}/metrics")
        assert status == 200
        served = metric_values(body)[
            ("django_http_responses_total_by_status_total", (("status", "200"),))
        ]
        assert served >= 10
        # each worker keeps its own file there, and /metrics adds them up
        assert len(list(tmp_path.glob("counter_*.db"))) == 2
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0]

    # One format for the whole stream: gunicorn's own lines (start-up, worker boot and exit)
    # are JSON like the site's.
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]
    gunicorn = [line["event"] for line in lines if line["logger"] == "gunicorn.error"]
    assert sum("Booting worker" in event for event in gunicorn) == 2, gunicorn
    assert any("Listening at" in event for event in gunicorn), gunicorn
    assert any("Shutting down" in event or "Handling signal" in event for event in gunicorn)
    asked_line = next(line for line in lines if line.get("path") == "/new/")
    assert asked_line["query"] == "page=1&x=%22y%22"
    assert asked_line["user_agent"] == "probe/1.0 (ops)"
    assert asked_line["client"] == "127.0.0.1"  # no trusted proxy: the header is not believed
    warnings = [line["event"] for line in lines if line["level"] == "warning"]
    assert len(warnings) >= 4  # two lines from each worker
    assert any("Redis persistence is OFF" in w and "articles.W002" in w for w in warnings)
    assert any("allkeys-lru" in w and "articles.W003" in w for w in warnings)
    top = next(line for line in lines if line.get("path") == "/top/")
    assert top["event"] == "request" and top["status"] == 200 and top["method"] == "GET"
    assert top["request_id"] == headers["X-Request-ID"] and top["user_id"] is None
    assert top["logger"] == "votesite.requests" and top["timestamp"].endswith("Z")
