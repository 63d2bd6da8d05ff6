"""A hung Redis (SIGSTOP) under the site as `make serve` runs it (gunicorn with
gunicorn.conf.py, 2 workers), with many clients at once: every request started during the
hang is answered 503 (or 200 from a page kept in the process) within the README's bound,
none queues behind another's wait, none is a 500, and the site recovers by itself.

Under 2 sync workers and the old retry of timeouts, requests queued behind the hang waited
5-7 s and single ones up to 4.07 s."""

from __future__ import annotations

import logging
import os
import signal
import statistics
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from articles.operations.embedded import EmbeddedRedis
from articles.store import services
from articles.types import NewPost
from tests.harness import answered, free_port, gunicorn_command, production_env

pytestmark = pytest.mark.slow
log = logging.getLogger("reliability")

BASE = Path(__file__).resolve().parents[2]
# README, Reliability ("Outages are short and loud"): a request started during a hang waits
# on Redis once at most, REDIS_SOCKET_TIMEOUT (1 s) plus REDIS_CONNECT_TIMEOUT (0.5 s) if it
# had to open a connection. The test adds 1 s for the 2 busy cores it shares; the old
# figures (5-7 s queued, 4.07 s single) stay well outside.
BOUND = 1.5
SLACK = 1.0
CLIENTS = 12
HANG = 3.0  # seconds of firing requests at the hung server
PROBE = 0.5  # seconds a breaker's probe may take once Redis is back, on a loaded machine
PATHS = ["/", "/new/", "/top/", "/groups/", "/a/1/", "/feeds/new/", "/api/articles/", "/healthz"]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=15) as response:  # noqa: S310 our own server
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture
def served(own_redis: EmbeddedRedis, tmp_short: Path) -> Iterator[str]:
    """The site under gunicorn as `make serve` starts it (its config file, 2 workers), on
    the test's own Redis, the API's and the feeds' per-address limits raised
    (ARTICLES_API_PER_MINUTE, ARTICLES_FEEDS_PER_MINUTE); anonymous pages only, so its
    SQLite file needs no tables."""
    port = free_port()
    env = production_env(
        # 12 clients on 127.0.0.1 would pass the API's and the feeds' 600 a minute (a fast
        # run answered 429 to the feed): not what this tests
        ARTICLES_API_PER_MINUTE="1000000000",
        ARTICLES_FEEDS_PER_MINUTE="1000000000",
        DATABASE_URL=f"sqlite:///{tmp_short / 'db.sqlite3'}",
        REDIS_URL=f"{own_redis.url}?db=0",
        VOTESITE_VAR_DIR=str(tmp_short),
    )
    env.pop("DJANGO_STATIC_MANIFEST", None)  # no collectstatic here
    # A file, not a pipe: every 503 is logged, and a full pipe would stall the workers.
    errors = (tmp_short / "gunicorn.log").open("wb")
    process = subprocess.Popen(
        gunicorn_command(
            port,
            *("--config", "gunicorn.conf.py", "--workers", "2"),
            *("--log-level", "warning", "--access-logfile", "/dev/null"),
        ),
        env=env,
        cwd=BASE,
        stdout=subprocess.DEVNULL,
        stderr=errors,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        answered(
            process,
            lambda: _get(f"{base}/healthz"),
            seconds=30,
            said=(tmp_short / "gunicorn.log").read_text,
        )
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
        errors.close()


def _fire(base: str, until: float, paths: list[str], offset: int) -> list[tuple]:
    """Requests one after another until `until`: (path, status, seconds, body start,
    client, start time)."""
    done = []
    k = offset
    while time.monotonic() < until:
        path = paths[k % len(paths)]
        k += 1
        started = time.monotonic()
        status, body = _get(base + path)
        done.append((path, status, time.monotonic() - started, body[:300], offset, started))
    return done


def _concurrently(base: str, seconds: float) -> list[tuple]:
    """CLIENTS clients firing requests for `seconds`: every answer, each client's in order."""
    until = time.monotonic() + seconds
    results: list[list[tuple]] = [[] for _ in range(CLIENTS)]

    def client(i: int) -> None:
        results[i] = _fire(base, until, PATHS, i)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 60)
    assert not any(t.is_alive() for t in threads), "a client never got its answer"
    return [r for rs in results for r in rs]


def test_a_hung_redis_under_concurrent_load_is_a_prompt_503_and_the_site_recovers(
    own_redis: EmbeddedRedis, served: str
):
    for i in range(3):
        services.article_post(
            NewPost(user_id=1 + i, poster_name=f"p{i}", title=f"Kept {i}", text="x")
        )
    # Warm both workers (imports, first connections) with the same load, Redis healthy.
    warm = _concurrently(served, 1.0)
    assert {status for _, status, *_ in warm} == {200}, warm[:3]

    own_redis.kill(signal.SIGSTOP)
    try:
        answered = _concurrently(served, HANG)
    finally:
        own_redis.kill(signal.SIGCONT)

    statuses = {status for _, status, *_ in answered}
    took = sorted(r[2] for r in answered)
    slowest = max(answered, key=lambda r: r[2])
    log.info(
        f"hung, {CLIENTS} clients for {HANG} s: {len(answered)} requests, "
        f"{sum(r[1] == 503 for r in answered)} x 503, {sum(r[1] == 200 for r in answered)} x 200; "
        f"median {statistics.median(took):.3f} s, p99 {took[int(len(took) * 0.99)]:.3f} s, "
        f"max {took[-1]:.3f} s ({slowest[0]}), "
        f"{sum(t > 0.9 for t in took)} waited on Redis (> 0.9 s)"
    )
    assert statuses <= {200, 503}, [r[:3] for r in answered if r[1] not in (200, 503)]
    assert 503 in statuses
    for path, status, _, body, *_ in answered:
        assert b"Traceback" not in body, path
        if status == 503 and path.startswith("/api/"):
            assert b'"store_unavailable"' in body, (path, body)
    assert took[-1] < BOUND + SLACK, f"{slowest[0]} took {slowest[2]:.2f} s"
    # Nothing queues behind a wait: most requests are answered at once.
    assert statistics.median(took) < 0.5, f"median {statistics.median(took):.2f} s"

    # Recovery by itself, within the breaker's cooldown (1 s) of Redis resuming.
    resumed = time.monotonic()
    while True:
        status, body = _get(f"{served}/api/articles/")
        if status == 200:
            break
        assert status == 503, body
        assert time.monotonic() - resumed < 10, "the site did not recover"
        time.sleep(0.05)
    log.info(f"hung: the API answered 200 again {time.monotonic() - resumed:.3f} s after SIGCONT")
    assert b'"count":3' in body.replace(b" ", b"")
    # The other worker's breaker lets its first request after the cooldown through to
    # probe; the requests it serves during that round trip still fail fast (on a loaded
    # machine, a tenth of a first second's answers). Past PROBE every answer is 200.
    time.sleep(max(0.0, resumed + 1.2 - time.monotonic()))
    began = time.monotonic()
    after = _concurrently(served, 2.0)
    assert {status for _, status, *_ in after} <= {200, 503}
    late = [r for r in after if r[5] >= began + PROBE]
    assert late and all(r[1] == 200 for r in late), [
        (r[0], r[1], round(r[2], 3), r[3][:120], r[4], round(r[5] - began, 3))
        for r in late
        if r[1] != 200
    ]
    last = {}
    for i in range(CLIENTS):
        last[i] = [r for r in after if r[4] == i][-1][1]
    assert set(last.values()) == {200}, last
