"""Archiving closed articles (ARTICLES_ARCHIVE_AFTER): Redis bytes per article before and
after, the job's throughput, and the pages' latency while it runs.

    python -m bench.archive                       # 10,000 articles, PostgreSQL
    python -m bench.archive --articles 20000 --comments 2

Runs its own throwaway redis-server (append-only off: memory only) and PostgreSQL cluster
(bench/servers.py), loads `--articles` with the benchmark's loader (bench/data.py: 11 votes
each, the book's keys and the search index), `--comments` comments on every tenth article
(through the store's own service), lets the voter sets expire (deletes them: a closed
article's have), then:

1. used_memory and the key families' MEMORY USAGE, per article, before archiving;
2. `manage.py archive`'s work (store.archive.links_close, then store.archive.archive)
   timed, with a loop of page requests (Django's test client: /new/, /top/?period=week, a
   group, a search, an archived article's page) running alongside in a process of its own,
   as a site's workers run beside the job: each page's p50/p99 before and during;
3. the same memory figures after, and again a month on (the day's, week's and month's
   tops trimmed of them, as they are for most of an archived article's year), and the
   slowest Redis calls the job made (SLOWLOG, reset before it runs).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

WEEK = 604_800
MONTH = 30 * 86_400
PAGES = ("/new/", "/top/?period=week", "/g/bench/", "/search/?q=sorted")


def memory_parts(conn: Any) -> dict[str, int]:
    """INFO memory's parts that are not the data: the Lua VM's heap (grown by the big
    ARGV of a batch, given back at its garbage collection) and the scripts' cache."""
    info = conn.info("memory")
    names = ("used_memory_vm_eval", "used_memory_scripts_eval", "used_memory_overhead")
    return {name: int(info.get(name, 0)) for name in names}


def families(conn: Any) -> dict[str, int]:
    """MEMORY USAGE summed by key family (bench.memory_split's families)."""
    from bench.memory_split import split

    return dict(split(conn)["bytes"])


def page_times(client: Any, paths: list[str], stop: Any, out: dict[str, list[float]]) -> None:
    while not stop.is_set():
        for path in paths:
            began = time.perf_counter()
            response = client.get(path)
            out.setdefault(path, []).append(time.perf_counter() - began)
            if response.status_code != 200:
                out.setdefault("errors", []).append(float(response.status_code))


def _page_loop(paths: list[str], stop: Any, results: Any) -> None:
    from django.test import Client

    out: dict[str, list[float]] = {}
    page_times(Client(), paths, stop, out)
    results.put(out)


def pages_during(paths: list[str], work: Callable[[], T]) -> tuple[dict[str, list[float]], T]:
    """Each page's times while `work` runs, the pages requested in a loop by a process of
    their own, as a site's workers are beside `manage.py archive` (forked: the settings and
    the fixed clock as here; the database connections closed first, so each process opens
    its own); and `work`'s result."""
    from django.db import connections

    connections.close_all()
    forked = multiprocessing.get_context("fork")
    stop, results = forked.Event(), forked.Queue()
    child = forked.Process(target=_page_loop, args=(paths, stop, results))
    child.start()
    try:
        value = work()
    finally:
        stop.set()
        out = results.get(timeout=120)
        child.join()
    return out, value


def quantiles(times: list[float]) -> str:
    if len(times) < 2:
        return "n/a"
    cuts = statistics.quantiles(times, n=100)
    return f"p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms ({len(times)} requests)"


