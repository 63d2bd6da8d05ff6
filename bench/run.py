"""votesite's benchmark: the store side by side with the book's access pattern (baseline A)
and a plain Django ORM site (baseline B) on SQLite and PostgreSQL, in one run.

    python -m bench.run            # the full run (make bench), 14-18 min on 2 shared cores
    python -m bench.run --smoke    # a tiny run of every part (make bench-smoke)
    python -m bench.run --only search --out docs/performance.md   # one part, its block only
    python -m bench.run --only live --out docs/performance.md     # the live endpoint (1 min)

Every figure is the median of several interleaved batches; every goal is a ratio between
two figures of the same run, printed with PASS or FAIL.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import comments, pages
from bench.cases import (
    build_cases,
    count_round_trips,
    in_process_report,
    memory,
    run_interleaved,
    server_time,
    stampede,
)
from bench.live import Sizes as LiveSizes
from bench.report import MAIN, SEARCH, Report, log, machine_lines, write_report

ROOT = Path(__file__).resolve().parent.parent


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
    http_warmup: bool = True  # wrk on each endpoint before the rounds (the vote: every token)
    only: str | None = None  # run only this part ("search", "live"); its block is rewritten
    comments: int = 500
    thread_comments: int = 300  # the HTTP part's article page with a thread
    middleware_reps: int = 9
    middleware_calls: int = 2000
    scale_comments: int = 2000  # the scale part's thread (bench/scale.py)
    live: LiveSizes | None = None  # the live endpoint's part (bench/live.py); None: skipped


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
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (gthread)")
    parser.add_argument("--port", type=int, default=8103)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument(
        "--http-only", action="store_true", help="load the main store, then HTTP only"
    )
    parser.add_argument(
        "--only",
        choices=["search", "live"],
        help="run only this part (search: on the main store and baseline B; live: on its own)",
    )
    parser.add_argument("--no-live", action="store_true", help="skip the live endpoint's part")
    parser.add_argument("--comments", type=int, default=500, help="comments in the thread case")
    parser.add_argument(
        "--thread-comments", type=int, default=300, help="comments on the HTTP thread page"
    )
    parser.add_argument("--middleware-reps", type=int, default=9)
    parser.add_argument("--middleware-calls", type=int, default=2000, help="requests a round")
    parser.add_argument(
        "--scale-comments", type=int, default=2000, help="comments on the scale part's thread"
    )
    parser.add_argument("--out", type=Path, help="write the report (Markdown) here")
    a = parser.parse_args(argv)
    if a.only and a.http_only:
        parser.error("--only and --http-only do not go together")
    if a.smoke:
        a.articles, a.group, a.small, a.large, a.large_votes = 2_000, 200, 500, 5_000, 3
        a.reps, a.seconds, a.http_seconds, a.http_reps = 2, 0.02, 0.5, 1
        # Each wrk run lasts a second at least: a cap of a few hundred requests ended the fast
        # endpoints early and read as the same rate for all; the second bounds them now.
        a.http_requests = 20_000
        a.comments, a.thread_comments = 50, 30
        a.middleware_reps, a.middleware_calls = 3, 200
        a.scale_comments = 50
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
        http_warmup=not a.smoke,
        only=a.only,
        comments=a.comments,
        thread_comments=a.thread_comments,
        middleware_reps=a.middleware_reps,
        middleware_calls=a.middleware_calls,
        scale_comments=a.scale_comments,
        out=a.out,
        live=None if a.no_live else LiveSizes.smoke() if a.smoke else LiveSizes(),
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
            pg = pg and opts.only != "live"
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
    print("\n## Machine and run\n" + "\n".join(machine))
    held = sum(g.ok for g in report.goals)
    missing = sum(g.value is None for g in report.goals)
    print(f"\n{held} of {len(report.goals)} goals hold; {missing} not measurable in this run.")
    if opts.out:
        for part in report.parts():
            write_report(opts.out, report.markdown(part, head=machine), part)
        log(f"report written to {opts.out} ({', '.join(report.parts())})")
    return 0


def run_all(opts: Options, report: Report, redis_server, pg: bool, env, directory) -> None:
    import redis
    from django.db import connections
    from django_redis import get_redis_connection

    from bench import book, data
    from bench.ormsite import models as orm
    from bench.ormsite import ops

    if opts.only == "live":  # its own servers and data: nothing to load here
        _live(report, opts)
        return
    # With --only, the data section goes in that part's block: the others stay as they are.
    report.part = SEARCH if opts.only == "search" else MAIN
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
    for alias, spec in stores[:1] if opts.http_only or opts.only else stores:
        t0 = time.perf_counter()
        chunks = main_chunks if spec is main_spec else None
        # The main store's search index is built by the store's own reindex (the search
        # part, timed), before anything else reads the store.
        index = spec is not main_spec or opts.http_only
        totals = data.load_redis(get_redis_connection(alias), spec, chunks, index=index)
        took = time.perf_counter() - t0
        loads.append(
            f"| Redis ({alias}) | {totals['articles']:,} | {totals['votes']:,} | "
            f"{totals['good']:,} | {took:.0f} s |"
        )
        log(f"loaded {alias}: {totals} in {took:.0f} s")
    if opts.http_only:
        from bench import http, middleware

        middleware.run(report, opts)
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
            "rest a geometric number; 10 % of votes are down-votes. Titles, texts and link "
            "hosts are words drawn as bench/words.py says; the main store's search index "
            "is built by the store's own reindex (see Search).",
            "",
            "| store | articles | votes | good | load time |",
            "|---|---|---|---|---|",
            *loads,
        ],
    )

    from bench import searches

    report.part = SEARCH
    searches.run(report, opts, pg)
    if opts.only == "search":
        return
    report.part = MAIN

    # The audit of the store itself on a sample, so the bulk load is known to be valid.
    from django.test import override_settings

    # Imported here: the app's modules read settings at import, set up only in main().
    from articles.operations import audit

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
    pages.run(report, opts, main_spec.groups)
    comments.run(report, opts)

    server_time(report, cases, conn)
    stampede(report, conn, opts)
    memory(report, opts)
    from bench import scale

    scale.run(report, opts)  # writes to the growth stores: after every part reading them
    from bench import middleware

    middleware.run(report, opts)
    if opts.http:
        from bench import http

        http.run(report, opts, env, directory, now)
    _live(report, opts)
    _ = redis  # the module is imported for its exceptions in callers


def _live(report: Report, opts: Options) -> None:
    """The live endpoint's part (bench/live.py), in its own block of the page."""
    if opts.live is None:
        return
    from bench import live

    live.run(report, opts.live)
    report.part = MAIN


if __name__ == "__main__":
    raise SystemExit(main())
