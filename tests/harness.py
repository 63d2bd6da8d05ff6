"""Test harnesses: work started together on several threads or processes, and a Redis
that is down, hung or refusing writes. Real servers and real processes, never mocks."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import redis
from django.conf import settings
from django.test import override_settings

import articles.store.selectors
import articles.store.services  # noqa: F401  (loads every submodule)
from articles.operations.embedded import EmbeddedRedis
from votesite.settings import pool_kwargs

T = TypeVar("T")

# fork: the children inherit the test settings (the store points at the test server);
# redis-py notices the new pid and opens fresh connections.
FORK = multiprocessing.get_context("fork")


# --- together: N workers released at once ---------------------------------------------


def threads_together(work: Callable[[int], T], n: int, *, timeout: float = 60) -> list[T]:
    """Run work(0) .. work(n-1) on n threads released at once by a barrier, and return
    their results in that order. Re-raises the first exception any of them raised."""
    start = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            start.wait(timeout=timeout)
            results[i] = work(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread never finished"
    if errors:
        raise errors[0]
    return results


def _released(barrier: Any, work: Callable[..., object], seed: int, *args: object) -> None:
    barrier.wait(timeout=60)
    work(seed, *args)


@contextlib.contextmanager
def processes_together(
    work: Callable[..., object], n: int, *args: object, timeout: float = 120
) -> Iterator[None]:
    """Fork n processes running work(seed, *args), seed 0 .. n-1, released at once as the
    body starts (true parallelism: no GIL between them). On leaving, waits for them and
    asserts each exited 0 (an exception in a worker is a non-zero exit)."""
    barrier = FORK.Barrier(n + 1)
    workers = [
        FORK.Process(target=_released, args=(barrier, work, seed, *args)) for seed in range(n)
    ]
    for worker in workers:
        worker.start()
    try:
        barrier.wait(timeout=60)
        yield
    finally:
        for worker in workers:
            worker.join(timeout=timeout)
    assert [w.exitcode for w in workers] == [0] * n


def run_together(work: Callable[..., object], n: int, *args: object) -> None:
    """processes_together with nothing to do while they run."""
    with processes_together(work, n, *args):
        pass


# --- the store's state ------------------------------------------------------------------


def snapshot(conn: redis.Redis) -> dict[bytes, Any]:
    """Every key's serialized value (DUMP), so "changed nothing" means exactly that."""
    return {key: conn.dump(key) for key in conn.scan_iter(count=1000)}


# --- outages: a Redis down, hung or refusing writes -------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def articles_cache(location: str, **options: object) -> dict[str, object]:
    """A django-redis cache entry for `location`, as the project configures its own."""
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
def store_on(location: str, *aliases: str, **options: object) -> Iterator[None]:
    """Point the store (the `articles` cache alias, and any other `aliases`) at another
    Redis for a while."""
    caches = dict(settings.CACHES)
    for alias in aliases or ("articles",):
        caches[alias] = articles_cache(location, **options)
    with override_settings(CACHES=caches):
        yield


def primary_and_replica(
    directory: Path, replica_config: str = ""
) -> tuple[EmbeddedRedis, EmbeddedRedis]:
    """A primary and one replica of it on free loopback ports, both started (the
    replica's own `replica_config` lines added)."""
    primary = EmbeddedRedis(directory / "p", port=free_port(), daemonize=False)
    primary.start()
    replica = EmbeddedRedis(
        directory / "r",
        port=free_port(),
        daemonize=False,
        extra_config=f"replicaof 127.0.0.1 {primary.port}\n{replica_config}",
    )
    replica.start()
    return primary, replica


@contextlib.contextmanager
def redis_down(*aliases: str, at: str = "") -> Iterator[None]:
    """The store (and any other cache `aliases`) on an address nothing listens on: `at`,
    or a free port of 127.0.0.1."""
    with store_on(at or f"redis://127.0.0.1:{free_port()}/0", *aliases):
        yield


@contextlib.contextmanager
def redis_hung(server: EmbeddedRedis) -> Iterator[None]:
    """`server` stopped with SIGSTOP (it holds every connection and answers nothing),
    resumed on leaving."""
    server.kill(signal.SIGSTOP)
    try:
        yield
    finally:
        server.kill(signal.SIGCONT)


@contextlib.contextmanager
def redis_refusing_writes(server: EmbeddedRedis, option: str = "maxmemory") -> Iterator[None]:
    """`server` refusing every write: out of memory (`maxmemory` 1 byte, noeviction: OOM)
    or short of replicas (`min-replicas-to-write` 1, none attached: NOREPLICAS)."""
    server.client().config_set(option, 1)
    try:
        yield
    finally:
        server.client().config_set(option, 0)


def store_modules(*also: ModuleType) -> list[ModuleType]:
    """Every loaded module of the services and selectors packages that calls get_connection
    (and store.replicas, the selectors' read client), and `also`: what a test redirects to
    count or slow the store's round trips."""
    found = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith(
            ("articles.store.services", "articles.store.selectors", "articles.store.replicas")
        )
        and hasattr(module, "get_connection")
    ]
    return [*found, *also]


# --- the project served the production way (gunicorn) --------------------------------

ROOT = Path(__file__).resolve().parents[1]
GUNICORN = Path(sys.executable).with_name("gunicorn")
TEST_SECRET = "test-only-secret-key-that-is-long-enough-0123456789abcdefghij"


def production_env(**settings: str) -> dict[str, str]:
    """The environment of the project with DEBUG off, a secret of the tests' and
    127.0.0.1 allowed, and `settings` on top (REDIS_URL, DATABASE_URL, VOTESITE_VAR_DIR, ...)."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "votesite.settings",
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": TEST_SECRET,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        **settings,
    }


def settings_free_environ(**env: str) -> dict[str, str]:
    """This process's environment without the project's settings (DJANGO_*, REDIS_*,
    ARTICLES_*, DATABASE_URL), and `env` on top: a child process configured by `env` alone."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "REDIS_", "ARTICLES_")) and k != "DATABASE_URL"
    }
    return {**keep, **env}


def gunicorn_command(port: int, *options: str) -> list[str]:
    """gunicorn serving the project's WSGI application on 127.0.0.1:`port`."""
    return [str(GUNICORN), "votesite.wsgi:application", "--bind", f"127.0.0.1:{port}", *options]


def answered(
    process: subprocess.Popen[Any],
    probe: Callable[[], T],
    *,
    seconds: float,
    said: Callable[[], str],
) -> T:
    """What `probe` returns once the server answers it (an OSError until then); fails with
    what the server `said` if it exits or does not answer within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return probe()
        except OSError as exc:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"gunicorn did not answer: {said()}") from exc
            time.sleep(0.1)
