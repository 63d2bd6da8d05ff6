"""Redis Cluster is not supported: the check says so, and the site refuses to start."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.checks import Error
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from articles.operations.checks import (
    check_redis_cluster,
    redis_status_messages,
    refuse_unsupported_redis,
)
from articles.operations.embedded import EmbeddedRedis
from tests.harness import free_port, store_on

# Each test ends with the invariant audit finding nothing on the session's store.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("audited")]
BASE = Path(__file__).resolve().parents[2]


def test_a_cluster_enabled_status_is_an_error_and_a_plain_one_is_not():
    healthy = {"cluster_enabled": False, "aof_enabled": True, "maxmemory_policy": "noeviction"}
    assert redis_status_messages(healthy) == []
    [message] = redis_status_messages({**healthy, "cluster_enabled": True})
    assert isinstance(message, Error) and message.id == "articles.E001"
    assert "CROSSSLOT" in message.msg


def test_the_test_redis_is_accepted():
    refuse_unsupported_redis()
    assert check_redis_cluster() == []


def _cluster_port() -> int:
    """A free port whose cluster bus port (+10,000) is free and valid (Redis: <= 55535)."""
    for _ in range(200):
        port = free_port()
        if port > 55_535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10_000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


@pytest.fixture
def cluster_node(tmp_short: Path) -> Iterator[EmbeddedRedis]:
    node = EmbeddedRedis(
        tmp_short,
        port=_cluster_port(),
        daemonize=False,
        extra_config="cluster-enabled yes\ncluster-config-file nodes.conf\n",
    )
    node.start()
    yield node
    node.stop()


def test_a_real_cluster_node_is_refused_by_the_checks_and_at_wsgi_start(
    cluster_node: EmbeddedRedis, tmp_path: Path
):
    assert cluster_node.client().info()["cluster_enabled"] == 1
    with store_on(f"redis://127.0.0.1:{cluster_node.port}/0"):
        with pytest.raises(ImproperlyConfigured, match="Redis Cluster, which is not supported"):
            refuse_unsupported_redis()
        with pytest.raises(SystemCheckError, match=r"articles\.E001"):
            call_command("check")

    env = dict(
        os.environ,
        REDIS_URL=f"redis://127.0.0.1:{cluster_node.port}/0",
        VOTESITE_VAR_DIR=str(tmp_path),
        DJANGO_SETTINGS_MODULE="votesite.settings",
    )
    wsgi = subprocess.run(
        [sys.executable, "-c", "import votesite.wsgi"],
        cwd=BASE,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wsgi.returncode != 0
    assert "refuses to start" in wsgi.stderr and "Redis Cluster" in wsgi.stderr
    runserver = subprocess.run(
        [sys.executable, "manage.py", "runserver", "--noreload", "127.0.0.1:8104"],
        cwd=BASE,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert runserver.returncode != 0
    assert "articles.E001" in runserver.stderr and "Redis Cluster is not supported" in (
        runserver.stderr
    )
