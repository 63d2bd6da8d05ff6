"""A token revoked by one process is refused at its very next vote by a server that keeps
it (gunicorn, production settings): nothing but the credential epoch in Redis, read in
the vote's own script, tells the server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from articles.operations.embedded import EmbeddedRedis
from articles.store import services
from articles.types import NewPost
from tests.harness import ROOT, answered, free_port, gunicorn_command, production_env

pytestmark = pytest.mark.slow

# Each user's token is revoked another way, by another process than the server's.
REVOKE = {
    "tok": "tokens.user_tokens_revoke(user=user)",
    "pwd": "user.set_password('a-new-Secret-456'); user.save()",
    "off": "user.is_active = False; user.save()",
}


def _manage(env: dict[str, str], code: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _vote(base: str, token: str, article_id: int, value: str) -> int:
    request = urllib.request.Request(  # noqa: S310 http://127.0.0.1 only
        f"{base}/api/articles/{article_id}/vote/",
        data=json.dumps({"value": value}).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method="PUT",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture
def site(redis_server: EmbeddedRedis, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """The project under one gunicorn worker, its database a file both it and
    `manage.py shell` processes use; and that environment."""
    env = production_env(
        REDIS_URL=f"{redis_server.url}?db=0",
        VOTESITE_VAR_DIR=str(tmp_path),
        EMAIL_DISABLED="true",
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        env=env,
        cwd=ROOT,
        check=True,
        timeout=300,
    )
    port = free_port()
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
            lambda: urllib.request.urlopen(f"{base}/healthz", timeout=5),  # noqa: S310
            seconds=60,
            said=lambda: process.stderr.read().decode() if process.stderr else "",
        )
        yield base, env
    finally:
        process.terminate()
        process.wait(10)


def test_a_token_revoked_by_another_process_is_refused_at_its_next_vote(site):
    base, env = site
    made = _manage(
        env,
        "import json\n"
        "from django.contrib.auth import get_user_model\n"
        "from articles.store import tokens\n"
        "made = {}\n"
        "for name in " + repr(sorted(REVOKE)) + ":\n"
        "    user = get_user_model().objects.create_user(name, password='pw-Secret-123')\n"
        "    made[name] = tokens.token_create(user=user)\n"
        "print(json.dumps(made))",
    )
    keys = json.loads(made.splitlines()[-1])
    article = services.article_post(
        NewPost(user_id=999, poster_name="p", title="T", link="https://e.org/", now=time.time())
    )
    for name in REVOKE:
        assert _vote(base, keys[name], article.id, "up") == 200  # the server keeps the token
        assert _vote(base, keys[name], article.id, "down") == 200
    _manage(
        env,
        "from django.contrib.auth import get_user_model\n"
        "from articles.store import tokens\n"
        "for name, revoke in " + repr(REVOKE) + ".items():\n"
        "    user = get_user_model().objects.get(username=name)\n"
        "    exec(revoke)",
    )
    for name in REVOKE:
        assert _vote(base, keys[name], article.id, "up") == 401, name
