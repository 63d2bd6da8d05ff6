"""The store's in-process cases: votesite's selectors and services beside the book's access
pattern (baseline A), the ORM site (baseline B), the Redis ceiling, growth and TCP; their
timing (interleaved batches), round trips, and their section of the report."""

from __future__ import annotations

import contextlib
import itertools
import random
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.report import Report, log

Options = Any  # bench.run.Options (not imported: run imports this module)


@dataclass
class Case:
    name: str
    fn: Callable[[], object]
    before: Callable[[], object] | None = None  # untimed set-up before each call
    alias: str | None = None  # run with ARTICLES_REDIS_ALIAS set to this
    rates: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # this process's CPU time per call
    round_trips: int | None = None

    @property
    def rate(self) -> float:
        return statistics.median(self.rates) if self.rates else float("nan")

    @property
    def cpu_ms(self) -> float:
        return statistics.median(self.cpu) * 1000 if self.cpu else float("nan")

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1000 if self.latencies else float("nan")


def measure(case: Case, seconds: float) -> None:
    """One batch: call case.fn until `seconds` of its own time have passed (at least 3
    calls); set-up hooks are not timed. Appends the batch's calls/s and latencies."""
    from django.test import override_settings

    override = (
        override_settings(ARTICLES_REDIS_ALIAS=case.alias)
        if case.alias
        else contextlib.nullcontext()
    )
    spent, cpu, calls, batch = 0.0, 0.0, 0, []
    with override:
        while spent < seconds or calls < 3:
            if case.before:
                case.before()
            start, start_cpu = time.perf_counter(), time.process_time()
            case.fn()
            took = time.perf_counter() - start
            cpu += time.process_time() - start_cpu
            spent += took
            calls += 1
            batch.append(took)
    case.rates.append(calls / spent)
    case.cpu.append(cpu / calls)
    case.latencies.extend(batch)


def count_round_trips(case: Case) -> None:
    from django.test import override_settings

    from bench import counting

    override = (
        override_settings(ARTICLES_REDIS_ALIAS=case.alias)
        if case.alias
        else contextlib.nullcontext()
    )
    counts = []
    with override:
        for _ in range(3):
            if case.before:
                case.before()
            before = counting.sent()
            case.fn()
            counts.append(counting.sent() - before)
    case.round_trips = min(counts)


def run_interleaved(cases: list[Case], reps: int, seconds: float) -> None:
    """reps rounds; in each, every case runs one batch, in a shuffled order."""
    order = list(cases)
    shuffle = random.Random(1)
    for rep in range(reps):
        shuffle.shuffle(order)
        for case in order:
            measure(case, seconds)
        log(f"round {rep + 1}/{reps} done")


