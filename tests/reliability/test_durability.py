"""Durability and restart against a Redis of the test's own: kill -9, stop, hang, script
flush, torn append-only file. Every test ends with the invariant audit finding nothing."""

from __future__ import annotations

import logging
import signal
import threading
import time
from pathlib import Path

import pytest
import redis

from articles.operations import audit
from articles.operations.embedded import EmbeddedRedis
from articles.store import breaker, keys, selectors, services
from articles.store.connection import get_connection
from articles.types import NewPost, Order, Vote
from articles.web.rendering import render_to_string  # the engine of the pages
from tests.harness import redis_hung, store_on

log = logging.getLogger("reliability")
pytestmark = [pytest.mark.slow, pytest.mark.urls("tests.reliability.urls")]

NOW = 1_800_000_000


def _post(n: int) -> list[int]:
    return [
        services.article_post(
            NewPost(user_id=1000 + i, poster_name=f"p{i}", title=f"Article {i}", text="x", now=NOW)
        ).id
        for i in range(n)
    ]


def _vote_until_error(ids: list[int], acked: list[tuple[int, int, Vote]], stop: threading.Event):
    """Vote as fast as one client can, recording every vote Redis acknowledged."""
    n = 0
    while not stop.is_set():
        article_id = ids[n % len(ids)]
        user = 1 + n
        direction = Vote.UP if n % 3 else Vote.DOWN
        try:
            services.article_vote(
                article_id=article_id, user_id=user, direction=direction, now=NOW + 60
            )
        except redis.RedisError:
            return
        acked.append((article_id, user, direction))
        n += 1


def test_acknowledged_votes_survive_kill_9_and_the_store_reconnects_by_itself(
    own_redis: EmbeddedRedis, record_property
):
    ids = _post(10)
    acked: list[tuple[int, int, Vote]] = []
    stop = threading.Event()
    voter = threading.Thread(target=_vote_until_error, args=(ids, acked, stop))
    voter.start()
    time.sleep(0.5)
    own_redis.kill(signal.SIGKILL)  # mid-stream: the voter is between two votes or in one
    voter.join(timeout=10)
    stop.set()
    assert not voter.is_alive()
    assert len(acked) > 20, "the voter should have had time to vote"

    restarted = time.monotonic()
    own_redis.start()
    # The same Django process, the same connection pool: the next call reconnects.
    services.article_vote(article_id=ids[0], user_id=999_999, direction=Vote.UP, now=NOW + 61)
    reconnect = time.monotonic() - restarted

    conn = get_connection()
    pipe = conn.pipeline(transaction=False)
    for article_id, user, direction in acked:
        key = keys.voted(article_id) if direction is Vote.UP else keys.voted_down(article_id)
        pipe.sismember(key, keys.user(user))
    assert all(pipe.execute()), "an acknowledged vote was lost"
    for article_id in ids:
        up = sum(1 for a, _, d in acked if a == article_id and d is Vote.UP)
        article = selectors.article_get(article_id=article_id)
        # +1 poster vote; the vote in flight at the kill may or may not have landed.
        assert article.votes - 1 - (article_id == ids[0]) - up in (0, 1)
    assert audit.invariant_audit(now=NOW + 62) == []
    record_property("acked_votes_checked", len(acked))
    record_property("restart_to_first_vote_s", round(reconnect, 3))
    log.info(f"kill -9: {len(acked)} acknowledged votes checked, first vote {reconnect:.3f} s")


def _timed_get(client, path: str, **headers: str):
    started = time.monotonic()
    response = client.get(path, **headers)
    return response, time.monotonic() - started


@pytest.mark.django_db  # /healthz probes the database too
def test_stopped_redis_gives_503_within_1_s_and_the_site_recovers_without_restart(
    own_redis: EmbeddedRedis, client
):
    _post(3)
    # Warm Django's template engine (a one-off start-up cost, not outage latency).
    render_to_string("articles/unavailable.html", {"message": ""})
    assert client.get("/healthz").status_code == 200
    assert client.get("/listing").status_code == 200
    own_redis.stop()

    for path, headers in (
        ("/healthz", {}),
        ("/listing", {}),
        ("/api/listing", {"HTTP_ACCEPT": "application/json"}),
    ):
        response, took = _timed_get(client, path, **headers)
        assert response.status_code == 503, path
        assert took < 1.0, f"{path} took {took:.2f} s"
        body = response.content.decode()
        assert "Traceback" not in body
        assert "Redis" in body or "unreachable" in body
        log.info(f"stopped: {path} 503 in {took:.3f} s")
    api = client.get("/api/listing")
    assert api.json()["code"] == "store_unavailable"

    own_redis.start()
    started = time.monotonic()
    assert client.get("/healthz").status_code == 200
    response = client.get("/listing")
    assert response.status_code == 200
    assert response.json()["count"] == 3
    log.info(f"stopped: recovered in {time.monotonic() - started:.3f} s after restart")


