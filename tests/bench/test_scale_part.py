"""The scale part of the benchmark (issue 21) drives every operation it names through the
store's own services and selectors, finds each one's slowest Redis call by name, and
reports the calls over 5 ms and the ratio of a listing page between two store sizes; on
tiny numbers here."""

from __future__ import annotations

import time

from articles import conf
from articles.operations import audit
from articles.store.connection import get_connection
from bench import scale
from bench.report import Report


def _run(conn, articles: int, **kw) -> dict:
    return scale.run_size(
        conn, articles, comments=30, votes=2, reps=2, threads=2, seconds=0.2, **kw
    )


def test_every_operation_is_measured_by_its_slowest_named_call() -> None:
    conn = get_connection()
    before = conn.config_get("slowlog-log-slower-than")
    found = _run(conn, 600, audit_max=1_000)
    assert conn.config_get("slowlog-log-slower-than") == before  # put back
    measured = {m.name: m for m in found["measured"]}
    kinds = {m.kind for m in measured.values()}
    assert kinds == {"listing", "read", "search", "thread", "write", "job"}
    for name in ("home, page 1", "top day, page 1", "top year, deep", "group by score",
                 "site", "search rare word", "vote up", "post", "comment post",
                 "audit (check_votes)", "delete the article of 30 comments (+ purge)"):  # fmt: skip
        one = measured[name]
        # A whole-store job logs calls from floor_us only: on tiny data it may see none.
        assert one.floor_us or (one.slowest_us > 0 and one.slowest), name
    # Calls are named: a script by its name (the EVALSHA's sha looked up), not EVALSHA.
    assert measured["vote up"].slowest == "vote"
    assert measured["thread of 30, best, page 1"].slowest == "comment_thread"
    assert not any(m.slowest in ("EVALSHA", "SCRIPT") for m in measured.values())
    assert found["concurrent"]["operations"] > 0
    # What the run wrote (posts, votes, comments, a delete and its purge) keeps the store
    # valid: the audit the part itself runs finds nothing.
    assert audit.invariant_audit(now=time.time()) == []


def test_the_report_names_calls_over_5_ms_and_the_ratio_of_two_sizes() -> None:
    conn = get_connection()
    results = [_run(conn, n, audit_max=0) for n in (300, 600)]
    assert all("audit (check_votes)" not in {m.name for m in r["measured"]} for r in results)
    slow = results[-1]["measured"][0]
    slow.over.append((7_000, "ZINTERSTORE"))
    lines = scale.table(results)
    assert lines[0].count("slowest call") == 2
    assert f"| {slow.name} |" in lines[2] and "**over 5 ms**" in lines[2]
    assert "1 (slowest 7,000 µs ZINTERSTORE)" in "\n".join(scale.summary(results))
    ratios = dict(scale.flatness(results))
    assert "top week, page 1" in ratios and "vote up" not in ratios  # listings only
    assert all(r > 0 for r in ratios.values())


def test_the_part_runs_in_the_full_bench_on_its_growth_stores() -> None:
    """bench.run's part measures the stores as loaded (no load of its own) and adds its
    two goals to the report."""
    from types import SimpleNamespace

    from bench import data

    conn = get_connection()
    data.load_redis(conn, data.Spec(articles=400, group_size=40, now=time.time()))
    alias = conf.redis_alias()
    opts = SimpleNamespace(
        small=400, large=400, scale_comments=20, large_votes=2, reps=1, seconds=0.02
    )
    report = Report()
    scale.run(report, opts, aliases=(alias, alias))  # both sizes on the test's own store
    texts = [g.text for g in report.goals]
    assert any("calls over 5 ms" in t for t in texts)
    assert any("listing page, Redis p50" in t for t in texts)
    assert report.sections[0][1].startswith("Scale")


def test_the_bulk_loads_index_is_whole_so_a_search_reads_its_cache() -> None:
    """Ensure the bulk load names the stemmer's language (as reindex_search does when
    done): without it every search of a word whose stem differs from it ("source") was
    bridged, rebuilt on every call and never read from its cache (83 ms a call at 1M)."""
    from articles.store import keys
    from bench import data

    conn = get_connection()
    data.load_redis(conn, data.Spec(articles=300, group_size=30, now=time.time()))
    assert conn.get(keys.SEARCH_STEMMER) == conf.search_language().encode()


def test_a_scripts_own_commands_are_not_calls_of_their_own() -> None:
    """SLOWLOG logs each command a script runs as well as the script, whose
    duration already holds them: the part counts the script once, so a run's sum and its
    calls over 5 ms name no command twice. A MULTI/EXEC's commands stay calls."""
    conn = get_connection()
    saved = conn.config_get("slowlog-*")
    try:
        log = scale.Slowlog(conn)
        conn.zadd("scale:a", {"x": 1})
        conn.zadd("scale:b", {"x": 2})
        log.take()
        conn.eval(
            "redis.call('ZINTERSTORE', 'scale:t', 2, KEYS[1], KEYS[2]); "
            "return redis.call('HGETALL', KEYS[1] .. ':h')",
            2, "scale:a", "scale:b",
        )  # fmt: skip
        with conn.pipeline(transaction=True) as pipe:
            pipe.get("scale:k").set("scale:k", 1).execute()
        calls = log.take()
    finally:
        for name, value in saved.items():
            conn.config_set(name, value)
    assert [name for _, name in reversed(calls)] == ["EVAL", "MULTI", "GET", "SET"]
