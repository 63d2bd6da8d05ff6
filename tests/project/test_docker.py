"""What of the Docker set-up can run without Docker: the environment the containers get
passes `check --deploy`, and the image's entrypoint (migrate, collectstatic, exec gunicorn)
serves the site with hashed static files cached for a year."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from articles.embedded import EmbeddedRedis

pytestmark = pytest.mark.slow
BASE = Path(__file__).resolve().parents[2]
KEY = "compose-test-key-9Zr8Tn3Hs6Yb1Jc5Fd0Ge7Ua2Xo9Pi4Qw8Er3Ty6x7Qp2Lk"


def _image_environment() -> dict[str, str]:
    """The ENV of the Dockerfile's final stage."""
    final = (BASE / "Dockerfile").read_text().rsplit("\nFROM ", 1)[1]
    block = re.search(r"^ENV (.*?)(?<!\\)$", final, re.M | re.S)
    assert block is not None
    env = dict(re.findall(r"(\w+)=(\S+)", block[1].replace("\\\n", " ")))
    env.pop("PATH")
    return env


def _compose_environment(service: str, **given: str) -> dict[str, str]:
    """A service's environment as compose would give it, with `given` as the shell's."""
    compose = yaml.safe_load((BASE / "compose.yaml").read_text())
    raw = compose["services"][service]["environment"]

    def substitute(match: re.Match[str]) -> str:
        name, op, word = match[1], match[2], match[3]
        if given.get(name):
            return given[name]
        assert op == ":-", f"compose needs {name}: {word}"
        return word

    pattern = re.compile(r"\$\{(\w+)(:[-?])([^}]*)\}")
    return {key: pattern.sub(substitute, str(value)) for key, value in raw.items()}


def _environ(**env: str) -> dict[str, str]:
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "REDIS_", "ARTICLES_")) and k != "DATABASE_URL"
    }
    return {**keep, **env}


def test_compose_runs_redis_7_with_aof_and_noeviction_and_a_sentinel_profile():
    services = yaml.safe_load((BASE / "compose.yaml").read_text())["services"]
    redis = services["redis"]
    assert redis["image"] == "redis:7"
    command = " ".join(redis["command"])
    assert "--appendonly yes" in command and "--maxmemory-policy noeviction" in command
    sentinel = {name for name, s in services.items() if "sentinel" in s.get("profiles", [])}
    assert {"redis-primary", "redis-replica", "sentinel-1", "sentinel-2", "sentinel-3"} <= sentinel
    assert services["votesite"]["environment"]["WEB_CONCURRENCY"] == "2"


def test_the_containers_settings_pass_check_deploy(redis_server: EmbeddedRedis, tmp_path):
    """Ensure the image's and compose's environment is a production one (Redis pointed at
    the suite's, as the compose host name does not resolve here)."""
    env = {
        **_image_environment(),
        **_compose_environment("votesite", DJANGO_SECRET_KEY=KEY, EMAIL_HOST="smtp.example.org"),
        "REDIS_URL": f"{redis_server.url}?db=0",
        "VOTESITE_VAR_DIR": str(tmp_path),
    }
    assert env["DJANGO_DEBUG"] == "false" and env["DJANGO_STATIC_MANIFEST"] == "true"
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE,
        env=_environ(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_compose_refuses_to_start_without_a_secret_key():
    with pytest.raises(AssertionError, match="DJANGO_SECRET_KEY"):
        _compose_environment("votesite")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, dict[str, str], str]:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own server
        return response.status, dict(response.headers), response.read().decode()


def test_the_entrypoint_migrates_collects_and_runs_gunicorn_with_cached_hashed_static_files(
    redis_server: EmbeddedRedis, tmp_path
):
    port = _free_port()
    env = {
        **_image_environment(),
        "DJANGO_SECRET_KEY": KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": f"{redis_server.url}?db=0",
        "VOTESITE_VAR_DIR": str(tmp_path),
        "WEB_CONCURRENCY": "1",
        "EMAIL_DISABLED": "true",  # else migrate refuses (votesite.E001): no SMTP server here
        # The image's PATH puts its venv first; here, ours.
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    # The image's own CMD (gunicorn with gunicorn.conf.py), on a port of the test's.
    cmd = re.search(r"^CMD (\[.*\])$", (BASE / "Dockerfile").read_text(), re.M)
    assert cmd, "the Dockerfile has a CMD in JSON form"
    command = [f"127.0.0.1:{port}" if a == "0.0.0.0:8000" else a for a in json.loads(cmd[1])]
    assert "gunicorn.conf.py" in command
    server = subprocess.Popen(
        [BASE / "docker" / "entrypoint.sh", *command],
        cwd=BASE,
        env=_environ(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, server.communicate()[0]
            try:
                status, _, page = _get(f"http://127.0.0.1:{port}/")
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not answer"
                time.sleep(0.3)
        assert status == 200
        status, _, metrics = _get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200 and "articles_posts_total" in metrics
        assert list((tmp_path / "prometheus").glob("counter_*.db"))  # multiprocess mode
        tables = sqlite3.connect(tmp_path / "db.sqlite3").execute(
            "SELECT name FROM sqlite_master WHERE name = 'auth_user'"
        )
        assert tables.fetchall() == [("auth_user",)]
        hashed = re.search(r"/static/articles/css/site\.[0-9a-f]{12}\.css", page)
        assert hashed, "the page links its stylesheet by a hashed name"
        assert (tmp_path / "staticfiles" / hashed[0].removeprefix("/static/")).exists()
        status, headers, _ = _get(f"http://127.0.0.1:{port}{hashed[0]}")
        assert status == 200
        assert "max-age=315360000" in headers["Cache-Control"]
        assert "immutable" in headers["Cache-Control"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