@pytest.mark.django_db  # /healthz probes the database too
def test_hung_redis_gives_503_within_3_s_and_the_site_recovers_when_it_resumes(
    own_redis: EmbeddedRedis, client
):
    _post(2)
    assert client.get("/listing").status_code == 200
    own_redis.kill(signal.SIGSTOP)
    try:
        for path in ("/healthz", "/listing", "/api/listing"):
            response, took = _timed_get(client, path)
            assert response.status_code == 503, path
            assert took < 3.0, f"{path} took {took:.2f} s"
            assert "Traceback" not in response.content.decode()
            log.info(f"hung: {path} 503 in {took:.3f} s")
    finally:
        own_redis.kill(signal.SIGCONT)
    # The process leaves the server that timed out alone for its cooldown (articles.store.breaker).
    time.sleep(breaker.COOLDOWN)
    response, took = _timed_get(client, "/listing")
    assert response.status_code == 200
    assert response.json()["count"] == 2
    log.info(f"hung: first request after SIGCONT and the cooldown 200 in {took:.3f} s")


def test_voting_works_after_script_flush_and_after_a_restart(own_redis: EmbeddedRedis):
    [article_id] = _post(1)
    services.article_vote(article_id=article_id, user_id=1, direction=Vote.UP, now=NOW + 1)
    get_connection().script_flush()
    services.article_vote(article_id=article_id, user_id=2, direction=Vote.DOWN, now=NOW + 2)
    own_redis.stop()
    own_redis.start()
    get_connection().script_flush()
    article = services.article_vote(
        article_id=article_id, user_id=3, direction=Vote.UP, now=NOW + 3
    )
    assert (article.votes, article.downvotes) == (3, 1)
    assert article.score == NOW + 432 * 2
    assert audit.invariant_audit(now=NOW + 4) == []


def _append_only_file(directory: Path) -> Path:
    """The file new writes are appended to: `appendonly.aof` on 6.2; on 7.0 and later the
    last incremental file of the multi-part AOF in `appendonlydir/`."""
    parts = directory / "appendonlydir"
    if not parts.is_dir():
        return directory / "appendonly.aof"
    return max(parts.glob("*.incr.aof"), key=lambda path: int(path.name.split(".")[-3]))


def _last_multi(aof: bytes) -> int:
    """Where the last MULTI record of the append-only file starts."""
    return aof.rindex(b"*1\r\n$5\r\nMULTI\r\n")


@pytest.mark.parametrize("cut", [1, 7, 20, 45, "mid", -3, -1])
def test_a_torn_last_append_only_record_still_starts_and_passes_the_audit(
    tmp_short: Path, cut: int | str
):
    # `always`: this test is about a torn record, so every acknowledged write must already be
    # in the file when it is cut (under `everysec` a stalled fsync may postpone the write).
    server = EmbeddedRedis(tmp_short, daemonize=False, extra_config="appendfsync always\n")
    server.start()
    try:
        with store_on(f"{server.url}?db=0"):
            ids = _post(3)
            for user in range(1, 40):
                services.article_vote(
                    article_id=ids[user % 3], user_id=user, direction=Vote.UP, now=NOW + 5
                )
            before = [a.id for a in selectors.article_list(order=Order.SCORE).items]
            server.kill(signal.SIGKILL)
            aof_path = _append_only_file(tmp_short)
            aof = aof_path.read_bytes()
            start = _last_multi(aof)
            offset = {"mid": (len(aof) - start) // 2}.get(cut, cut)  # type: ignore[call-overload]
            keep = start + offset if offset > 0 else len(aof) + offset
            assert start < keep < len(aof)
            aof_path.write_bytes(aof[:keep])

            server.start()
            assert audit.invariant_audit(now=NOW + 6) == []
            after = selectors.article_list(order=Order.SCORE)
            assert sorted(a.id for a in after.items) == sorted(before)
            votes = sum(a.votes for a in after.items)
            assert votes in (3 + 39, 3 + 38)  # at most the torn last vote is gone
            # and the store still takes votes
            services.article_vote(article_id=ids[0], user_id=500, direction=Vote.UP, now=NOW + 7)
            assert audit.invariant_audit(now=NOW + 8) == []
    finally:
        server.stop()


def test_writes_cut_off_by_a_hang_and_retried_count_once(own_redis: EmbeddedRedis):
    """Ensure a vote or post whose reply was lost (Redis hung; redis-py re-sent it) and that
    the client then retries is applied once: the scripts are safe to repeat."""
    [article_id] = _post(1)
    with redis_hung(own_redis):
        with pytest.raises(redis.RedisError):
            services.article_vote(article_id=article_id, user_id=7, direction=Vote.UP, now=NOW)
        breaker.close_all()  # send the post too, as a process that saw no timeout yet would
        with pytest.raises(redis.RedisError):
            services.article_post(
                NewPost(user_id=7, poster_name="s", title="once", text="t", now=NOW),
                idempotency_key="k-1",
            )
    breaker.close_all()  # rather than waiting out the cooldown
    # Redis now runs whatever was queued (the vote script, the post); the client retries.
    services.article_vote(article_id=article_id, user_id=7, direction=Vote.UP, now=NOW)
    first = services.article_post(
        NewPost(user_id=7, poster_name="s", title="once", text="t", now=NOW), idempotency_key="k-1"
    )
    again = services.article_post(
        NewPost(user_id=7, poster_name="s", title="once", text="t", now=NOW), idempotency_key="k-1"
    )
    assert first.id == again.id
    assert selectors.article_get(article_id=article_id).votes == 2
    assert [a.title for a in selectors.article_list(order=Order.TIME).items].count("once") == 1
    assert audit.invariant_audit(now=NOW + 1) == []
