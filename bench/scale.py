"""No Redis call grows with the data (issue 21): at each store size, every listing, top of
every period, group, site, user page, search, a 2,000-comment thread, the writes (votes,
posts, edits, deletes, comments) and the periodic jobs, each driven through the store's
own services and selectors, with every Redis call's own duration taken from SLOWLOG
(threshold 0; a script is one call, its own commands are in its duration and not counted
again): per operation the slowest call (µs, command or script) and the calls over 5 ms;
then a mixed load from several threads with SLOWLOG at 1 ms; and the ratio of the
smallest to the largest store's page time (Redis-side p50) for listings and top pages.

    python -m bench.scale --articles 10000 100000 1000000 [--comments 2000]

Runs its own throwaway redis-server (bench.servers, the project's BASE_CONFIG). The data
is bench/data.py's (load_redis: voter sets, groups, search and site indexes, the kept
top of each period); the thread is bench/comments.py's (post_thread, through the
services). Figures are Redis-side, steadier than wall times on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from bench.scale_ops import LISTINGS, SLOW_US, Op, concurrent, operations

# Commands whose work is bounded by one item or one batch, never by the store: one over
# 5 ms is the machine pausing Redis (the load average says so).
BOUNDED = frozenset({
    "SISMEMBER", "SMISMEMBER", "HMGET", "HGET", "HGETALL", "HEXISTS", "TTL", "PTTL", "TYPE",
    "EXISTS", "SCARD", "ZCARD", "ZSCORE", "ZMSCORE", "GET", "SET", "INCR", "EXPIRE",
    "EXPIREAT", "ZADD", "SADD", "SREM", "ZREM", "HSET", "HINCRBY", "SINTER", "SSCAN", "HSCAN",
    "ZSCAN", "SCAN",
})  # fmt: skip
MAX_LEN = 200_000  # SLOWLOG entries kept: an operation's calls all fit
FLAT = 1.5  # the goal: a listing's page at the largest store within 1.5x the smallest's


@dataclass
class Measured:
    name: str
    kind: str
    slowest_us: int = 0
    slowest: str = ""
    page_us: list[int] = field(default_factory=list)  # Redis µs of each run, all its calls
    over: list[tuple[int, str]] = field(default_factory=list)  # calls over SLOW_US
    floor_us: int = 0  # calls shorter were not logged (a job's thousands of calls)
    run_max: list[int] = field(default_factory=list)  # each run's slowest call

    @property
    def typical_max_us(self) -> float:
        """The median of the runs' slowest calls: a pause of a busy machine in one run
        is not the operation's cost."""
        return statistics.median(self.run_max) if self.run_max else 0.0

    @property
    def grows(self) -> list[tuple[int, str]]:
        """The calls over 5 ms whose command's work could grow with the data: one of
        bounded work (SISMEMBER, HMGET, ...) over 5 ms was the machine pausing Redis."""
        return [(us, name) for us, name in self.over if name not in BOUNDED]

    @property
    def p50_us(self) -> float:
        return statistics.median(self.page_us) if self.page_us else 0.0


# The client address SLOWLOG gives a command a script or function ran (its fake client):
# "" on 8.2, "?:0" on 6.2 and 7.0; a connection's is host:port or its socket's path:0.
SCRIPT_CLIENT = frozenset({b"", b"?:0", "", "?:0"})


class Slowlog:
    """Every top-level call's Redis-side duration (µs), named: a script by its name, else
    the command's first word. SLOWLOG logs each command a script runs as well (6.2, 7.0
    and 8.2 checked), before the script's own entry, whose duration already holds them:
    told apart by their client address, they are not counted as calls. The queued
    commands of a MULTI/EXEC are logged with the client's own address (EXEC is not):
    each counts as a call."""

    def __init__(self, conn: Any, threshold_us: int = 0) -> None:
        from articles.store import scripts

        self.conn = conn
        self.names = {
            s.sha: s.name for s in vars(scripts).values() if isinstance(s, scripts.TimedScript)
        }
        for script in vars(scripts).values():  # loaded once, as a running site has them
            if isinstance(script, scripts.TimedScript):
                conn.script_load(script.script)
        conn.config_set("slowlog-max-len", MAX_LEN)
        self.threshold(threshold_us)

    def threshold(self, us: int) -> None:
        self.conn.config_set("slowlog-log-slower-than", us)
        self.conn.slowlog_reset()

    def take(self) -> list[tuple[int, str]]:
        entries = self.conn.slowlog_get(MAX_LEN)
        self.conn.slowlog_reset()
        if len(entries) >= MAX_LEN:
            raise RuntimeError("SLOWLOG overflowed: the slowest call may be lost")
        out = []
        for entry in entries:
            if entry.get("client_address") in SCRIPT_CLIENT:
                continue  # a script's own command: in the script's duration
            command = entry["command"]  # bytes: a link's digest is binary
            if isinstance(command, bytes):
                command = command.decode(errors="replace")
            words = command.split(" ")
            name = words[0].upper()
            if name in ("SLOWLOG", "CONFIG"):
                continue
            if name in ("EVALSHA", "EVAL", "EVALSHA_RO") and len(words) > 1:
                name = self.names.get(words[1], name)
            out.append((int(entry["duration"]), name))
        return out


