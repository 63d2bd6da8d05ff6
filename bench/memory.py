"""Redis memory per article and per vote, measured as `INFO memory` deltas in an empty
database while the rest of the server is idle, plus `MEMORY USAGE` of sample keys."""

from __future__ import annotations

import time

from articles import validation
from articles.store import keys
from bench import data


def run(report, opts) -> None:
    from django_redis import get_redis_connection

    conn = get_redis_connection("bench_memory")
    conn.flushdb()
    n = 10_000 if opts.articles >= 10_000 else 1_000
    extra_votes = 10
    now = int(time.time())
    first = now - int(data.SPAN)

    def used() -> int:
        time.sleep(0.05)
        return int(conn.info("memory")["used_memory"])

    def batched(write) -> int:
        before = used()
        for start in range(1, n + 1, 250):
            pipe = conn.pipeline(transaction=False)
            for article_id in range(start, min(start + 250, n + 1)):
                write(pipe, article_id)
            pipe.execute()
        return used() - before

    def link_of(article_id: int) -> str:
        return f"https://example.org/news/{article_id}/sorted-sets-and-pages"

    def posted(article_id: int) -> int:
        return first + article_id * int(data.SPAN) // n

    def article_hash(pipe, i: int) -> None:
        poster = 1 + i % data.POSTERS
        pipe.hset(
            keys.article(i),
            mapping={
                "title": data.title_of(i),
                "link": link_of(i),
                "text": "",
                "poster": keys.user(poster),
                "poster_name": f"user{poster}",
                "time": posted(i),
                "votes": 1,
                "downvotes": 0,
                "groups": "",
            },
        )

    def indexes(pipe, i: int) -> None:
        pipe.zadd(keys.SCORE, {keys.article(i): posted(i) + 432})
        pipe.zadd(keys.TIME, {keys.article(i): posted(i)})

    def lookups(pipe, i: int) -> None:
        link = link_of(i)
        pipe.hset(*keys.link_slot(validation.normalize_link(link)), i)
        pipe.zadd(keys.submitted(1 + i % data.POSTERS), {keys.article(i): posted(i)})

    def own_vote(pipe, i: int) -> None:
        pipe.sadd(keys.voted(i), keys.user(1 + i % data.POSTERS))
        pipe.expireat(keys.voted(i), posted(i) + data.WEEK)

    def more_votes(pipe, i: int) -> None:
        pipe.sadd(keys.voted(i), *[keys.user(100_000 + i * 13 + k) for k in range(extra_votes)])

    def usage(names) -> int:
        total = 0
        names = list(names)
        for start in range(0, len(names), 1_000):
            pipe = conn.pipeline(transaction=False)
            for name in names[start : start + 1_000]:
                pipe.memory_usage(name, samples=0)
            total += sum(u or 0 for u in pipe.execute())
        return total

    ids = range(1, n + 1)
    start_used = used()
    batched(article_hash)
    u_hash = usage(keys.article(i) for i in ids)
    batched(indexes)
    u_index = usage([keys.SCORE, keys.TIME])
    batched(lookups)
    buckets = {keys.link_slot(validation.normalize_link(link_of(i)))[0] for i in ids}
    u_lookup = usage([*buckets, *{keys.submitted(1 + i % data.POSTERS) for i in ids}])
    batched(own_vote)
    u_own = usage(keys.voted(i) for i in ids)
    d_all = used() - start_used
    batched(more_votes)
    u_votes = usage(keys.voted(i) for i in ids) - u_own
    encodings = {
        "article hash": conn.object("encoding", keys.article(1)),
        "score:": conn.object("encoding", keys.SCORE),
        "voted:<id>": conn.object("encoding", keys.voted(1)),
    }
    voted_usage = conn.memory_usage(keys.voted(1), samples=0)
    conn.flushdb()

    per_hash, per_index, per_lookup = u_hash / n, u_index / n, u_lookup / n
    per_own = u_own / n
    per_vote = u_votes / (n * extra_votes)
    article_core = per_hash + per_index
    article_all = article_core + per_lookup + per_own
    enc = ", ".join(f"{k} {keys.text(v)}" for k, v in encodings.items())

    def size(b: float) -> str:
        return f"{b / 2**20:,.1f} MiB" if b < 2**30 else f"{b / 2**30:,.2f} GiB"

    capacity = []
    for label, per_day, votes_per_day in (
        ("1,000 articles/day, 100,000 votes/day", 1_000, 100_000),
        ("100x: 100,000 articles/day, 10 M votes/day", 100_000, 10_000_000),
    ):
        week_articles = 7 * per_day
        week_votes = 7 * votes_per_day
        week = week_articles * article_all + week_votes * per_vote
        year = 365 * per_day * (article_core + per_lookup)
        capacity.append(
            f"| {label} | {week_articles:,} articles, {week_votes:,} votes | {size(week)} | "
            f"+ {size(year)} of closed articles per year |"
        )
    report.section(
        "Memory (Redis)",
        [
            f"`MEMORY USAGE ... SAMPLES 0` (key, value and the key's dict entry) summed over "
            f"{n:,} articles with 60-character titles in an empty database (encodings: {enc}). "
            f"Cross-check: INFO used_memory grew {d_all / n:.0f} B per article for all of the "
            "first five rows (it also holds the keyspace tables and expiry entries).",
            "",
            "| what | bytes |",
            "|---|---|",
            f"| article hash (ziplist), per article | {per_hash:.0f} |",
            f"| score: + time: entries, per article | {per_index:.0f} |",
            f"| **hash + index entries, per article** | **{article_core:.0f}** |",
            f"| links: + submitted:<pk> entries, per article | {per_lookup:.0f} |",
            f"| voted:<id> set with the poster's own vote (key, expiry), per article | "
            f"{per_own:.0f} |",
            f"| everything of one article | {article_all:.0f} |",
            f"| each further vote (a member `user:<pk>` of a voter set) | {per_vote:.0f} |",
            f"| MEMORY USAGE of a voter set of {extra_votes + 1} | {voted_usage} |",
            "",
            "Capacity: voter sets expire when voting closes, so a week of votes is the "
            "steady state; article hashes and index entries stay.",
            "",
            "| load | one week | memory | then |",
            "|---|---|---|---|",
            *capacity,
        ],
    )
    report.goal(
        "memory: bytes per article (hash + score: + time:)",
        article_core,
        450,
        unit="",
        at_most=True,
    )
    report.per_vote = per_vote  # type: ignore[attr-defined]
