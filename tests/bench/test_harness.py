"""The benchmark harness measures what it claims: round trips, valid data, wrk output."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from articles import validation
from articles.operations import audit
from articles.operations.embedded import EmbeddedRedis
from articles.store import search, selectors, services
from articles.store.connection import get_connection
from articles.types import Order, Vote
from bench import book, counting, data
from bench.http import parse_wrk


@pytest.fixture
def counted(redis_server: EmbeddedRedis) -> redis.Redis:
    pool = redis.ConnectionPool(
        path=str(redis_server.socket), connection_class=counting.CountingUnixConnection
    )
    return redis.Redis(connection_pool=pool)


def test_a_pipeline_counts_as_one_round_trip_and_each_command_as_one(counted) -> None:
    counted.ping()  # connect first: set-up commands are not counted

    def three_alone() -> None:
        for n in range(3):
            counted.set(f"k{n}", n)

    def one_pipeline() -> None:
        pipe = counted.pipeline(transaction=False)
        for n in range(3):
            pipe.set(f"k{n}", n)
        pipe.execute()

    assert counting.round_trips(three_alone) == 3
    assert counting.round_trips(one_pipeline) == 1


def test_generated_articles_are_valid_posts_with_words_and_disjoint_voters() -> None:
    spec = data.Spec(articles=400, group_size=40, now=time.time())
    rows = [row for chunk in data.rows(spec) for row in chunk]
    assert rows == [row for chunk in data.rows(spec) for row in chunk]  # deterministic
    assert len(rows) == 400
    assert sum(r.grouped for r in rows) == 40
    assert 50 < sum(bool(r.text) for r in rows) < 150  # about a quarter have a text
    assert len({r.link for r in rows}) == 400
    for row in rows:
        assert validation.clean_post(row.title, row.link, row.text) == (
            row.title,
            row.link,
            row.text,
        )
        assert len(search.tokens(row.title)) >= 2
        assert row.poster in row.ups
        assert not set(row.ups) & set(row.downs)
        assert spec.now - data.SPAN - 1 <= row.time < spec.now
    votes = sum(len(r.ups) + len(r.downs) for r in rows)
    assert 8 * 400 < votes < 14 * 400  # about 11 a article, the poster's own included


def test_the_bulk_load_passes_the_stores_own_invariant_audit() -> None:
    spec = data.Spec(articles=600, group_size=60, now=time.time())
    totals = data.load_redis(get_connection(), spec)
    assert totals["articles"] == 600
    assert audit.invariant_audit() == []
    page = selectors.group_article_list(name=data.GROUP)
    assert page.count == 60


def test_store_pages_take_two_round_trips_where_the_book_takes_one_per_article(
    counted,
) -> None:
    spec = data.Spec(articles=300, group_size=30, now=time.time())
    data.load_redis(get_connection(), spec)
    store = get_connection()
    store.connection_pool.connection_class = counting.CountingUnixConnection
    store.connection_pool.reset()
    counted.ping()
    assert counting.round_trips(lambda: selectors.article_list(order=Order.SCORE)) == 2
    assert counting.round_trips(lambda: selectors.group_article_list(name=data.GROUP)) == 2
    assert counting.round_trips(lambda: book.get_articles(counted, 1)) == 26
    fresh = iter(range(10_000_000, 10_000_100))
    vote = lambda: services.article_vote(article_id=1, user_id=next(fresh), direction=Vote.UP)  # noqa: E731
    assert counting.round_trips(vote) == 1


def test_wrk_output_is_parsed_into_rate_latencies_and_errors() -> None:
    out = """Running 5s test @ http://127.0.0.1:8103/bench/fixed/
  Latency Distribution
     50%  820.00us
     75%    1.20ms
     90%    2.00ms
     99%    1.05s
  20000 requests in 5.00s, 4.00MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:   4000.50
"""
    result = parse_wrk(out)
    assert result["rps"] == 4000.5
    assert result["p50"] == pytest.approx(0.82)
    assert result["p99"] == pytest.approx(1050)
    assert result["requests"] == 20000
    assert result["errors"] == 7


def test_make_bench_starts_with_no_settings_named() -> None:
    """`make bench` runs `python -m bench.run` with no DJANGO_SETTINGS_MODULE: its imports of
    the app's modules, which read settings, must not fail before it sets Django up."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--help"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--only" in done.stdout