def measure(op: Op, log: Slowlog, reps: int) -> Measured:
    """`op` run `reps` times (once if not `repeat`): its calls' durations. A job's many
    thousands of calls would overflow the log at threshold 0: it logs from `op.floor_us`."""
    found = Measured(op.name, op.kind, floor_us=op.floor_us)
    for _ in range(reps if op.repeat else 1):
        log.threshold(op.floor_us)
        op.fn()
        calls = log.take()
        log.threshold(0)
        found.page_us.append(sum(us for us, _ in calls))
        found.run_max.append(max((us for us, _ in calls), default=0))
        for us, name in calls:
            if us > found.slowest_us:
                found.slowest_us, found.slowest = us, name
            if us > SLOW_US:
                found.over.append((us, name))
    return found


def load(conn: Any, articles: int, votes: int, now: float) -> tuple[Any, float]:
    from bench import data

    spec = data.Spec(articles=articles, group_size=articles // 10, now=now, votes_per_article=votes)
    conn.flushdb()
    began = time.perf_counter()
    data.load_redis(conn, spec)
    return spec, time.perf_counter() - began


def run_size(
    conn: Any,
    articles: int,
    *,
    comments: int,
    votes: int,
    reps: int,
    threads: int,
    seconds: float,
    audit_max: int,
    spec: Any = None,
    echo: bool = False,
) -> dict[str, Any]:
    """Load `articles` (or, given the `spec` of a store already loaded, use it), measure
    every operation; the figures of this size. SLOWLOG's settings are put back after."""
    now = time.time()
    took = 0.0
    if spec is None:
        spec, took = load(conn, articles, votes, now)
    saved = conn.config_get("slowlog-*")
    try:
        log = Slowlog(conn)
        ops = operations(conn, spec, comments, now)
        if articles > audit_max:
            ops = [op for op in ops if not op.name.startswith("audit")]

        def timed(op: Op) -> Measured:
            found = measure(op, log, reps)
            if echo:  # as it goes: a long job at the end loses nothing measured before it
                print(f"| {articles:,} | {found.name} | {_cell(found)} |", flush=True)
            return found

        measured = [timed(op) for op in ops if not op.last]
        memory_mb = round(conn.info("memory")["used_memory"] / 2**20)
        mixed = concurrent(conn, log, spec, seconds, threads) if threads else None
        if echo:
            print(f"| {articles:,} | mixed load | {mixed} |", flush=True)
        measured += [timed(op) for op in ops if op.last]
    finally:
        for name, value in saved.items():
            conn.config_set(name, value)
    return {
        "articles": articles,
        "load_s": round(took, 1),
        "memory_mb": memory_mb,
        "measured": measured,
        "concurrent": mixed,
    }


def table(results: list[dict[str, Any]]) -> list[str]:
    sizes = [r["articles"] for r in results]
    head = " | ".join(f"{n:,}: slowest call µs (runs' median) / p50 of a run, µs" for n in sizes)
    lines = [f"| operation | {head} |", "|---" * (1 + len(sizes)) + "|"]
    by_size = [{m.name: m for m in r["measured"]} for r in results]
    for m in results[-1]["measured"] if results else []:
        cells = []
        for found in by_size:
            x = found.get(m.name)
            cells.append(_cell(x) if x else "not run")
        lines.append(f"| {m.name} | {' | '.join(cells)} |")
    return lines


def _cell(x: Measured) -> str:
    if x.floor_us and not x.slowest_us:
        return f"all calls < {x.floor_us:,}"
    total = f"calls from {x.floor_us:,} µs: {x.p50_us:,.0f}" if x.floor_us else f"{x.p50_us:,.0f}"
    typical = f" (runs: {x.typical_max_us:,.0f})" if len(x.run_max) > 1 else ""
    flag = " **over 5 ms**" if x.grows else " (pause)" if x.over else ""
    return f"{x.slowest_us:,} {x.slowest}{typical} / {total}{flag}"


def flatness(results: list[dict[str, Any]]) -> list[tuple[str, float]]:
    """Each listing's page p50 (Redis µs) at the largest store over the smallest's."""
    if len(results) < 2:
        return []
    small = {m.name: m for m in results[0]["measured"]}
    out = []
    for m in results[-1]["measured"]:
        base = small.get(m.name)
        if m.kind == LISTINGS and base and base.p50_us:
            out.append((m.name, m.p50_us / base.p50_us))
    return out


def _over(measured: list[Measured]) -> str:
    """The calls over 5 ms of work that may grow, by operation: how many and the slowest."""
    parts = [
        f"{m.name}: {len(m.grows)} (slowest {max(m.grows)[0]:,} µs {max(m.grows)[1]})"
        for m in measured
        if m.grows
    ]
    return "; ".join(parts) or "none"


def summary(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        f"- {r['articles']:,} articles: loaded in {r['load_s']} s, {r['memory_mb']:,} MB; "
        f"slowest call {max((m.slowest_us for m in r['measured']), default=0):,} µs; calls "
        f"over 5 ms: {_over(r['measured'])}; and "
        f"{sum(len(m.over) - len(m.grows) for m in r['measured'])} of bounded work "
        "(the machine pausing Redis)"
        for r in results
    ]
    for r in results:
        c = r["concurrent"]
        if c:
            lines.append(
                f"- {r['articles']:,} articles under a mixed load ({c['operations']:,} "
                f"operations): {c['calls_over_1ms']} calls over 1 ms, slowest "
                f"{c['slowest_us']:,} µs {c['slowest']}; over 5 ms: {c['over_5ms'] or 'none'}"
            )
    return lines


def run(report: Any, opts: Any, aliases: tuple[str, str] = ("bench_small", "bench_large")) -> None:
    """bench.run's part, on its growth stores (bench_small, bench_large: --small and
    --large articles, loaded by bench.data) as they are: the thread and the writes are
    added to them, so it runs after every part that reads them."""
    from django.test import override_settings
    from django_redis import get_redis_connection

    from bench import data

    results = []
    for alias, n in zip(aliases, (opts.small, opts.large), strict=True):
        spec = data.Spec(articles=n, group_size=n // 10, now=time.time())
        with override_settings(ARTICLES_REDIS_ALIAS=alias):
            results.append(
                run_size(
                    get_redis_connection(alias), n, comments=opts.scale_comments,
                    votes=opts.large_votes, reps=max(3, opts.reps), threads=4,
                    seconds=max(1.0, opts.seconds * 10), audit_max=opts.small, spec=spec,
                )
            )  # fmt: skip
    report.section(
        "Scale: the slowest Redis call of each operation",
        [
            "Each operation through the store's services and selectors at both growth "
            "stores, every Redis call's own duration from SLOWLOG (threshold 0; a "
            "script is one call, the commands it runs are in its duration, not counted "
            "again): the slowest call (µs, script or command) / the p50 of all its "
            "calls' sum; then "
            "a mixed load from 4 threads (SLOWLOG at 1 ms). python -m bench.scale runs it "
            "alone (10k, 100k, 1M).",
            "",
            *table(results),
            "",
            *summary(results),
        ],
    )
    over = sum(len(m.grows) for m in results[-1]["measured"])
    report.goal(f"Redis calls over 5 ms at {opts.large:,} articles", over, 0, unit="",
                at_most=True)  # fmt: skip
    worst = max(flatness(results), key=lambda x: x[1], default=None)
    report.goal(
        f"listing page, Redis p50, {opts.large:,} vs {opts.small:,} articles (worst: "
        f"{worst[0] if worst else '-'})",
        worst[1] if worst else None, FLAT, at_most=True,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--comments", type=int, default=2_000)
    parser.add_argument("--votes", type=int, default=2, help="votes per article (load time)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0, help="the mixed load's length")
    parser.add_argument("--audit-max", type=int, default=100_000, help="audit up to this size")
    opts = parser.parse_args()
    from bench import scratch_site, servers

    directory = scratch_site("vs-scale-")
    import django

    django.setup()
    server = servers.redis_server(directory / "redis")
    server.start()
    from articles.store.connection import get_connection

    results = []
    try:
        for n in opts.articles:
            load_before = os.getloadavg()
            results.append(
                run_size(
                    get_connection(), n, comments=opts.comments, votes=opts.votes,
                    reps=opts.reps, threads=opts.threads, seconds=opts.seconds,
                    audit_max=opts.audit_max, echo=True,
                )
            )  # fmt: skip
            print(f"# {n:,} done; load average before {load_before}, after {os.getloadavg()}")
            print("\n".join(table(results[-1:])), flush=True)
    finally:
        server.stop()
        servers.remove(directory)
    print("\n".join(["", *table(results), "", *summary(results)]))
    for name, ratio in flatness(results):
        print(f"| {name} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
