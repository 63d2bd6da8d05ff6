"""A group's rankings, rebuilt (before: ZINTERSTORE of the group) and kept by the writes
(after): Redis time of the former rebuild, of the backfill (group_fill.lua), of kept reads,
of a vote sweep, the write cost the kept rankings add to a post into the group, a move
and a delete (against the same writes on a group not kept, which only UNLINK), and to a
vote on an article in 0, 1 or 3 kept groups.

    python -m bench.group_rankings --articles 10000 100000 [--span-days 400]

Runs its own throwaway redis-server (bench.rankings' setup). Articles are bulk-loaded
old-style (bench.rankings._load: hashes, score:, time:, votes:), post times spread over
--span-days (400: 1.75 % still open to votes; bench/data.py's 6.5 days: all open); every
tenth article is in the group (and its hash's `groups` field says so, as a post writes
it). Times are Redis-side (SLOWLOG at threshold 0).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import rankings

GROUP = "bench"
DAY = 86_400


def _shown(values: list[int]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return (
        f"{len(values)} calls, p50 {statistics.median(ordered):,.0f} µs, "
        f"max {ordered[-1]:,} µs, total {sum(ordered):,} µs"
    )


def _script_us(conn: Any, script: Any) -> list[int]:
    """The Redis µs of each call of `script` since the last take, SLOWLOG emptied."""
    entries = conn.slowlog_get(100_000)
    conn.slowlog_reset()
    sha = script.sha.encode() if isinstance(script.sha, str) else script.sha
    return [
        int(e["duration"])
        for e in entries
        if (e["command"] if isinstance(e["command"], bytes) else e["command"].encode()).split(b" ")[
            :2
        ]
        == [b"EVALSHA", sha]
    ]


def run(articles: int, span_days: float, samples: int) -> dict[str, str]:
    from articles.operations.audit import group_backfill
    from articles.store import keys, scripts, selectors, services
    from articles.store.connection import get_connection
    from articles.types import Actor, NewPost, Order, Vote

    conn = get_connection()
    conn.flushall()
    now = int(time.time())
    rankings.SPREAD = int(span_days * DAY)
    rankings._load(conn, articles, now)
    members = [keys.article(i) for i in range(10, articles + 1, 10)]
    for start in range(0, len(members), 5_000):
        conn.sadd(keys.group(GROUP), *members[start : start + 5_000])
    conn.hset(keys.GROUPS, GROUP, "")
    for start in range(0, len(members), 5_000):  # as a post into the group writes it
        pipe = conn.pipeline(transaction=False)
        for member in members[start : start + 5_000]:
            pipe.hset(member, "groups", GROUP)
        pipe.execute()
    log = rankings.Slowlog(conn)
    out: dict[str, str] = {"articles": f"{articles:,}", "group": f"{len(members):,}"}

    conn.zinterstore("bench:tmp", [keys.group(GROUP), keys.SCORE], aggregate="MAX")
    out["former rebuild (ZINTERSTORE)"] = _shown([us for n, us in log.take() if n == "ZINTERSTORE"])
    conn.delete("bench:tmp")
    log.take()

    group_backfill()
    out["backfill (group_fill.lua)"] = _shown(_script_us(conn, scripts.GROUP_FILL))
    for label, order, page in (("score, page 1", Order.SCORE, 1), ("time, deep", Order.TIME, 40)):
        times = []
        for _ in range(samples):
            selectors.group_article_list(name=GROUP, order=order, page=page)
            times += _script_us(conn, scripts.RANKING_PAGE)
        out[f"kept read, {label} (median of {samples})"] = f"{statistics.median(times):,.0f} µs"

    open_from = now - 7 * DAY
    voted = [m for m in members if float(conn.zscore(keys.TIME, m)) > open_from][:200]
    for n, member in enumerate(voted):
        services.article_vote(
            article_id=keys.article_id_of(member), user_id=9 + n, direction=Vote.UP
        )
    log.take()
    due = time.time() + 61
    selectors.group_article_list(name=GROUP, now=due)  # the sweep is due
    swept = _script_us(conn, scripts.RANKING_PAGE)
    out[f"read with a vote sweep due ({len(voted)} voted)"] = _shown(swept)
    running = []  # the next reads, while that sweep may still run
    for n in range(samples):
        selectors.group_article_list(name=GROUP, now=due + 1 + n)
        running.append(sum(_script_us(conn, scripts.RANKING_PAGE)))
    out[f"read while the sweep runs, ranking µs a read (next {samples})"] = _shown(running)
    each = []  # every read a minute on: a sweep always due or running (bench.scale_ops')
    for n in range(samples):
        selectors.group_article_list(name=GROUP, now=due + 61 * (n + 1))
        each.append(sum(_script_us(conn, scripts.RANKING_PAGE)))
    out[f"read a minute on, ranking µs a read ({samples} reads)"] = _shown(each)
    close = []  # reads 1 ms apart while a sweep runs: they share its paced steps
    for n in range(samples):
        selectors.group_article_list(name=GROUP, now=due + 61 * (samples + 1) + n / 1000)
        close.append(sum(_script_us(conn, scripts.RANKING_PAGE)))
    out[f"reads 1 ms apart, a sweep due, ranking µs a read ({samples} reads)"] = _shown(close)
    out.update(_vote_costs(conn, members, samples, log))

    staff = Actor(pk=1, name="bench", is_staff=True)
    for kept in (False, True):
        if not kept:
            conn.hdel(keys.GROUP_RANKS, GROUP)
        else:
            group_backfill()
        posts, moves, deletes = [], [], []
        for n in range(samples):
            log.take()
            article = services.article_post(
                NewPost(user_id=1, poster_name="b", title=f"w{kept}{n}", text="x", groups=(GROUP,))
            ).id
            posts += _script_us(conn, scripts.POST)
            services.article_groups_update(article_id=article, actor=staff, remove=[GROUP])
            moves += _script_us(conn, scripts.GROUPS_UPDATE)
            services.article_groups_update(article_id=article, actor=staff, add=[GROUP])
            log.take()
            services.article_delete(article_id=article, actor=staff)
            deletes += _script_us(conn, scripts.DELETE)
        state = "kept" if kept else "not kept (the former UNLINK)"
        out[f"post into the group, {state}"] = f"p50 {statistics.median(posts):,.0f} µs"
        out[f"move out of the group, {state}"] = f"p50 {statistics.median(moves):,.0f} µs"
        out[f"delete, {state}"] = f"p50 {statistics.median(deletes):,.0f} µs"
    return out


def _vote_costs(conn: Any, members: list[str], samples: int, log: Any) -> dict[str, str]:
    """The vote script's Redis µs on a fresh article in 0 to 3 kept groups (each as large
    as the bench group): what carrying the score into its groups' rankings adds."""
    from articles.operations.audit import group_backfill
    from articles.store import keys, scripts, services
    from articles.types import NewPost, Vote

    extra = [f"{GROUP}{n}" for n in (2, 3)]
    for name in extra:
        conn.hset(keys.GROUPS, name, "")
        for start in range(0, len(members), 5_000):
            conn.sadd(keys.group(name), *members[start : start + 5_000])
    group_backfill()
    out = {}
    for count in (0, 1, 3):
        article = services.article_post(
            NewPost(user_id=1, poster_name="b", title=f"v{count}", text="x",
                    groups=tuple([GROUP, *extra][:count]))
        ).id  # fmt: skip
        log.take()
        times = []
        for n in range(samples):
            services.article_vote(article_id=article, user_id=1_000 + n, direction=Vote.UP)
            times += _script_us(conn, scripts.VOTE)
        out[f"vote, article in {count} kept groups"] = _shown(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--span-days", type=float, default=400.0)
    parser.add_argument("--samples", type=int, default=50)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        server = rankings._setup(Path(directory))
        try:
            for n in options.articles:
                for key, value in run(n, options.span_days, options.samples).items():
                    print(f"| {n:,} | {key} | {value} |", flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
