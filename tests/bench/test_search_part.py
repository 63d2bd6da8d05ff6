"""The search part of the benchmark measures the store's own index, on data where its
queries find articles, in the round trips it claims; a run of one part keeps the rest of
docs/performance.md."""

from __future__ import annotations

import time
from pathlib import Path

from redis.commands.core import Script

from articles.operations import audit
from articles.store import keys, scripts, selectors, services
from articles.store.connection import get_connection
from articles.types import NewPost, SearchOrder
from bench import counting, data, searches
from bench.report import MAIN, SEARCH, Report, write_report


def _index(conn) -> dict[str, set[bytes]]:
    return {
        name.decode(): conn.smembers(name)
        for name in conn.scan_iter(match=keys.SEARCH_INDEX_SCAN, count=1_000)
    }


def test_the_stores_reindex_builds_the_index_the_bulk_load_writes() -> None:
    conn = get_connection()
    spec = data.Spec(articles=400, group_size=40, now=time.time())
    data.load_redis(conn, spec)
    bulk = _index(conn)
    conn.flushdb()
    data.load_redis(conn, spec, index=False)
    assert _index(conn) == {}
    took, sizes = searches.build_index(400)
    assert took > 0
    assert _index(conn) == bulk
    assert sizes["keys"] == len(bulk)
    assert sizes["members"] == sum(len(m) for m in bulk.values())
    assert sizes["usage"] > sizes["members"] * 8  # at least a pointer an entry
    assert audit.invariant_audit() == []


def test_every_benchmark_query_finds_articles_and_the_kinds_differ_in_size() -> None:
    data.load_redis(get_connection(), data.Spec(articles=2_000, group_size=20, now=time.time()))
    counts = {q.text: selectors.article_search(q=q.text).count for q in searches.QUERIES}
    assert all(counts.values()), counts
    assert {q.kind for q in searches.QUERIES} == set(searches.KINDS)
    # A frequent word, a rarer one, and a pair rarer than either of its words.
    assert counts["python"] > 3 * counts["essay"]
    assert counts["video essay"] < min(counts["video"], counts["essay"])
    assert counts["python -rust"] < counts["python"]


def test_a_search_takes_two_round_trips_cold_or_cached() -> None:
    data.load_redis(get_connection(), data.Spec(articles=300, group_size=30, now=time.time()))
    store = get_connection()
    store.connection_pool.connection_class = counting.CountingUnixConnection
    store.connection_pool.reset()
    store.ping()
    # Steady state: every script already loaded, as after a site's first requests (a script
    # another test's server never saw costs two more trips, NOSCRIPT then SCRIPT LOAD).
    for script in vars(scripts).values():
        if isinstance(script, Script):
            store.script_load(script.script)

    def cold() -> object:
        searches.drop_search_cache()
        before = counting.sent()
        selectors.article_search(q="open source")
        return counting.sent() - before

    assert cold() == 2
    assert counting.round_trips(lambda: selectors.article_search(q="open source")) == 2
    # Dropped means rebuilt: an article posted after the cache was filled shows only then.
    newest = lambda: selectors.article_search(q="python", order=SearchOrder.NEWEST)  # noqa: E731
    before = newest()
    posted = services.article_post(
        NewPost(user_id=7, poster_name="u7", title="Python news today", text="Fresh.")
    )
    assert newest().count == before.count  # still cached
    searches.drop_search_cache()
    after = newest()
    assert after.count == before.count + 1
    assert after.items[0].id == posted.id


def test_a_run_of_one_part_rewrites_its_block_and_keeps_the_others(tmp_path: Path) -> None:
    page = tmp_path / "performance.md"
    page.write_text(
        "# P\n\nprose\n\n<!-- bench-search:begin -->\nold search\n<!-- bench-search:end -->\n"
        "\nmore prose\n\n<!-- bench:begin -->\nold main\n<!-- bench:end -->\ntail\n"
    )
    report = Report()
    report.part = SEARCH
    report.section("Search", ["| a | b |"])
    report.goal("search goal", 2.0, 1)
    assert report.parts() == [SEARCH]
    write_report(page, report.markdown(SEARCH, head=["- machine"]), SEARCH)
    text = page.read_text()
    assert "old search" not in text
    assert "old main" in text and "more prose" in text and text.endswith("tail\n")
    block = text.split("<!-- bench-search:begin -->")[1].split("<!-- bench-search:end -->")[0]
    assert "### Machine and run" in block and "| a | b |" in block and "search goal" in block
    assert "search goal" not in report.markdown(MAIN)
