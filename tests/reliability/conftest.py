"""Fixtures for the reliability tier: Redis servers of a test's own, which it may kill."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from articles.operations import audit
from articles.operations.embedded import EmbeddedRedis
from votesite.settings import pool_kwargs


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def articles_cache(location: str, **options: object) -> dict[str, object]:
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": location,
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "CONNECTION_POOL_KWARGS": pool_kwargs(location),
            **options,
        },
    }


@contextlib.contextmanager
def store_on(location: str, **options: object) -> Iterator[None]:
    """Point the store (the `articles` cache alias) at another Redis for a while."""
    caches = dict(settings.CACHES)
    caches["articles"] = articles_cache(location, **options)
    with override_settings(CACHES=caches):
        yield


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
                server.process.send_signal(18)  # SIGCONT, in case a test left it stopped
            server.stop()


@pytest.fixture(autouse=True)
def _audit_after_each_test() -> Iterator[None]:
    """Every reliability test ends with the invariant audit of SPEC §1 finding nothing on
    the session's store (tests on a server of their own audit it themselves)."""
    yield
    assert audit.invariant_audit() == []
