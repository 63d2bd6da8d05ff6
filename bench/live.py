"""The live endpoint's benchmark (issue 25): gunicorn with ONE uvicorn worker
(gunicorn.live.conf.py) serving votesite.asgi on a throwaway Redis, and, from this process,
raw asyncio sockets as the browsers' EventSources.

    python -m bench.live [--smoke] [--out docs/performance.md]   # also part of bench.run

(a) Idle: opens --idle streams on an article that gets no event, each from a loopback
    address of its own (the endpoint caps streams per address), holds them over two
    heartbeats, and checks every one is still open and was sent a heartbeat; the worker's
    resident memory before and after gives the memory per connection.
(b) Fan-out: --clients streams on one article; a separate process (the voter, through the
    store's vote service) casts --votes up-votes at --rate a second; each latency runs from
    just before a vote's call to a client's receipt of its event (time.monotonic, one clock
    for every process of the machine): p50 and p99 over every (vote, client).
The worker reaches Redis over TCP and this process over the unix socket, so CLIENT LIST
tells the worker's connections apart.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.live_clients import close_all, open_many
from bench.report import LIVE, Report, log

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Sizes:
    idle: int = 2_000
    clients: int = 1_000
    votes: int = 100
    rate: float = 10.0  # votes a second
    heartbeat: float = 5.0  # seconds, the endpoint's ARTICLES_LIVE_HEARTBEAT_SECONDS here

    @classmethod
    def smoke(cls) -> Sizes:
        return cls(idle=40, clients=20, votes=5, rate=10.0, heartbeat=1.0)


def status(pid: int, name: str) -> int:
    """A figure of /proc/<pid>/status (VmRSS in KiB, Threads)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {name} for {pid}")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def raise_open_files() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


@dataclass
class Site:
    port: int
    env: dict[str, str]  # the worker's; the voter's is the same with REDIS_URL on the socket
    socket: Path
    worker: int
    articles: list[int]
    cpu: Callable[[], float]  # the worker's CPU seconds so far


@contextlib.contextmanager
def site(sizes: Sizes) -> Iterator[Site]:
    """Redis (unix socket and TCP), two articles (one quiet, one voted on) and the live
    endpoint's gunicorn with one worker, until the block ends."""
    from bench import servers

    directory = Path(tempfile.mkdtemp(prefix="vs-live-", dir="/tmp"))
    (directory / "var").mkdir()
    tcp = servers.free_port()
    redis_server = servers.redis_server(directory / "redis", port=tcp)
    sock = directory / "redis" / "redis.sock"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "REDIS_"))},
        "DJANGO_SETTINGS_MODULE": "bench.live_settings",
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "bench-" + "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{directory / 'db.sqlite3'}",
        "REDIS_URL": f"redis://127.0.0.1:{tcp}/0",
        "REDIS_CACHE_URL": f"redis://127.0.0.1:{tcp}/1",
        "VOTESITE_VAR_DIR": str(directory / "var"),
        "EMAIL_DISABLED": "true",
        "BENCH_LIVE_HEARTBEAT": str(sizes.heartbeat),
        "HOME": str(directory),  # gunicorn's control socket
        "PYTHONPATH": str(ROOT),
    }
    gunicorn = servers.Gunicorn(
        servers.free_port(),
        env,
        workers=1,
        app="votesite.asgi:application",
        log=directory / "gunicorn.log",
        config="gunicorn.live.conf.py",
        ready="/healthz/live",
    )
    try:
        redis_server.start()
        articles = json.loads(_voter(env, sock, "setup").stdout)
        gunicorn.start(timeout=60)
        (worker,) = gunicorn.worker_stats()
        yield Site(gunicorn.port, env, sock, worker, articles, gunicorn.worker_cpu)
    finally:
        gunicorn.stop()
        redis_server.stop()
        servers.remove(directory)


def _voter(env: dict[str, str], sock: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**env, "REDIS_URL": f"unix://{sock}?db=0", "REDIS_CACHE_URL": f"unix://{sock}?db=1"}
    command = [sys.executable, "-m", "bench.live", "--voter", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"the voter failed: {done.stderr[-2000:]}")
    return done


