"""The top of a period, rebuilt (before) and kept by the writes (after): Redis time of
the read at 10k/100k/1M articles, the write cost added to post and vote, the backfill's
throughput, and whether any call took over 5 ms (SLOWLOG).

    python -m bench.rankings --articles 100000

Runs its own throwaway redis-server (the embedded binary, BASE_CONFIG). The articles are
bulk-loaded old-style (hashes, score:, time:, votes:; no period kept), their post times
spread evenly over the last 400 days, so the year holds 91 % of them, the month 7.5 %,
the week 1.75 %, the day 0.25 %. Times are Redis-side (SLOWLOG with threshold 0: each
script call's own duration), not wall-clock: the machine may be busy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

SPREAD = 400 * 86_400


def _setup(directory: Path) -> Any:
    from articles.operations.embedded import EmbeddedRedis

    server = EmbeddedRedis(directory, daemonize=False, extra_config='save ""\n')
    server.start()
    os.environ["REDIS_URL"] = f"{server.url}?db=0"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")
    os.environ.setdefault("DJANGO_DEBUG", "true")  # the development key: nothing is served
    import django

    django.setup()
    return server


def _load(conn: Any, articles: int, now: int) -> None:
    from articles.store import keys

    chunk = 5_000
    for first in range(1, articles + 1, chunk):
        ids = range(first, min(first + chunk, articles + 1))
        times = {i: now - SPREAD + (i * SPREAD) // articles for i in ids}
        nets = {i: (i * 7919) % 41 - 5 for i in ids}
        pipe = conn.pipeline(transaction=False)
        for i in ids:
            pipe.hset(keys.article(i), mapping={"time": times[i], "votes": max(nets[i], 0) + 1})
        pipe.zadd(keys.TIME, {keys.article(i): times[i] for i in ids})
        pipe.zadd(keys.SCORE, {keys.article(i): times[i] + 432 * nets[i] for i in ids})
        pipe.zadd(keys.VOTES, {keys.article(i): nets[i] for i in ids})
        pipe.execute()
    conn.set(keys.ARTICLE_IDS, articles)


class Slowlog:
    """Every command's Redis-side duration (µs), by the first word of its arguments."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        conn.config_set("slowlog-log-slower-than", 0)
        conn.config_set("slowlog-max-len", 100_000)
        conn.slowlog_reset()

    def take(self) -> list[tuple[str, int]]:
        entries = self.conn.slowlog_get(100_000)
        self.conn.slowlog_reset()
        out = []
        for entry in entries:
            command = entry["command"]
            command = command.decode(errors="replace") if isinstance(command, bytes) else command
            out.append((command.split(" ")[0].upper(), int(entry["duration"])))
        return out

    def scripts(self) -> list[int]:
        return [us for name, us in self.take() if name in ("EVALSHA", "EVAL")]


_RAW: Any = None  # a client with no socket timeout: the former rebuild at 1M takes seconds


def _read(period: str, now: float | None, page: int = 1) -> None:
    """top_page(), on a client that waits as long as Redis takes (the site's gives up at 1 s)."""
    from articles.store.selectors import rankings

    start = (page - 1) * 25
    rankings.top_page(period, start, start + 24, now=now, client=_RAW)