def growth_page(opts: Options) -> int:
    """The deep page of the growth curve: 200 (the middle of the 10,000-article store)."""
    return max(2, min(200, opts.small // 25 // 2))


def build_cases(opts: Options, conn, pg: bool, book, ops, now: float) -> dict[str, Case]:
    from redis.commands.core import Script

    from articles.store import keys, selectors, services
    from articles.types import Order, Period, Vote
    from bench import one_call

    fresh = itertools.count(10_000_000)  # voters who have not voted yet: every vote changes
    rng = random.Random(2)
    n = opts.articles
    deep = max(2, n // 25 // 2)  # the middle page: 2,000 of 4,000 at 100,000 articles
    small_deep = growth_page(opts)

    def vote(limit: int) -> Callable[[], object]:
        return lambda: services.article_vote(
            article_id=rng.randint(1, limit), user_id=next(fresh), direction=Vote.UP
        )

    def drop_group_cache() -> None:
        conn.delete(keys.group_order(keys.SCORE, "bench"))

    def make_sweep_due() -> None:
        """The kept ranking's counterpart of the book's 60 s expiry: its last vote sweep
        began over a minute ago, so the next read takes the first step of a new one."""
        conn.hset(keys.GROUP_RANKS, "bench", int(time.time()) - 120)
        conn.hdel(keys.GROUP_RANKS, "bench:at")

    def forget_group_ranking() -> None:
        """A group not kept yet (new, or written by the book's code): its first read fills
        the ranking in bounded steps, once in the group's life."""
        conn.hdel(keys.GROUP_RANKS, "bench", "bench:at")

    minimal = Script(None, b"return 1")
    poster = int(conn.hget(keys.article(1), "poster").split(b":")[1])  # one with articles
    cases = [
        Case("store vote", vote(n)),
        Case("store page 1 by score", lambda: selectors.article_list(order=Order.SCORE, page=1)),
        Case(f"store deep page {deep}", lambda: selectors.article_list(page=deep)),
        Case("store page 1 by time", lambda: selectors.article_list(order=Order.TIME, page=1)),
        Case("store group page, warm", lambda: selectors.group_article_list(name="bench")),
        Case(
            "store group page, sweep due",
            lambda: selectors.group_article_list(name="bench"),
            before=make_sweep_due,
        ),
        Case(
            "store group page, first fill",
            lambda: selectors.group_article_list(name="bench"),
            before=forget_group_ranking,
        ),
        Case("store home (newest 50 good)", lambda: selectors.good_article_page()),
        Case(
            "store top of the week",
            lambda: selectors.top_article_list(period=Period.WEEK, page=1),
        ),
        Case(
            "store page 1, logged in",
            lambda: selectors.article_list(page=1, user_id=rng.randint(1, 200_000)),
        ),
        Case(
            "store user page (articles, karma, comments)",
            lambda: selectors.user_page(poster_id=poster, comments=10),
        ),
        Case(
            "store page 1, one call (bench proposal)",
            lambda: one_call.article_list_one_call(page=1),
        ),
        Case(
            f"store deep page {deep}, one call (bench proposal)",
            lambda: one_call.article_list_one_call(page=deep),
        ),
        Case(
            "A vote (book)",
            lambda: book.article_vote(
                conn, keys.user(next(fresh)), keys.article(rng.randint(1, n))
            ),
        ),
        Case("A page 1 by score (book)", lambda: book.get_articles(conn, 1)),
        Case("A page 1 by time (book)", lambda: book.get_articles(conn, 1, "time:")),
        Case(f"A deep page {deep} (book)", lambda: book.get_articles(conn, deep)),
        Case("A group page, warm (book)", lambda: book.get_group_articles(conn, "bench", 1)),
        Case(
            "A group page, cold (book)",
            lambda: book.get_group_articles(conn, "bench", 1),
            before=drop_group_cache,
        ),
        Case("A home (book)", lambda: book.get_good_articles(conn)),
        Case(
            "A top of the week (book)",
            lambda: book.get_top_articles(conn, 1, time.time() - 7 * 86_400),
        ),
        Case("ceiling PING", conn.ping),
        Case("ceiling EVALSHA return 1", lambda: minimal(client=conn)),
    ]
    from django_redis import get_redis_connection

    tcp = get_redis_connection("bench_tcp")
    cases += [
        Case("tcp store vote", vote(n), alias="bench_tcp"),
        Case(
            "tcp store page 1 by score", lambda: selectors.article_list(page=1), alias="bench_tcp"
        ),
        Case(
            "tcp store page 1, one call (bench proposal)",
            lambda: one_call.article_list_one_call(page=1),
            alias="bench_tcp",
        ),
        Case(
            "tcp A vote (book)",
            lambda: book.article_vote(tcp, keys.user(next(fresh)), keys.article(rng.randint(1, n))),
        ),
        Case("tcp A page 1 by score (book)", lambda: book.get_articles(tcp, 1)),
        Case("tcp ceiling PING", tcp.ping),
        Case("tcp ceiling EVALSHA return 1", lambda: minimal(client=tcp)),
    ]
    for db in ["orm_sqlite", *(["orm_pg"] if pg else [])]:
        label = "B sqlite" if db == "orm_sqlite" else "B postgres"
        cases += [
            Case(
                f"{label} vote",
                lambda db=db: ops.article_vote(db, rng.randint(1, n), next(fresh), 1),
            ),
            Case(f"{label} page 1 by score", lambda db=db: ops.article_list(db, 1)),
            Case(f"{label} deep page {deep}", lambda db=db: ops.article_list(db, deep)),
            Case(f"{label} group page", lambda db=db: ops.group_article_list(db, "bench", 1)),
            Case(f"{label} home", lambda db=db: ops.good_article_list(db)),
            Case(
                f"{label} top of the week",
                lambda db=db: ops.top_article_list(db, 1, time.time()),
            ),
        ]
    for alias, size, label in (
        ("bench_small", opts.small, "small"),
        ("bench_large", opts.large, "large"),
    ):
        cases += [
            Case(f"growth {label} vote", vote(size), alias=alias),
            Case(
                f"growth {label} page 1",
                lambda: selectors.article_list(page=1),
                alias=alias,
            ),
            Case(
                f"growth {label} page {small_deep}",
                lambda: selectors.article_list(page=small_deep),
                alias=alias,
            ),
            Case(
                f"growth {label} group page, warm",
                lambda: selectors.group_article_list(name="bench"),
                alias=alias,
            ),
        ]
    return {case.name: case for case in cases}


def in_process_report(report: Report, cases: dict[str, Case], opts: Options, pg: bool) -> None:
    def row(case: Case) -> str:
        trips = "" if case.round_trips is None else str(case.round_trips)
        return (
            f"| {case.name} | {case.rate:,.0f} | {case.p50_ms:.2f} | {case.cpu_ms:.2f} | {trips} |"
        )

    header = [
        "| operation | calls/s (median) | p50 ms | client CPU ms | round trips |",
        "|---|---|---|---|---|",
    ]
    groups = [
        ("The store, in-process, one client", "store"),
        ("Baseline A: the book's access pattern, same Redis", "A "),
        ("Baseline B: Django ORM, no Redis", "B "),
        ("Redis ceiling, same client", "ceiling"),
        ("Growth", "growth"),
        ("The same calls over TCP loopback (same server, same data)", "tcp"),
    ]
    for title, prefix in groups:
        report.section(
            title, header + [row(c) for c in cases.values() if c.name.startswith(prefix)]
        )

    deep = next(c.name for c in cases.values() if c.name.startswith("store deep")).split()[-1]
    g = cases.__getitem__
    vote = g("store vote")
    report.goal("vote: round trips", vote.round_trips or 0, 1, unit="", at_most=True)
    report.goal("vote / bare EVALSHA", vote.rate / g("ceiling EVALSHA return 1").rate, 0.8)
    report.goal("vote / baseline A", vote.rate / g("A vote (book)").rate, 2.5)
    report.goal("vote / baseline B sqlite", vote.rate / g("B sqlite vote").rate, 2)
    if pg:
        report.goal("vote / baseline B postgres", vote.rate / g("B postgres vote").rate, 2)
    pages = [
        (
            "page 1 by score",
            "store page 1 by score",
            "A page 1 by score (book)",
            "page 1 by score",
            1,
        ),
        (
            f"deep page {deep}",
            f"store deep page {deep}",
            f"A deep page {deep} (book)",
            f"deep page {deep}",
            10,
        ),
        (
            "group page (warm)",
            "store group page, warm",
            "A group page, warm (book)",
            "group page",
            10,
        ),
        ("home (50 good)", "store home (newest 50 good)", "A home (book)", "home", None),
        (
            "top of the week",
            "store top of the week",
            "A top of the week (book)",
            "top of the week",
            None,
        ),
    ]
    notes: list[str] = []
    for label, store_name, a_name, b_suffix, b_target in pages:
        store = g(store_name)
        report.goal(f"{label}: round trips", store.round_trips or 0, 2, unit="", at_most=True)
        report.goal(f"{label} / baseline A", store.rate / g(a_name).rate, 6)
        if b_target is not None:
            report.goal(
                f"{label} / baseline B sqlite",
                store.rate / g(f"B sqlite {b_suffix}").rate,
                b_target,
            )
        else:
            notes.append(
                f"| {label} / baseline B sqlite | "
                f"{store.rate / g(f'B sqlite {b_suffix}').rate:.2f}x |"
            )
        if pg:
            notes.append(
                f"| {label} / baseline B postgres | "
                f"{store.rate / g(f'B postgres {b_suffix}').rate:.2f}x |"
            )
    report.goal(
        "page 1 by time / baseline A",
        g("store page 1 by time").rate / g("A page 1 by time (book)").rate,
        6,
    )
    one = g("store page 1, one call (bench proposal)")
    tcp_one = g("tcp store page 1, one call (bench proposal)")
    deep_one = g(f"store deep page {deep}, one call (bench proposal)")
    notes += [
        f"| proposal: page 1 in one call / store page 1 | "
        f"{one.rate / g('store page 1 by score').rate:.2f}x |",
        f"| proposal: page 1 in one call / baseline A | "
        f"{one.rate / g('A page 1 by score (book)').rate:.2f}x |",
        f"| proposal: page 1 in one call / baseline B sqlite | "
        f"{one.rate / g('B sqlite page 1 by score').rate:.2f}x |",
        f"| proposal: deep page in one call / baseline A | "
        f"{deep_one.rate / g(f'A deep page {deep} (book)').rate:.2f}x |",
        f"| proposal: deep page in one call / baseline B sqlite | "
        f"{deep_one.rate / g(f'B sqlite deep page {deep}').rate:.2f}x |",
        f"| TCP: vote / baseline A | "
        f"{g('tcp store vote').rate / g('tcp A vote (book)').rate:.2f}x |",
        f"| TCP: vote / bare EVALSHA | "
        f"{g('tcp store vote').rate / g('tcp ceiling EVALSHA return 1').rate:.2f}x |",
        f"| TCP: page 1 / baseline A | "
        f"{g('tcp store page 1 by score').rate / g('tcp A page 1 by score (book)').rate:.2f}x |",
        f"| TCP: page 1 in one call / baseline A | "
        f"{tcp_one.rate / g('tcp A page 1 by score (book)').rate:.2f}x |",
        f"| PING / EVALSHA of `return 1` | "
        f"{g('ceiling PING').rate / g('ceiling EVALSHA return 1').rate:.2f}x |",
    ]
    report.section("Other ratios (no goal)", ["| ratio | value |", "|---|---|", *notes])
    for label in (
        "page 1 by time",
        "group page, sweep due",
        "page 1, logged in",
        "user page (articles, karma, comments)",
    ):
        report.goal(
            f"{label}: round trips", g(f"store {label}").round_trips or 0, 2, unit="", at_most=True
        )
    for what in ("vote", "page 1", "group page, warm", f"page {growth_page(opts)}"):
        small, large = g(f"growth small {what}"), g(f"growth large {what}")
        # time at 1 M within 1.5x of time at 10 k == rate(large)/rate(small) >= 1/1.5
        report.goal(
            f"growth: {what} time at {opts.large:,} / at {opts.small:,}",
            small.rate / large.rate,
            1.5,
            at_most=True,
        )


def server_time(report: Report, cases: dict[str, Case], conn) -> None:
    """Where a call's time goes: Redis' own time per script call (INFO commandstats)
    against the client's wall time and CPU time, for the vote and the bare EVALSHA."""
    lines = [
        "| call | wall ms | client CPU ms | Redis time per EVALSHA (commandstats) |",
        "|---|---|---|---|",
    ]
    for name in (
        "store vote",
        "ceiling EVALSHA return 1",
        "store page 1, one call (bench proposal)",
    ):
        case = cases[name]
        conn.config_resetstat()
        for _ in range(300):
            case.fn()
        stats = conn.info("commandstats").get("cmdstat_evalsha", {})
        lines.append(
            f"| {name} | {1000 / case.rate:.3f} | {case.cpu_ms:.3f} | "
            f"{stats.get('usec_per_call', 0):.1f} us |"
        )
    report.section("Where the time goes (vote and ceiling)", lines)


def stampede(report: Report, conn, opts: Options) -> None:
    """N clients ask for a group page together right after its cache expired."""
    from articles.store import keys, selectors
    from bench import book

    clients, rounds = opts.connections, 5

    def together(call: Callable[[], object]) -> int:
        conn.config_resetstat()
        for _ in range(rounds):
            conn.delete(keys.group_order(keys.SCORE, "bench"))
            barrier = threading.Barrier(clients)
            errors: list[BaseException] = []

            def worker(barrier: threading.Barrier = barrier, errors: list = errors) -> None:
                try:
                    barrier.wait()
                    call()
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=worker) for _ in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise errors[0]
        stats = conn.info("commandstats")
        return int(stats.get("cmdstat_zinterstore", {}).get("calls", 0))

    import redis

    store = together(lambda: selectors.group_article_list(name="bench"))
    # The book's check-then-build, each client on its own connection as separate web
    # processes would be.
    pool = redis.Redis(connection_pool=conn.connection_pool)
    book_calls = together(lambda: book.get_group_articles(pool, "bench", 1))
    report.section(
        "Cold group page: stampede",
        [
            f"{clients} clients request the group page together right after its cache was "
            f"deleted, {rounds} times; `INFO commandstats` counts ZINTERSTORE calls:",
            "",
            "| design | ZINTERSTORE calls | per expiry |",
            "|---|---|---|",
            f"| store (ranking_page.lua) | {store} | {store / rounds:g} |",
            f"| baseline A (EXISTS, then ZINTERSTORE) | {book_calls} | {book_calls / rounds:g} |",
        ],
    )
    report.goal("cold group page: ZINTERSTORE per expiry", store / rounds, 1, unit="", at_most=True)


def memory(report: Report, opts: Options) -> None:
    from bench import memory as mem

    mem.run(report, opts)