def voter(args: list[str]) -> None:
    """The voter process: `setup` posts the two articles and prints their ids; `vote A N R`
    casts N up-votes on A at R a second, printing [net after it, monotonic time before it]."""
    import django

    django.setup()
    from articles.store.services import article_post, article_vote
    from articles.types import NewPost, Vote

    if args[0] == "setup":
        posts = [NewPost(user_id=1, poster_name="bench", title=f"Live bench {n}",
                         link=f"https://live{n}.example.org/")
                 for n in (1, 2)]  # fmt: skip
        print(json.dumps([article_post(post).id for post in posts]))
        return
    article, count, rate = int(args[1]), int(args[2]), float(args[3])
    sent = []
    start = time.monotonic()
    for number in range(count):
        wait = start + number / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        before = time.monotonic()
        voted = article_vote(article_id=article, user_id=10_000 + number, direction=Vote.UP)
        sent.append((voted.votes - voted.downvotes, before))
    print(json.dumps(sent))


def _own_cpu() -> float:
    """This process's CPU seconds (the clients'; the voter's is its own process's)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def redis_clients(sock: Path) -> list[dict[str, str]]:
    import redis

    with redis.Redis(unix_socket_path=str(sock)) as conn:
        return [c for c in conn.client_list() if c["addr"].startswith("127.0.0.1:")]


async def idle_part(found: Site, sizes: Sizes) -> dict[str, float]:
    quiet = found.articles[0]
    warm = await open_many(found.port, f"article={quiet}", 10, group=3)
    await close_all(warm)  # the hub started, the code paths warm
    await asyncio.sleep(1)
    before = status(found.worker, "VmRSS")
    t0 = time.monotonic()
    streams = await open_many(found.port, f"article={quiet}", sizes.idle, group=1)
    took = time.monotonic() - t0
    log(f"live: {len(streams)} idle streams open in {took:.1f} s")
    await asyncio.sleep(2.2 * sizes.heartbeat)
    after = status(found.worker, "VmRSS")
    threads = status(found.worker, "Threads")
    clients = redis_clients(found.socket)
    open_ = sum(not s.ended for s in streams)
    beating = sum(s.pings >= 1 for s in streams if not s.ended)
    await close_all(streams)
    return {
        "idle": sizes.idle,
        "open_s": took,
        "held": open_,
        "beating": beating,
        "min_pings": min((s.pings for s in streams), default=0),
        "rss_before_kib": before,
        "rss_after_kib": after,
        "per_stream_kib": (after - before) / max(1, sizes.idle),
        "threads": threads,
        "redis_connections": len(clients),
        "redis_hub": sum(c.get("name") == "votesite-live-hub" for c in clients),
        "redis_blocked": sum(c.get("cmd", "").startswith("xread") for c in clients),
    }


async def fanout_part(found: Site, sizes: Sizes) -> dict[str, float]:
    voted = found.articles[1]
    streams = await open_many(found.port, f"article={voted}", sizes.clients, group=2)
    log(f"live: {len(streams)} clients on article {voted}; voting")
    loop = asyncio.get_running_loop()
    args = ("vote", str(voted), str(sizes.votes), str(sizes.rate))
    cpu, own = found.cpu(), _own_cpu()
    done = await loop.run_in_executor(None, lambda: _voter(found.env, found.socket, *args))
    await asyncio.sleep(1.0)
    cpu, own = found.cpu() - cpu, _own_cpu() - own
    sent = json.loads(done.stdout)
    latencies, missing = [], 0
    spread = []  # per vote: its first client's receipt to its last's
    for net, before in sent:
        times = [s.votes[net] for s in streams if net in s.votes]
        missing += len(streams) - len(times)
        latencies.extend((at - before) * 1000 for at in times)
        if times:
            spread.append((max(times) - min(times)) * 1000)
    ended = sum(s.ended for s in streams)
    duplicates = sum(s.duplicates for s in streams)
    await close_all(streams)
    return {
        "clients": sizes.clients,
        "votes": len(sent),
        "rate": sizes.rate,
        "p50_ms": percentile(latencies, 50) if latencies else float("nan"),
        "p99_ms": percentile(latencies, 99) if latencies else float("nan"),
        "max_ms": max(latencies, default=float("nan")),
        "spread_ms": percentile(spread, 50) if spread else float("nan"),
        "cpu_ms_per_vote": cpu * 1000 / max(1, len(sent)),
        "clients_cpu_ms_per_vote": own * 1000 / max(1, len(sent)),
        "missing": missing,
        "duplicates": duplicates,
        "dropped": ended,
    }


async def measure(sizes: Sizes) -> dict[str, dict[str, float]]:
    with site(sizes) as found:
        idle = await idle_part(found, sizes)
        fanout = await fanout_part(found, sizes)
    return {"idle": idle, "fanout": fanout}


def _loop_factory():  # uvloop's, else asyncio's
    with contextlib.suppress(ImportError):
        import uvloop

        return uvloop.new_event_loop
    return None


def run(report: Report, sizes: Sizes) -> dict[str, dict[str, float]]:
    """Measure and add the Live section and its goals to `report` (its block: LIVE)."""
    limit = raise_open_files()
    if limit < sizes.idle + sizes.clients + 200:
        raise RuntimeError(f"open files limited to {limit}: raise `ulimit -n`")
    load_before = os.getloadavg()[0]
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        figures = runner.run(measure(sizes))
    load_after = os.getloadavg()[0]
    idle, fan = figures["idle"], figures["fanout"]
    report.part = LIVE
    report.section("Live", [
        "One gunicorn worker of the live endpoint (gunicorn.live.conf.py: uvicorn, httptools, "
        "uvloop) serving votesite.asgi on a throwaway Redis; the clients are raw asyncio "
        "sockets in the benchmark's process (uvloop), each stream from a loopback address of "
        "its own; votes are cast by a separate process through the store's vote service "
        f"(bench/live.py). Heartbeat every {sizes.heartbeat:g} s here (15 s by default). "
        f"Load average {load_before:.2f} before, {load_after:.2f} after.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| idle streams opened (100 connecting at a time) | {idle['idle']:,} in "
        f"{idle['open_s']:.1f} s |",
        f"| still open after {2.2 * sizes.heartbeat:g} s, each with a heartbeat | "
        f"{idle['held']:,.0f} open, {idle['beating']:,.0f} with heartbeats |",
        f"| worker memory (RSS) before, with them | {idle['rss_before_kib'] / 1024:.1f} MiB, "
        f"{idle['rss_after_kib'] / 1024:.1f} MiB |",
        f"| memory per idle stream; the worker's threads with them | "
        f"{idle['per_stream_kib']:.1f} KiB; {idle['threads']:.0f} |",
        f"| the worker's Redis connections with them open (of them the hub's, blocked in "
        f"XREAD) | {idle['redis_connections']:.0f} ({idle['redis_hub']:.0f}, "
        f"{idle['redis_blocked']:.0f}) |",
        f"| fan-out: vote -> {fan['clients']:,.0f} clients, {fan['votes']:.0f} votes at "
        f"{fan['rate']:g}/s: p50, p99, max | {fan['p50_ms']:.1f} ms, {fan['p99_ms']:.1f} ms, "
        f"{fan['max_ms']:.1f} ms |",
        f"| a vote's first client to its last (median); CPU per vote: the worker's, the "
        f"clients' | {fan['spread_ms']:.1f} ms; {fan['cpu_ms_per_vote']:.1f} ms, "
        f"{fan['clients_cpu_ms_per_vote']:.1f} ms |",
        f"| events missing, duplicated; clients dropped | {fan['missing']:.0f}, "
        f"{fan['duplicates']:.0f}; {fan['dropped']:.0f} |",
    ])  # fmt: skip
    held = idle["held"] if idle["beating"] == idle["held"] else idle["beating"]
    report.goal("live: idle streams one worker holds, each with heartbeats", held, 2000, "")
    p99 = None if fan["missing"] else round(fan["p99_ms"], 1)
    report.goal("live: vote -> 1,000 clients, p99 (ms)", p99, 250, "", at_most=True)
    return figures


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--voter"]:
        voter(argv[1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny numbers")
    parser.add_argument("--idle", type=int)
    parser.add_argument("--clients", type=int)
    parser.add_argument("--votes", type=int)
    parser.add_argument("--rate", type=float)
    parser.add_argument("--heartbeat", type=float)
    parser.add_argument("--out", type=Path, help="rewrite this page's live block")
    a = parser.parse_args(argv)
    sizes = Sizes.smoke() if a.smoke else Sizes()
    for name in ("idle", "clients", "votes", "rate", "heartbeat"):
        if getattr(a, name) is not None:
            setattr(sizes, name, getattr(a, name))
    report = Report()
    run(report, sizes)
    if a.out:
        from bench.report import write_report

        write_report(a.out, report.markdown(LIVE), LIVE)
        log(f"report written to {a.out} ({LIVE})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
