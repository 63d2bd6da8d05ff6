"""The live endpoint's serving (gunicorn.live.conf.py): gunicorn with uvicorn workers
(votesite.workers.LiveWorker) on the whole site over ASGI, each worker with room for
thousands of open streams, and a shutdown that closes the streams at once (a deploy or a
restart does not wait on them: the browsers reconnect with their last event id)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from articles.operations.embedded import EmbeddedRedis

pytestmark = pytest.mark.slow
BASE = Path(__file__).resolve().parents[2]
KEY = "live-serving-test-key-4Hs8Tn2Yb6Jc1Fd9Ge3Ua7Xo5Pi0Qw2Er8Ty4x"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _environ(**env: str) -> dict[str, str]:
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "REDIS_", "ARTICLES_")) and k != "DATABASE_URL"
    }
    return {**keep, **env}


@contextmanager
def _serving(command: list[str], env: dict[str, str], port: int) -> Iterator[tuple[Any, Path]]:
    """`command` (a server listening on `port`) until the block ends; yields its process
    and the file its output goes to."""
    log = Path(env["VOTESITE_VAR_DIR"]) / f"server-{port}.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            command, cwd=BASE, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.2)
        yield server, log
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)


@contextmanager
def _gunicorn(app: str, env: dict[str, str], *options: str) -> Iterator[tuple[int, Path]]:
    """gunicorn -c gunicorn.live.conf.py `app` on a free port, until the block ends; yields
    the port and the file its output goes to."""
    port = _free_port()
    command = [
        sys.executable, "-m", "gunicorn", "--config", "gunicorn.live.conf.py", app,
        "--bind", f"127.0.0.1:{port}", "--log-level", "info", *options,
    ]  # fmt: skip
    with _serving(command, env, port) as (_, log):
        yield port, log


def _workers(log: Path) -> list[int]:
    return [int(pid) for pid in re.findall(r"Booting worker with pid: (\d+)", log.read_text())]


def _wait_for_worker(log: Path) -> int:
    deadline = time.monotonic() + 30
    while not _workers(log):
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return _workers(log)[0]


def test_the_live_configuration_serves_the_site_over_asgi_with_room_for_streams(
    redis_server: EmbeddedRedis, tmp_path
):
    env = _environ(
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=KEY,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        REDIS_URL=f"{redis_server.url}?db=0",
        VOTESITE_VAR_DIR=str(tmp_path),
        EMAIL_DISABLED="true",
        HOME=str(tmp_path),  # gunicorn's control socket under it
    )
    with _gunicorn("votesite.asgi:application", env) as (port, log):
        url = f"http://127.0.0.1:{port}/healthz/live"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
            assert response.headers["Server"] == "uvicorn"
        worker = _wait_for_worker(log)
        limits = Path(f"/proc/{worker}/limits").read_text()
        line = next(line for line in limits.splitlines() if line.startswith("Max open files"))
        soft, hard = line.split()[3:5]
        assert soft == hard, line  # the soft limit raised to the hard one
        text = log.read_text()
        assert "Using worker: votesite.workers.LiveWorker" in text
        assert (tmp_path / ".gunicorn" / "gunicorn-live.ctl").exists()


def _open_stream(port: int, path: str = "/live/") -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
    client.sendall(request.encode())
    head = b""
    while b"retry: 3000" not in head:
        chunk = client.recv(4096)
        assert chunk, head
        head += chunk
    assert b"text/event-stream" in head
    return client


def _closed_after(client: socket.socket, limit: float) -> float:
    """Seconds until the server closes `client`'s connection (at most `limit`)."""
    client.settimeout(limit)
    started = time.monotonic()
    try:
        while client.recv(4096):
            pass
    except TimeoutError:
        pass
    return time.monotonic() - started


def test_a_shutdown_closes_the_open_streams_at_once(tmp_path):
    """Ensure SIGTERM (a deploy, a restart) ends the open streams within a second, not after
    gunicorn's graceful_timeout (10 s): uvicorn alone waits for every response to end, and a
    stream never ends. Each stream ends as if its client had left: nothing logged as an
    error."""
    env = _environ(PYTHONPATH=str(BASE), VOTESITE_VAR_DIR=str(tmp_path), HOME=str(tmp_path))
    with _gunicorn("tests.project.streams:application", env) as (port, log):
        clients = [_open_stream(port) for _ in range(3)]
        found = re.search(r"Listening at: \S+ \((\d+)\)", log.read_text())
        assert found, log.read_text()
        master = int(found[1])
        os.kill(master, signal.SIGTERM)
        took = [_closed_after(client, 8) for client in clients]
        for client in clients:
            client.close()
        assert max(took) < 1.5, took
        text = log.read_text()
        assert "Exception in ASGI application" not in text and "Cancel" not in text, text


def test_make_runs_server_serves_the_live_endpoint_and_closes_its_streams_at_once(
    redis_server: EmbeddedRedis, tmp_path
):
    """Ensure `make run`'s server (votesite.devserver, uvicorn) serves the live endpoint, and
    that stopping it (as its reloader does at each change of code) ends the open streams at
    once and quietly, where uvicorn alone would wait on them."""
    port = _free_port()
    env = _environ(
        DJANGO_DEBUG="true",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        REDIS_URL=f"{redis_server.url}?db=0",
        VOTESITE_VAR_DIR=str(tmp_path),
    )
    command = [sys.executable, "-m", "votesite.devserver", "--no-reload", "--port", str(port)]
    with _serving(command, env, port) as (server, log):
        client = _open_stream(port, "/live/?article=1")
        server.send_signal(signal.SIGTERM)  # what the reloader sends its server at a change
        assert _closed_after(client, 8) < 1.5
        client.close()
        server.wait(timeout=10)
        text = log.read_text()
        assert "Exception in ASGI application" not in text and "Cancel" not in text, text