def run(articles: int, repeat: int, fill_step: int | None = None) -> dict[str, Any]:
    from articles.operations.audit import top_backfill
    from articles.store import keys, services
    from articles.store.connection import get_connection
    from articles.types import NewPost, Vote

    global _RAW
    conn = get_connection()
    socket = os.environ["REDIS_URL"].removeprefix("unix://").partition("?")[0]
    _RAW = redis.Redis(unix_socket_path=socket, socket_timeout=600)
    conn.flushall()
    now = int(time.time())
    began = time.perf_counter()
    _load(conn, articles, now)
    out: dict[str, Any] = {"articles": articles, "load_s": round(time.perf_counter() - began, 1)}
    periods = ("day", "week", "month", "year")
    out["sizes"] = {
        p: conn.zcount(
            keys.TIME, now - {"day": 1, "week": 7, "month": 30, "year": 365}[p] * 86_400, "+inf"
        )
        for p in periods
    }
    log = Slowlog(conn)

    before: dict[str, float] = {}
    for p in periods:  # not kept: the former rebuild, its cache dropped each time
        runs = []
        for _ in range(repeat if articles <= 100_000 or p != "year" else 1):
            conn.delete(keys.top(p))
            log.take()
            _read(p, None)
            runs.append(sum(log.scripts()))
        before[p] = statistics.median(runs)
    out["read_rebuild_us"] = before

    # the writes on the old-style store (no period kept: one HMGET more than before)
    posted = []
    log.take()
    for n in range(repeat * 10):
        posted.append(
            services.article_post(
                NewPost(user_id=1, poster_name="b", title=f"b{n}", link="", text="x")
            ).id
        )
    out["post_unkept_us"] = statistics.median(log.scripts())
    for n, article in enumerate(posted):
        services.article_vote(article_id=article, user_id=2 + n, direction=Vote.UP)
    out["vote_unkept_us"] = statistics.median(log.scripts())

    began = time.perf_counter()
    log.take()
    copied = top_backfill() if fill_step is None else top_backfill(step=fill_step)
    fill = log.scripts()
    out["backfill"] = {
        "copied": copied,
        "calls": len(fill),
        "redis_ms": round(sum(fill) / 1000, 1),
        "p50_call_us": sorted(fill)[len(fill) // 2],
        "p99_call_us": sorted(fill)[len(fill) * 99 // 100],
        "max_call_us": max(fill),
        "calls_over_5ms": sum(us > 5_000 for us in fill),
        "per_s_of_redis": round(copied / (sum(fill) / 1e6)),
        "wall_s": round(time.perf_counter() - began, 1),
    }

    after: dict[str, float] = {}
    for p in periods:
        runs = []
        for _ in range(repeat):
            log.take()
            _read(p, None)
            runs.append(sum(log.scripts()))
        after[p] = statistics.median(runs)
        log.take()
        _read(p, None, page=40)
        after[f"{p}_page40"] = sum(log.scripts())
    out["read_kept_us"] = after

    log.take()
    posted = [
        services.article_post(
            NewPost(user_id=1, poster_name="b", title=f"c{n}", link="", text="x")
        ).id
        for n in range(repeat * 10)
    ]
    out["post_kept_us"] = statistics.median(log.scripts())
    for n, article in enumerate(posted):
        services.article_vote(article_id=article, user_id=2 + n, direction=Vote.UP)
    out["vote_kept_us"] = statistics.median(log.scripts())

    # aging: a day later, the day's articles trimmed by reads in bounded calls
    log.take()
    _read("day", now + 86_400)
    aged = log.scripts()
    out["aging_read_day_later"] = {
        "calls": len(aged),
        "max_call_us": max(aged),
        "total_us": sum(aged),
    }
    conn.config_set("slowlog-log-slower-than", 5_000)
    conn.slowlog_reset()
    for p in periods:
        _read(p, None)
    out["slowlog_over_5ms_after"] = len(conn.slowlog_get(100))
    return out


def writes(articles: int, samples: int) -> dict[str, Any]:
    """Redis µs of post.lua and vote.lua (median, p90 of `samples` each) on a store of
    `articles`, kept (backfilled) when this code keeps periods. Needs only the services,
    so the same function measures the code before the change (copied into its checkout)."""
    from articles.store import services
    from articles.store.connection import get_connection
    from articles.types import NewPost, Vote

    conn = get_connection()
    conn.flushall()
    now = int(time.time())
    _load(conn, articles, now)
    try:
        from articles.operations.audit import top_backfill

        top_backfill()
        kept = True
    except ImportError:
        kept = False
    log = Slowlog(conn)
    posts, votes = [], []
    for n in range(samples):
        log.take()
        article = services.article_post(
            NewPost(user_id=1, poster_name="b", title=f"w{n}", text="x")
        ).id
        posts += log.scripts()
        services.article_vote(article_id=article, user_id=2, direction=Vote.UP)
        votes += log.scripts()

    def commands(write: Any) -> dict[str, int]:
        """The commands one write ran inside Redis (INFO commandstats): the work itself,
        which the machine's load does not change."""
        before = conn.info("commandstats")
        write()
        after = conn.info("commandstats")
        return {
            name.removeprefix("cmdstat_"): after[name]["calls"]
            - before.get(name, {}).get("calls", 0)
            for name in after
            if after[name]["calls"] != before.get(name, {}).get("calls", 0)
            and name not in ("cmdstat_info", "cmdstat_evalsha", "cmdstat_eval")
        }

    last = services.article_post(NewPost(user_id=1, poster_name="b", title="last", text="x")).id
    post_commands = commands(
        lambda: services.article_post(NewPost(user_id=1, poster_name="b", title="one", text="x"))
    )
    vote_commands = commands(
        lambda: services.article_vote(article_id=last, user_id=3, direction=Vote.UP)
    )

    def shown(values: list[int]) -> dict[str, int]:
        ordered = sorted(values)
        return {"p50": ordered[len(ordered) // 2], "p90": ordered[len(ordered) * 9 // 10]}

    return {
        "articles": articles,
        "kept": kept,
        "post_us": shown(posts),
        "vote_us": shown(votes),
        "post_commands": post_commands,
        "vote_commands": vote_commands,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--writes", type=int, default=0, help="only time N posts and votes")
    parser.add_argument("--fill-step", type=int, default=None, help="articles a backfill step")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vs-rank-", dir="/tmp") as tmp:
        server = _setup(Path(tmp))
        try:
            for n in opts.articles:
                print(
                    writes(n, opts.writes) if opts.writes else run(n, opts.repeat, opts.fill_step),
                    flush=True,
                )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
