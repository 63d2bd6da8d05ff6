"""Redis Sentinel: a primary, two replicas and three sentinels, all the embedded binary on
127.0.0.1. Voting resumes through the new primary after the primary is killed, and every
vote acknowledged before the kill is still there."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.test import override_settings

from articles.errors import StoreUnavailable
from articles.operations import audit
from articles.operations.embedded import EmbeddedRedis
from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.types import NewPost, Vote
from tests import factories
from tests.actors import staff_actor
from tests.harness import free_port, primary_and_replica, redis_hung, store_on
from votesite.settings import sentinel_cache

log = logging.getLogger("reliability")
pytestmark = pytest.mark.slow

NOW = 2_000_000_000


class Sentinel:
    def __init__(self, directory: Path, master: str, primary_port: int) -> None:
        directory.mkdir(parents=True)
        self.port = free_port()
        self.config = directory / "sentinel.conf"
        self.config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndaemonize no\n"
            f'dir "{directory}"\nlogfile "{directory / "sentinel.log"}"\n'
            f"sentinel monitor {master} 127.0.0.1 {primary_port} 2\n"
            f"sentinel down-after-milliseconds {master} 500\n"
            f"sentinel failover-timeout {master} 3000\n"
            f"sentinel parallel-syncs {master} 2\n"
        )
        self.process = subprocess.Popen(
            [str(EmbeddedRedis.default_binary), str(self.config), "--sentinel"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.client = redis.Redis(port=self.port, socket_timeout=1, decode_responses=True)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def _wait_for(predicate, timeout: float, what: str) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        with contextlib.suppress(redis.RedisError):
            if predicate():
                return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {timeout} s")


def _replicas_online(primary: EmbeddedRedis, count: int) -> bool:
    """The primary has `count` replicas past their first sync: only those answer WAIT. (On
    7.0 a new replica waits out `repl-diskless-sync-delay`, 5 s by default, before its first
    sync; on 6.2, disk-based, it is listed as connected while that sync still runs.)"""
    info = primary.client().info("replication")
    states = [info.get(f"slave{i}", {}).get("state") for i in range(info["connected_slaves"])]
    return states.count("online") >= count


@pytest.fixture
def sentinel_setup(tmp_short: Path) -> Iterator[tuple[str, list, list[Sentinel]]]:
    master = f"vs{os.getpid()}{free_port()}"  # django-redis keeps pools by URL: be unique
    primary_port = free_port()
    # min-replicas-to-write: a primary cut off from every replica refuses writes instead
    # of acknowledging votes that the failover would throw away.
    guard = "min-replicas-to-write 1\nmin-replicas-max-lag 5\n"
    nodes = [EmbeddedRedis(tmp_short / "p", port=primary_port, daemonize=False, extra_config=guard)]
    for name in ("r1", "r2"):
        nodes.append(
            EmbeddedRedis(
                tmp_short / name,
                port=free_port(),
                daemonize=False,
                extra_config=f"replicaof 127.0.0.1 {primary_port}\n{guard}",
            )
        )
    sentinels: list[Sentinel] = []
    try:
        for node in nodes:
            node.start()
        _wait_for(lambda: _replicas_online(nodes[0], 2), 20, "replicas' first sync")
        sentinels = [Sentinel(tmp_short / f"s{i}", master, primary_port) for i in range(3)]
        # Failover needs each sentinel to know the replicas and the two other sentinels.
        _wait_for(
            lambda: all(
                len(s.client.sentinel_sentinels(master)) == 2
                and len(s.client.sentinel_slaves(master)) == 2
                for s in sentinels
            ),
            20,
            "sentinel discovery",
        )
        yield master, nodes, sentinels
    finally:
        for sentinel in sentinels:
            sentinel.stop()
        for node in nodes:
            if node.process is not None:
                node.process.kill()
                node.process.wait()


@pytest.mark.django_db  # /healthz probes the database too
@pytest.mark.urls("tests.reliability.urls")
def test_voting_resumes_through_the_new_primary_within_10_s_and_keeps_every_acknowledged_vote(
    sentinel_setup, client
):
    master, nodes, sentinels = sentinel_setup
    caches = dict(settings.CACHES)
    caches["articles"] = sentinel_cache(master, [("127.0.0.1", s.port) for s in sentinels], 0)
    # Before the kill, a generous WAIT so a loaded machine cannot fail an acknowledgement;
    # after it, a short one so each refused attempt costs little of the 10 s.
    with override_settings(
        CACHES=caches, ARTICLES_WAIT_REPLICAS=1, ARTICLES_WAIT_TIMEOUT_MS=10_000
    ):
        ids = [
            services.article_post(
                NewPost(user_id=1, poster_name="p", title=f"a{i}", text="t", now=NOW)
            ).id
            for i in range(5)
        ]
        acked: list[tuple[int, int, Vote]] = []
        for user in range(2, 302):
            direction = Vote.DOWN if user % 5 == 0 else Vote.UP
            services.article_vote(
                article_id=ids[user % 5], user_id=user, direction=direction, now=NOW + 1
            )
            acked.append((ids[user % 5], user, direction))

        nodes[0].kill(signal.SIGKILL)
        killed = time.monotonic()
        attempts = refused = 0
        with override_settings(ARTICLES_WAIT_TIMEOUT_MS=1000):
            while True:
                attempts += 1
                try:
                    services.article_vote(
                        article_id=ids[0], user_id=9_999, direction=Vote.UP, now=NOW + 2
                    )
                    break
                except (redis.RedisError, StoreUnavailable):
                    refused += 1
                    assert time.monotonic() - killed < 10, "voting did not resume within 10 s"
                    time.sleep(0.05)
        resumed = time.monotonic() - killed
        # The site, unrestarted, serves from the new primary too.
        health = client.get("/healthz")
        assert health.status_code == 200
        assert client.get("/listing").json()["count"] == 5
        new_primary = sentinels[0].client.sentinel_get_master_addr_by_name(master)
        assert int(new_primary[1]) != nodes[0].port

        conn = get_connection()
        pipe = conn.pipeline(transaction=False)
        for article_id, user, direction in acked:
            key = keys.voted(article_id) if direction is Vote.UP else keys.voted_down(article_id)
            pipe.sismember(key, keys.user(user))
        assert all(pipe.execute()), "a vote acknowledged before the failover was lost"
        for article_id in ids:
            got = selectors.article_get(article_id=article_id)
            ups = sum(1 for a, _, d in acked if a == article_id and d is Vote.UP)
            downs = sum(1 for a, _, d in acked if a == article_id and d is Vote.DOWN)
            assert (got.votes, got.downvotes) == (1 + ups + (article_id == ids[0]), downs)
        assert audit.invariant_audit(now=NOW + 3) == []
    log.info(
        f"sentinel: voting resumed {resumed:.2f} s after kill -9 of the primary "
        f"({attempts} attempts, {refused} refused with 503/errors); "
        f"{len(acked)} acknowledged votes all present on the new primary"
    )


def test_a_write_no_replica_confirms_is_not_acknowledged(tmp_short: Path):
    primary, replica = primary_and_replica(tmp_short)
    try:
        with (
            store_on(f"redis://127.0.0.1:{primary.port}/0"),
            # A live replica confirms within the generous timeout even on a loaded machine;
            # only the stopped one is waited for briefly.
            override_settings(ARTICLES_WAIT_REPLICAS=1, ARTICLES_WAIT_TIMEOUT_MS=10_000),
        ):
            _wait_for(lambda: _replicas_online(primary, 1), 20, "the replica's first sync")
            article = services.article_post(
                NewPost(user_id=1, poster_name="p", title="a", text="t")
            )
            with (
                redis_hung(replica),
                override_settings(ARTICLES_WAIT_TIMEOUT_MS=300),
                pytest.raises(StoreUnavailable, match="0 of 1 replica"),
            ):
                services.article_vote(article_id=article.id, user_id=2, direction=Vote.UP)
            # Retrying is safe: the vote is counted once.
            again = services.article_vote(article_id=article.id, user_id=2, direction=Vote.UP)
            assert again.votes == 2
            assert audit.invariant_audit() == []
    finally:
        # SIGKILL: a replica may not answer the PING that stop() sends before SHUTDOWN.
        replica.kill(signal.SIGKILL)
        primary.kill(signal.SIGKILL)


def test_sentinel_settings_come_from_the_environment(tmp_path: Path):
    env = dict(
        os.environ,
        VOTESITE_VAR_DIR=str(tmp_path),
        REDIS_SENTINELS="10.0.0.1:26379, sentinel-b:26380",
        REDIS_SENTINEL_MASTER="votes",
        DJANGO_SETTINGS_MODULE="votesite.settings",
    )
    code = (
        "import json; from django.conf import settings as s; c = s.CACHES['articles'];"
        "print(json.dumps([c['LOCATION'], c['OPTIONS']['CLIENT_CLASS'],"
        " c['OPTIONS']['CONNECTION_FACTORY'], c['OPTIONS']['SENTINELS'],"
        " s.CACHES['default']['LOCATION']]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == [
        "redis://votes/0",
        "django_redis.client.SentinelClient",
        "django_redis.pool.SentinelConnectionFactory",
        [["10.0.0.1", 26379], ["sentinel-b", 26380]],
        "redis://votes/1",
    ]
    bad = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(env, REDIS_SENTINELS="nohostport"),
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0 and "REDIS_SENTINELS entries are host:port" in bad.stderr


def test_a_primary_without_its_replicas_refuses_writes_with_a_503_not_a_500(tmp_short: Path):
    guard = "min-replicas-to-write 1\nmin-replicas-max-lag 5\n"
    primary = EmbeddedRedis(tmp_short, daemonize=False, extra_config=guard)
    primary.start()
    try:
        with store_on(f"{primary.url}?db=0"):
            with pytest.raises(StoreUnavailable, match="replicas"):
                services.article_post(NewPost(user_id=1, poster_name="p", title="a", text="t"))
            with pytest.raises(StoreUnavailable, match="replicas"):
                services.group_create(name="books", actor=staff_actor())
            assert get_connection().dbsize() <= 1  # at most the id counter (INCR ran first)
            primary.client().config_set("min-replicas-to-write", 0)
            article = services.article_post(
                NewPost(user_id=1, poster_name="p", title="a", text="t")
            )
            primary.client().config_set("min-replicas-to-write", 1)
            with pytest.raises(StoreUnavailable):
                services.article_vote(article_id=article.id, user_id=2, direction=Vote.UP)
            assert selectors.article_get(article_id=article.id).votes == 1
            assert audit.invariant_audit() == []
    finally:
        primary.kill(signal.SIGKILL)


def test_a_write_sent_to_a_replica_is_a_503_not_a_500(tmp_short: Path):
    primary, replica = primary_and_replica(tmp_short)
    try:
        with store_on(f"{primary.url}?db=0"):
            article = services.article_post(
                NewPost(user_id=1, poster_name="p", title="a", text="t")
            )
        _wait_for(lambda: replica.client().exists(keys.article(article.id)), 10, "replication")
        with store_on(f"{replica.url}?db=0"):
            with pytest.raises(StoreUnavailable, match="read-only"):
                services.group_create(name="books", actor=staff_actor())
            with pytest.raises(StoreUnavailable, match="read-only"):
                services.article_vote(article_id=article.id, user_id=2, direction=Vote.UP)
            assert selectors.article_get(article_id=article.id).votes == 1
    finally:
        replica.kill(signal.SIGKILL)
        primary.kill(signal.SIGKILL)


@pytest.mark.django_db
def test_waiting_on_a_demoted_primary_is_a_503_with_retry_after_not_a_500(tmp_short: Path):
    """Ensure WAIT refused by a replica (a primary demoted between a write and its WAIT,
    here a writable replica) is an outage, on the service and through the API."""
    from rest_framework.test import APIClient

    primary, replica = primary_and_replica(tmp_short)
    try:
        replica.client().config_set("replica-read-only", "no")
        with (
            store_on(f"{replica.url}?db=0"),
            override_settings(ARTICLES_WAIT_REPLICAS=1, ARTICLES_WAIT_TIMEOUT_MS=300),
        ):
            with pytest.raises(StoreUnavailable):
                services.group_create(name="books", actor=staff_actor())
            user = factories.user("ann", password="x")
            api = APIClient()
            api.force_authenticate(user)
            data = {"title": "T", "text": "body"}
            response = api.post("/api/articles/", data, format="json")
            assert response.status_code == 503, response.content
            assert response.json()["code"] == "store_unavailable"
            assert int(response["Retry-After"]) > 0
    finally:
        replica.kill(signal.SIGKILL)
        primary.kill(signal.SIGKILL)


@pytest.mark.parametrize(
    "reply",
    [
        "READONLY You can't write against a read only replica.",
        "Command # 2 (WAIT 1 300) of pipeline caused error: WAIT cannot be used with "
        "replica instances.",
        "NOREPLICAS Not enough good replicas to write.",
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        "UNBLOCKED force unblock from blocking operation, instance state changed "
        "(master -> replica?)",
        "LOADING Redis is loading the dataset in memory",
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    ],
)
def test_every_reply_of_a_changing_primary_counts_as_unavailable(reply: str):
    from articles.store.connection import store_unavailable

    assert store_unavailable(redis.ResponseError(reply))
    assert not store_unavailable(redis.ResponseError("ERR wrong number of arguments"))