def run(opts: argparse.Namespace, redis_url: str, database_url: str) -> None:
    os.environ["REDIS_URL"] = redis_url
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")
    os.environ.setdefault("DJANGO_DEBUG", "true")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    from articles.store import archive, clock, keys, services
    from articles.store.connection import get_connection
    from articles.store.selectors.rankings import top_page
    from bench import data
    from bench.memory_split import used

    setup_test_environment()
    settings.ARTICLES_ARCHIVE_AFTER = WEEK
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 0
    settings.ARTICLES_RATE_LIMITS = {"api": None, "api_user": None}
    call_command("migrate", verbosity=0)
    conn = get_connection()
    conn.flushall()
    conn.script_flush()
    empty = used(conn)
    now = time.time()
    spec = data.Spec(articles=opts.articles, group_size=opts.articles // 10, now=now)
    data.load_redis(conn, spec)
    comments = 0
    for article_id in range(1, opts.articles + 1, 10):
        posted = int(float(conn.hget(keys.article(article_id), "time")))
        for i in range(opts.comments):
            services.comment_post(
                article_id=article_id,
                user_id=1 + i,
                author_name=f"user{1 + i}",
                text=f"A comment {i} on sorted sets",
                now=posted + 60 + i,
            )
            comments += 1
    for pattern in ("voted:*", "voted_down:*", "comment_voted*"):
        found = list(conn.scan_iter(match=pattern, count=2000))
        for at in range(0, len(found), 1000):
            conn.delete(*found[at : at + 1000])
    n = opts.articles
    conn.script_flush()  # the scripts' cache is a constant, not the data's: left out
    before = used(conn) - empty
    split_before = families(conn)
    print(f"redis {conn.info('server')['redis_version']}; {n:,} articles, {comments:,} comments")
    parts_before = memory_parts(conn)
    print(
        f"before: used_memory {before:,} B = {before / n:,.0f} B per article (voter sets expired)"
    )
    print(f"  {parts_before}")

    later = now + WEEK + 60
    clock.fix(later)  # the pages' clock: every article closed
    times_before, _ = pages_during(list(PAGES), lambda: time.sleep(opts.seconds))

    conn.config_set("slowlog-log-slower-than", 0)  # every call: the job's own, timed
    conn.config_set("slowlog-max-len", 1_000_000)
    conn.slowlog_reset()
    batch, step = opts.batch or archive.BATCH, opts.step or archive.STEP

    def job() -> tuple[int, int, float, archive.Progress, float]:
        began = time.perf_counter()
        walked, released = archive.links_close(now=later)
        took_links = time.perf_counter() - began
        began = time.perf_counter()
        done = archive.archive(now=later, batch=batch, step=step)
        return walked, released, took_links, done, time.perf_counter() - began

    times_during, (walked, released, took_links, done, took) = pages_during([*PAGES, "/a/1/"], job)
    slow = conn.slowlog_get(1_000_000)
    conn.config_set("slowlog-log-slower-than", 10_000)
    conn.slowlog_reset()  # its entries (every call's arguments) are memory too
    conn.script_flush()
    after = used(conn) - empty
    split_after = families(conn)
    print(
        f"link release: {walked:,} closed articles, {released:,} entries in {took_links:.1f} s "
        f"= {walked / took_links:,.0f} articles/s"
    )
    print(
        f"archive: {done.archived:,} articles, {done.comments:,} comments in {took:.1f} s = "
        f"{done.archived / took:,.0f} articles/s ({done.batches} batches of {batch}, "
        f"{step} an archive.lua call)"
    )
    parts_after = memory_parts(conn)
    vm = parts_after["used_memory_vm_eval"] - parts_before["used_memory_vm_eval"]
    print(f"after: used_memory {after:,} B = {after / n:,.0f} B per article "
          f"(freed {(before - after) / n:,.0f} B per article); less the Lua VM's growth "
          f"({vm:,} B): {(after - vm) / n:,.0f} B per article")  # fmt: skip
    print(f"  {parts_after}")
    # A month on, the day's, week's and month's tops no longer hold them (each read trims
    # what aged out): what an archived article costs for the rest of its year, as most of
    # a year-old store's do.
    for period in ("day", "week", "month"):
        top_page(period, 0, 0, now=later + MONTH)
    conn.script_flush()
    settled = used(conn) - empty
    split_settled = families(conn)
    print(f"a month on: used_memory {settled:,} B = {settled / n:,.0f} B per article "
          f"(less the Lua VM's growth: {(settled - vm) / n:,.0f} B)")  # fmt: skip
    print("\n| family | MEMORY USAGE B/article before | after | a month on |")
    print("|---|---:|---:|---:|")
    for name in sorted(set(split_before) | set(split_after), key=lambda k: -split_before.get(k, 0)):
        was, now_is = split_before.get(name, 0) / n, split_after.get(name, 0) / n
        print(f"| {name} | {was:,.1f} | {now_is:,.1f} | {split_settled.get(name, 0) / n:,.1f} |")
    print("\n| page | before archiving | while archiving |")
    print("|---|---|---|")
    for path in PAGES:
        print(f"| {path} | {quantiles(times_before.get(path, []))} | "
              f"{quantiles(times_during.get(path, []))} |")  # fmt: skip
    errors = times_before.get("errors", []) + times_during.get("errors", [])
    print(f"non-200 answers: {len(errors)} {sorted(set(errors))}")

    def job(entry: dict[str, Any]) -> str | None:
        words = entry["command"].split(b" ")
        if words[0] != b"EVALSHA" or len(words) < 4:
            return None
        first = words[3]
        if first.startswith(b"comments_all:"):
            return "archive_comments.lua"
        if words[4:5] == [b"links:closed"]:  # its keys: time:, links:closed (a page: not)
            return "link_close.lua"
        return "archive.lua" if first == b"archive:" else None

    for name in ("link_close.lua", "archive.lua", "archive_comments.lua"):
        spent = sorted(int(e["duration"]) for e in slow if job(e) == name)
        if spent:
            print(f"{name}: {len(spent)} calls, p50 {spent[len(spent) // 2] / 1000:.2f} ms, "
                  f"p99 {spent[int(len(spent) * 0.99)] / 1000:.2f} ms, "
                  f"max {spent[-1] / 1000:.2f} ms (Redis-side, SLOWLOG)")  # fmt: skip
    others = sorted(int(e["duration"]) for e in slow if job(e) is None)
    over = sum(1 for d in others if d > 5000)
    print(
        f"other calls meanwhile (the pages'): {len(others)}, {over} over 5 ms, "
        f"max {others[-1] / 1000 if others else 0:.2f} ms"
    )
    clock.fix(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=10_000)
    parser.add_argument("--comments", type=int, default=3, help="on every tenth article")
    parser.add_argument("--batch", type=int, default=None, help="articles a database write")
    parser.add_argument("--step", type=int, default=None, help="articles an archive.lua call")
    parser.add_argument("--seconds", type=float, default=10.0, help="page loop before archiving")
    parser.add_argument("--server", type=Path, default=None, help="a redis-server binary")
    opts = parser.parse_args()
    from articles.operations.embedded import EmbeddedRedis
    from bench.servers import Postgres

    with tempfile.TemporaryDirectory(prefix="vs-arc-", dir="/tmp") as tmp:
        server = EmbeddedRedis(
            Path(tmp) / "redis",
            daemonize=False,
            binary=opts.server,
            extra_config='appendonly no\nsave ""\nenable-debug-command local\n',
        )
        (Path(tmp) / "redis").mkdir()
        server.start()
        cluster = Postgres(Path(tmp) / "pg")
        cluster.start()
        try:
            run(
                opts, f"{server.url}?db=0", f"postgresql://bench@/postgres?host={cluster.directory}"
            )
        finally:
            cluster.stop()
            server.stop()


if __name__ == "__main__":
    main()
