"""The search part: the store's search (selectors.article_search over postings:<word> sets)
beside what a Django developer would write without Redis, on the same articles: `icontains`
on SQLite and PostgreSQL full-text search over a GIN index (bench/ormsite/ops.py).

The store's index is built by its own reindex (services.search_reindex_batch, the code of
`manage.py reindex_search`) over the bulk-loaded articles, timed. Each query is timed
cold (every cached search dropped before each call, untimed) and cached, and its round
trips counted; the baselines' SQL statements are counted the same way.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.cases import Case, count_round_trips, run_interleaved
from bench.report import Report, log

Options = Any  # bench.run.Options

BATCH = 500  # articles a reindex batch: reindex_search's default


@dataclass(frozen=True)
class Query:
    kind: str  # "one word" | "two words" | "exclusion"
    text: str  # as typed in the search box

    @property
    def words(self) -> list[str]:
        return [w for w in self.text.split() if not w.startswith("-")]

    @property
    def excluded(self) -> list[str]:
        return [w[1:] for w in self.text.split() if w.startswith("-")]


# Words of three frequencies (bench/words.py: rank 6, 60 and 300 of 20,000), pairs of
# them, and exclusions; the report gives each one's number of results in each engine.
QUERIES = [
    Query("one word", "python"),
    Query("one word", "video"),
    Query("one word", "essay"),
    Query("two words", "open source"),
    Query("two words", "linux kernel"),
    Query("two words", "video essay"),
    Query("exclusion", "python -rust"),
    Query("exclusion", "database -sql"),
]
KINDS = ("one word", "two words", "exclusion")
GOAL_KINDS = ("one word", "two words")  # the goal; exclusions are reported


def p90_ms(case: Case) -> float:
    if len(case.latencies) < 2:
        return float("nan")
    return statistics.quantiles(case.latencies, n=10)[-1] * 1000


def drop_search_cache() -> None:
    """Forget every cached search: the next one builds its result from the index."""
    from articles import conf
    from articles.store import keys
    from articles.store.connection import get_connection

    slots = [keys.search_cache_query(slot) for slot in range(conf.search_cache_slots())]
    get_connection().delete(*slots)


def build_index(articles: int) -> tuple[float, dict[str, int]]:
    """The store's own reindex over articles 1..`articles`: seconds taken, and the index'
    size. Raises if any article was not indexed."""
    from articles.store import services
    from articles.store.connection import get_connection

    conn = get_connection()
    used_before = int(conn.info("memory")["used_memory"])
    t0 = time.perf_counter()
    changed = 0
    for start in range(1, articles + 1, BATCH):
        ids = list(range(start, min(start + BATCH, articles + 1)))
        done, missing = services.search_reindex_batch(article_ids=ids)
        if missing:
            raise RuntimeError(f"reindex found {missing} articles missing")
        changed += done
    took = time.perf_counter() - t0
    time.sleep(0.05)
    used_after = int(conn.info("memory")["used_memory"])
    if changed != articles:
        raise RuntimeError(f"reindex changed {changed} of {articles} articles")
    sizes = index_sizes(conn, articles)
    sizes["used_memory_delta"] = used_after - used_before
    return took, sizes


def index_sizes(conn, articles: int) -> dict[str, int]:
    """MEMORY USAGE (SAMPLES 0) summed over every postings:<word> set, their number and
    members."""
    from articles.store import keys

    names = list(conn.scan_iter(match=keys.SEARCH_INDEX_SCAN, count=5_000))
    usage = members = 0
    for start in range(0, len(names), 2_000):
        pipe = conn.pipeline(transaction=False)
        for name in names[start : start + 2_000]:
            pipe.memory_usage(name, samples=0)
            pipe.scard(name)
        replies = pipe.execute()
        usage += sum(r or 0 for r in replies[0::2])
        members += sum(replies[1::2])
    return {"keys": len(names), "usage": usage, "members": members}


def sql_statements(db: str, fn: Callable[[], object]) -> int:
    """How many SQL statements one call of `fn` sends to `db` (its round trips)."""
    from django.db import connections

    sent = 0

    def counter(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        nonlocal sent
        sent += 1
        return execute(sql, params, many, context)

    with connections[db].execute_wrapper(counter):
        fn()
    return sent


def create_gin_index(db: str) -> tuple[float, int, bool]:
    """The GIN index over the search vector: seconds to build, bytes, and whether the
    planner uses it for a search."""
    from django.contrib.postgres.indexes import GinIndex
    from django.db import connections

    from bench.ormsite import ops
    from bench.ormsite.models import Article

    t0 = time.perf_counter()
    with connections[db].schema_editor() as editor:
        editor.add_index(Article, GinIndex(ops.search_vector(), name="ormsite_search"))
    took = time.perf_counter() - t0
    with connections[db].cursor() as cursor:
        cursor.execute("ANALYZE ormsite_article")
        cursor.execute("SELECT pg_relation_size('ormsite_search')")
        size = int(cursor.fetchone()[0])
    from django.contrib.postgres.search import SearchQuery

    plan = (
        Article.objects.using(db)
        .annotate(search=ops.search_vector())
        .filter(search=SearchQuery("python", config=ops.SEARCH_CONFIG))
        .explain()
    )
    return took, size, "ormsite_search" in plan


def server_time(cases: dict[tuple[str, str], Case], calls: int) -> list[str]:
    """Where a cold search's time goes: Redis' own time for the search script and, inside
    it, for its set commands (INFO commandstats over `calls` cold searches), beside the
    wall time of the whole page (both round trips, the 25 hashes decoded)."""
    from articles.store import selectors
    from articles.store.connection import get_connection

    conn = get_connection()
    lines = [
        "| query | results | wall p50 ms | search script, Redis ms | of which ZMSCORE + ZADD "
        "(scores, the result kept) | ZREVRANGE (reading a ranking) "
        "| SMISMEMBER + SMEMBERS (asking sets) |",
        "|---|---|---|---|---|---|---|",
    ]
    for query in QUERIES:
        conn.config_resetstat()
        for _ in range(calls):
            drop_search_cache()
            page = selectors.article_search(q=query.text)
        stats = conn.info("commandstats")

        def ms(*names: str, stats: dict = stats) -> float:
            usec = sum(stats.get(f"cmdstat_{n}", {}).get("usec", 0) for n in names)
            return usec / calls / 1000

        wall = cases[(query.text, "store, cold")].p50_ms
        lines.append(
            f"| `{query.text}` | {page.count:,} | {wall:.2f} | "
            f"{ms('evalsha'):.2f} | {ms('zmscore', 'zadd'):.2f} | "
            f"{ms('zrevrange'):.2f} | {ms('smismember', 'smembers'):.2f} |"
        )
    return lines


def run(report: Report, opts: Options, pg: bool) -> None:
    from articles.store import selectors
    from bench.ormsite import ops

    n = opts.articles
    log(f"indexing {n:,} articles with the store's reindex")
    took, sizes = build_index(n)
    log(f"indexed in {took:.0f} s: {sizes}")
    gin = create_gin_index("orm_pg") if pg else None

    engines: list[tuple[str, str | None, Callable[[Query], Callable[[], Any]]]] = [
        ("store, cold", None, lambda q: lambda: selectors.article_search(q=q.text)),
        ("store, cached", None, lambda q: lambda: selectors.article_search(q=q.text)),
        (
            "B sqlite icontains",
            "orm_sqlite",
            lambda q: lambda: ops.article_search_icontains("orm_sqlite", q.words, q.excluded),
        ),
    ]
    if pg:
        engines.append(
            (
                "B postgres full-text",
                "orm_pg",
                lambda q: lambda: ops.article_search_fts("orm_pg", q.words, q.excluded),
            )
        )
    cases: dict[tuple[str, str], Case] = {}
    found: dict[tuple[str, str], int] = {}
    for query in QUERIES:
        for label, db, make in engines:
            fn = make(query)
            case = Case(
                f"search '{query.text}': {label}",
                fn,
                before=drop_search_cache if label == "store, cold" else None,
            )
            if db is None:
                count_round_trips(case)
                found[(query.text, "store")] = selectors.article_search(q=query.text).count
            else:
                case.round_trips = sql_statements(db, fn)
                found[(query.text, label)] = int(fn()[0])
            cases[(query.text, label)] = case
    log(f"timing {len(cases)} search cases")
    run_interleaved(list(cases.values()), opts.reps, opts.seconds)

    labels = [label for label, _, _ in engines]
    rows = []
    for query in QUERIES:
        for label in labels:
            case = cases[(query.text, label)]
            key = "store" if label.startswith("store") else label
            rows.append(
                f"| {query.kind} | `{query.text}` | {label} | {found[(query.text, key)]:,} | "
                f"{case.round_trips} | {case.p50_ms:.2f} | {p90_ms(case):.2f} | "
                f"{case.rate:,.0f} |"
            )
    per_article = sizes["usage"] / n
    memory = [
        "| index | bytes per article | what |",
        "|---|---|---|",
        f"| store: postings:<word> sets | {per_article:.0f} | `MEMORY USAGE ... SAMPLES 0` summed "
        f"over {sizes['keys']:,} sets holding {sizes['members']:,} entries "
        f"({sizes['members'] / n:.1f} words per article) |",
        f"| store: INFO used_memory growth while indexing | "
        f"{sizes['used_memory_delta'] / n:.0f} | the sets, allocator and "
        "keyspace overhead included |",
    ]
    if gin:
        memory.append(
            f"| PostgreSQL: GIN index on the search vector | {gin[1] / n:.0f} | "
            f"`pg_relation_size`; built in {gin[0]:.1f} s; "
            f"the planner uses it: {'yes' if gin[2] else 'NO'} |"
        )
    memory.append("| SQLite `icontains` | 0 | no index: every search reads every row |")
    report.section(
        "Search (issue 13)",
        [
            f"{n:,} articles (titles of 4-9 words, a quarter with a text of 2-4 sentences, "
            "link hosts; words drawn as bench/words.py says) in the store and in both "
            "baseline B databases. The store's index was built by its own reindex "
            f"(`services.search_reindex_batch`, {BATCH} articles a batch) in {took:.1f} s "
            f"({n / took:,.0f} articles/s). Every case asks for page 1 (25 articles, by "
            "score) and the number of results: the store's `selectors.article_search` "
            "(cold: every cached search dropped before each call, untimed, so the script "
            "walks the ranking or builds the result as it chooses; cached: the same search "
            "again within its 30 s cache, or walked again when it was walked), `icontains` "
            "on title or text per word with Django's Paginator on SQLite, "
            "`SearchVector('title', 'text')` @@ "
            "`SearchQuery(websearch)` with Paginator on PostgreSQL. Round trips: Redis "
            "round trips counted (store), SQL statements counted (baseline B). p50 and p90 "
            "over every call of every batch; calls/s the median of batches.",
            "",
            "| kind | query | engine | results | round trips | p50 ms | p90 ms | calls/s |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            "Result counts differ by design: the store matches whole words of the title, "
            "text and link host; `icontains` matches substrings of title or text "
            "(`video` also finds `videos`); PostgreSQL matches English stems of title or "
            "text.",
            "",
            *memory,
        ],
    )
    store_trips = max(cases[(q.text, "store, cold")].round_trips or 0 for q in QUERIES)
    report.goal("search: round trips (cold or cached)", store_trips, 2, unit="", at_most=True)
    notes = []
    for kind in KINDS:
        of_kind = [q for q in QUERIES if q.kind == kind]
        for label in labels[2:]:
            ratios = [
                cases[(q.text, label)].p50_ms / cases[(q.text, "store, cold")].p50_ms
                for q in of_kind
            ]
            text = f"search {kind}, cold: {label} p50 / store p50 (slowest of {len(of_kind)})"
            if kind in GOAL_KINDS:
                report.goal(text, min(ratios), 1)
            else:
                notes.append(f"| {text} | {min(ratios):.2f}x |")
    for kind in KINDS:
        of_kind = [q for q in QUERIES if q.kind == kind]
        ratio = min(
            cases[(q.text, "store, cold")].p50_ms / cases[(q.text, "store, cached")].p50_ms
            for q in of_kind
        )
        notes.append(
            f"| search {kind}: cold p50 / cached p50 (least of {len(of_kind)}) | {ratio:.2f}x |"
        )
    report.section("Search ratios (no goal)", ["| ratio | value |", "|---|---|", *notes])
    report.section(
        "Search: where a cold search's time goes",
        [
            "Redis' own time per cold search (`INFO commandstats` over "
            f"{max(3, opts.reps * 3)} cold calls of each query after the timing; commands "
            "run by a script are counted in both the script and the command):",
            "",
            *server_time(cases, max(3, opts.reps * 3)),
        ],
    )
