"""Redis memory of the whole store by key family, per article, and the capacity it implies.

    python -m bench.memory_split                                   # embedded Redis (8.2)
    python -m bench.memory_split --server /usr/bin/redis-server    # any other redis-server

Runs its own throwaway redis-server (BASE_CONFIG, append-only file off: memory only) and
writes two stores with the benchmark's loader (bench/data.py: the keys post.lua and vote.lua
write, then the kept top of each period, votes:<period>, backfilled):

1. `--articles` (100,000) with 11 votes each: `INFO memory` used_memory per article
   all-in (grown from the empty server); `MEMORY USAGE <key> SAMPLES 0` summed over every
   key of each family (one SCAN of the keyspace), per article; and what deleting each
   family in turn gives back to used_memory ("freed by DEL": value, key, dict and expiry
   entries), less the keyspace's bucket arrays (DEBUG HTSTATS), a row of their own since
   they resize in powers of two whatever key crosses the line. MEMORY USAGE is an estimate:
   on 8.2 it overstates sets stored as hash tables (large postings: and voter sets) and both
   versions count 8 B a zset entry less than DEL frees; the freed column is the measured one.
2. `--vote-articles` (10,000) with `--votes` (100) each, the capacity load's votes per
   article with the benchmark's heavy tail: the voter sets' bytes per vote at that size
   (their encodings differ by size: listpack up to 128 members on 7.2+, else hash table).
3. `--comments` (50,000) on `--comment-articles` (5,000) of them, posted and voted on
   through the store's own services (comments_load): used_memory per comment all-in and
   what deleting each comment key family gives back, and what `--comments-per-day`
   (1,000,000: 10 an article at the capacity load) hold after a week and a year.

Then the link index's bytes per entry at a week's and a year's occupancy of its 4,096
buckets (a listpack up to 512 entries, a hash table past them), and the capacity at
`--per-day` articles and `--votes-per-day` votes a day, after a week and after a year:
voter sets expire a week after the post; the hash, score:/time:/votes:, submitted: and the
search index stay; links:<b> holds the open week's links (`manage.py archive`, hourly,
releases the closed articles' entries; the year's occupancy is what it would hold without);
votes:<period> holds the period's articles (a day, a week, 30 days, 365 days); bucket
arrays are the next power of two of the keys (and of the voter sets, for expiry). Figures
are used_memory: RSS adds the allocator's fragmentation. The article mix is the
benchmark's (bench/words.py), printed with the results.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

FAMILIES = (
    "article hashes",
    "score:",
    "time:",
    "votes:",
    "good:",
    "votes:day",
    "votes:week",
    "votes:month",
    "votes:year",
    "links:<b>",
    "submitted:<pk>",
    "voted:<id>",
    "voted_down:<id>",
    "postings:<word>",
    "comments",
    "others",
)
STAYS = ("article hashes", "score:", "time:", "votes:", "good:", "links:<b>", "submitted:<pk>")
VOTERS = ("voted:<id>", "voted_down:<id>")
PERIOD_DAYS = {"votes:day": 1, "votes:week": 7, "votes:month": 30, "votes:year": 365}


def family(key: str) -> str:
    if key.startswith("article:") and key != "article:":
        return "article hashes"
    if key in ("score:", "time:", "votes:", "good:") or key in PERIOD_DAYS:
        return key
    if key.startswith("links:"):
        return "links:<b>"
    for prefix, name in (
        ("submitted:", "submitted:<pk>"),
        ("voted:", "voted:<id>"),
        ("voted_down:", "voted_down:<id>"),
        ("postings:", "postings:<word>"),
    ):
        if key.startswith(prefix):
            return name
    if key.startswith(("comment", "replies", "user_comments:")):
        return "comments"
    return "others"


def used(conn: Any) -> int:
    while True:  # a lazy free (UNLINK-style DEL) still running would hide what it frees
        time.sleep(0.2)
        memory = conn.info("memory")
        if not int(memory.get("lazyfree_pending_objects", 0)):
            return int(memory["used_memory"])


def buckets(conn: Any) -> int:
    """Bytes of the keyspace's bucket arrays (main and expiry tables, both halves while
    rehashing): 8 B a bucket. They grow and shrink in powers of two, whichever key is
    added or deleted at the time, so they are a row of their own, not a family's."""
    stats = conn.execute_command("DEBUG", "HTSTATS", 0)
    return 8 * sum(
        int(line.split(":")[1]) for line in stats.decode().splitlines() if "table size:" in line
    )


def freed(conn: Any, names: dict[str, list[str]]) -> tuple[Counter[str], int]:
    """used_memory given back by deleting each family in turn (its keys, values, dict
    entries and expiry entries: all-in), less any bucket array the keyspace shrank meanwhile;
    and the bucket arrays' bytes before any deletion."""
    out: Counter[str] = Counter()
    tables = buckets(conn)
    for kind, keys in names.items():
        before, held = used(conn), buckets(conn)
        for start in range(0, len(keys), 1_000):
            conn.delete(*keys[start : start + 1_000])
        out[kind] = before - used(conn) - (held - buckets(conn))
    return out, tables


def split(
    conn: Any, classify: Callable[[str], str] = family, order: tuple[str, ...] = FAMILIES
) -> dict[str, Any]:
    """One SCAN of the keyspace: MEMORY USAGE summed by family (`classify` of each key),
    key counts, and each voter set's (encoding, members, bytes)."""
    total: Counter[str] = Counter()
    count: Counter[str] = Counter()
    cards: dict[str, int] = {}
    voter_sets: list[tuple[str, int, int]] = []
    names: dict[str, list[str]] = {}
    for batch in _scan(conn):
        pipe = conn.pipeline(transaction=False)
        for key in batch:
            pipe.memory_usage(key, samples=0)
            kind = classify(key)
            if kind in VOTERS:
                pipe.scard(key)
                pipe.object("encoding", key)
            elif kind in PERIOD_DAYS:
                pipe.zcard(key)
        replies = iter(pipe.execute())
        for key in batch:
            kind, size = classify(key), int(next(replies) or 0)
            total[kind] += size
            count[kind] += 1
            names.setdefault(kind, []).append(key)
            if kind in VOTERS:
                card, encoding = int(next(replies)), next(replies)
                voter_sets.append((encoding.decode(), card, size))
            elif kind in PERIOD_DAYS:
                cards[kind] = int(next(replies))
    return {
        "bytes": total,
        "keys": count,
        "cards": cards,
        "voter_sets": voter_sets,
        "names": {k: names[k] for k in order if k in names},
    }


def _scan(conn: Any) -> Any:
    cursor = 0
    while True:
        cursor, found = conn.scan(cursor, count=2_000)
        if found:
            yield [k.decode() for k in found]
        if cursor == 0:
            return


def load(conn: Any, articles: int, votes: int) -> dict[str, Any]:
    """The benchmark's data set into the empty server; the mix of what was written."""
    from bench import data

    conn.flushall()
    spec = data.Spec(
        articles=articles, group_size=articles // 10, now=time.time(), votes_per_article=votes
    )
    mix: Counter[str] = Counter()

    def tallied() -> Any:
        from articles.store import search

        for chunk in data.rows(spec):
            for row in chunk:
                mix["title"] += len(row.title)
                mix["link"] += len(row.link)
                mix["text"] += len(row.text)
                mix["with text"] += bool(row.text)
                mix["words"] += len(search.article_words(row.title, row.text, row.link))
                mix["votes"] += len(row.ups) + len(row.downs)
            yield chunk

    empty = used(conn)
    data.load_redis(conn, spec, tallied())
    grown = used(conn) - empty
    memory = conn.info("memory")
    mix["rss"] = int(memory["used_memory_rss"])
    mix["used"] = int(memory["used_memory"])
    found = split(conn)
    gone, tables = freed(conn, found.pop("names"))
    return {
        "articles": articles,
        "used": grown,
        "mix": mix,
        "freed": gone,
        "tables": tables,
        **found,
    }


COMMENT_FAMILIES = (
    "comment hashes",
    "comments: (site-wide)",
    "comments/comments_new/comments_all:<aid>",
    "replies/replies_new:<cid>",
    "user_comments:<pk>",
    "inbox:<pk>, inbox_state:<pk>",
    "comment_postings:<word>",
    "comment_voted(_down):<cid>",
    "comment_karma:<pk>",
)


def comment_family(key: str) -> str:
    """The comment key families (anything else, the articles they are on: "others")."""
    for prefixes, name in (
        (("comment_postings:",), "comment_postings:<word>"),
        (("comment_voted",), "comment_voted(_down):<cid>"),
        (("comment_karma:",), "comment_karma:<pk>"),
        (("comment:",), "comment hashes"),
        (("comments_new:", "comments_all:"), "comments/comments_new/comments_all:<aid>"),
        (("replies",), "replies/replies_new:<cid>"),
        (("user_comments:",), "user_comments:<pk>"),
        (("inbox",), "inbox:<pk>, inbox_state:<pk>"),
    ):
        if key.startswith(prefixes):
            return name
    if key == "comments:":
        return "comments: (site-wide)"
    return "comments/comments_new/comments_all:<aid>" if key.startswith("comments:") else "others"


def comments_load(conn: Any, comments: int, articles: int) -> dict[str, Any]:
    """`comments` comments through the store's own comment_post (the keys comment_post.lua
    writes), on `articles` of the benchmark's articles: a tenth top-level, the rest replies
    to an earlier comment of the same article up to depth 5, texts of 2-4 sentences of the
    benchmark's words (bench/words.py), 2,000 authors; then 1-3 votes on a third of them.
    used_memory grown by them, and what deleting each comment family gives back."""
    import random

    from articles.store import services
    from articles.types import Vote
    from bench import data
    from bench import words as wording

    conn.flushall()
    data.load_redis(conn, data.Spec(articles=articles, group_size=articles // 10, now=time.time()))
    rng = random.Random(21)
    before = used(conn)
    threads: dict[int, list[tuple[int, int]]] = {}  # article id -> (comment id, depth)
    chars = 0
    ids = []
    for n in range(comments):
        article_id = 1 + rng.randrange(articles)
        thread = threads.setdefault(article_id, [])
        open_ = [c for c, depth in thread[-50:] if depth < 5]
        parent = rng.choice(open_) if open_ and rng.random() < 0.9 else None
        text = wording.sentences(rng)
        chars += len(text)
        made = services.comment_post(
            article_id=article_id,
            user_id=1 + rng.randrange(2_000),
            author_name=f"user{n % 2_000}",
            text=text,
            parent_id=parent,
        )
        thread.append((made.id, made.depth))
        ids.append(made.id)
    for comment_id in rng.sample(ids, len(ids) // 3):
        for voter in rng.sample(range(3_000, 6_000), rng.randint(1, 3)):
            services.comment_vote(
                comment_id=comment_id,
                user_id=voter,
                vote=Vote.UP if rng.random() < 0.85 else Vote.DOWN,
            )
    grown = used(conn) - before
    found = split(conn, comment_family, COMMENT_FAMILIES)
    gone, _ = freed(conn, found.pop("names"))
    return {"comments": comments, "used": grown, "chars": chars, "freed": gone, **found}


def family_table(
    heading: str,
    per: str,
    names: tuple[str, ...],
    run: dict[str, Any],
    n: int,
    whole: float | None = None,
) -> None:
    """Each family of `names` in a load `run`: its keys, MEMORY USAGE and what deleting it
    freed, per `per` (n of them), and its share of `whole` when given."""
    usage, gone, count = run["bytes"], run["freed"], run["keys"]
    print(f"| {heading} | keys | MEMORY USAGE B/{per} | freed by DEL B/{per} |"
          + (" share |" if whole else ""))  # fmt: skip
    print("|---|---:|---:|---:|" + ("---:|" if whole else ""))
    for name in names:
        if count[name]:
            row = f"| {name} | {count[name]:,} | {usage[name] / n:,.1f} | {gone[name] / n:,.1f} |"
            print(row + (f" {gone[name] / whole:.1%} |" if whole else ""))


def comments_report(run: dict[str, Any], per_day: int) -> None:
    n = run["comments"]
    each = run["used"] / n
    print(f"\nComments ({n:,}, {run['chars'] / n:.0f} characters of text on average): "
          f"used_memory grew {run['used']:,} B, {each:,.0f} B per comment all-in\n")  # fmt: skip
    family_table("comment family", "comment", COMMENT_FAMILIES, run, n)
    print(
        f"\nat {per_day:,} comments a day: a week {_size(per_day * 7 * each)}, "
        f"a year {_size(per_day * 365 * each)} (nothing archived)"
    )


def link_entry(conn: Any, per_bucket: int, buckets: int = 64) -> tuple[float, str]:
    """used_memory per entry of `buckets` links:<b> buckets of `per_bucket` entries each
    (8-byte digests -> 8-digit ids, as keys.link_slot and post.lua write them), and their
    encoding: the index's cost at the occupancy of a week's or a year's links, which the
    main load (24 a bucket) does not reach (a listpack up to hash-max-listpack-entries)."""
    import hashlib

    conn.flushall()
    before = used(conn)
    for b in range(buckets):
        entries = {
            hashlib.blake2b(f"{b}-{i}".encode(), digest_size=8).digest(): 10_000_000 + i
            for i in range(per_bucket)
        }
        conn.hset(f"links:{b:03x}", mapping=entries)
    encoding = conn.object("encoding", "links:000").decode()
    return (used(conn) - before) / (buckets * per_bucket), encoding


def per_vote(run: dict[str, Any]) -> dict[str, float]:
    """Voter-set bytes per vote: all-in (freed by DEL, set overheads included), and by
    encoding (MEMORY USAGE)."""
    out = {"all-in": sum(run["freed"][k] for k in VOTERS) / run["mix"]["votes"]}
    for encoding in sorted({e for e, _, _ in run["voter_sets"]}):
        sets = [(c, s) for e, c, s in run["voter_sets"] if e == encoding]
        members = sum(c for c, _ in sets)
        label = f"{encoding} ({len(sets):,} sets of {members / len(sets):.0f} on average)"
        out[label] = sum(s for _, s in sets) / members
    return out


def report(
    main: dict[str, Any],
    votes: dict[str, Any],
    links: dict[int, tuple[float, str]],
    per_day: int,
    votes_day: int,
) -> None:
    n, mix, all_in = main["articles"], main["mix"], main["used"]
    usage, gone, count = main["bytes"], main["freed"], main["keys"]
    print(
        f"Article mix ({n:,}): title {mix['title'] / n:.0f} chars, link {mix['link'] / n:.0f}, "
        f"text {mix['text'] / n:.0f} on average ({mix['with text'] / n:.0%} have one), "
        f"{mix['words'] / n:.1f} search words, {mix['votes'] / n:.2f} votes per article"
    )
    print(f"used_memory grew {all_in:,} B: {all_in / n:,.0f} B per article all-in "
          f"(RSS / used_memory after the load: {mix['rss'] / mix['used']:.2f})\n")  # fmt: skip
    family_table("family", "article", FAMILIES, main, n, all_in)
    tables = main["tables"]
    rest = all_in - sum(gone.values()) - tables
    for label, size in (("keyspace bucket arrays (main + expiry)", tables), ("rest", rest)):
        print(f"| {label} | | | {size / n:,.1f} | {size / all_in:.1%} |")
    print(f"| **all (used_memory)** | {sum(count.values()):,} | {sum(usage.values()) / n:,.0f} | "
          f"**{all_in / n:,.0f}** | |\n")  # fmt: skip
    cards = main["cards"]
    entry = {p: gone[p] / cards[p] for p in PERIOD_DAYS if cards.get(p)}
    print("votes:<period> B per entry: " + ", ".join(f"{p} {v:.0f}" for p, v in entry.items()))
    for label, run in (("main load", main), (f"{votes['articles']:,} articles", votes)):
        each = run["mix"]["votes"] / run["articles"]
        shown = ", ".join(f"{e}: {v:.1f}" for e, v in per_vote(run).items())
        print(f"voter sets B per vote, {label} ({each:.0f} votes each): {shown}")
    # Capacity: what stays per article, what a live vote costs, what the periods hold; the
    # link index holds the open week's links (manage.py archive releases the rest), at that
    # occupancy (links, below) instead of the main load's.
    stays = sum(gone[f] for f in (*STAYS, "postings:<word>") if f != "links:<b>") / n
    vote_b = per_vote(votes)["all-in"]
    live_sets = sum(votes["keys"][f] for f in VOTERS) / votes["articles"]
    year_entry = entry.get("votes:year", 0.0)
    shown = ", ".join(f"{d} days {b:.1f} ({e})" for d, (b, e) in links.items())
    print(f"\nstays per article {stays:,.0f} B besides its link; links:<b> B per entry: {shown}; "
          f"votes:<period> {year_entry:.0f} B per entry; a live vote {vote_b:.1f} B\n")  # fmt: skip
    print("| after | articles kept | votes live | articles (stay) | votes:<period> "
          "| voter sets | keyspace tables | total |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, days in (("one week", 7), ("one year", 365)):
        kept, live_articles, live = per_day * days, per_day * 7, votes_day * 7
        periods = sum(per_day * min(d, days) for d in PERIOD_DAYS.values()) * year_entry
        keyspace = _tables(kept + live_articles * live_sets) + _tables(live_articles * live_sets)
        indexed = live_articles * links[7][0]
        parts = [kept * stays + indexed, periods, live * vote_b, keyspace]
        print(f"| {label} | {kept:,} | {live:,} | "
              + " | ".join(_size(p) for p in parts) + f" | **{_size(sum(parts))}** |")  # fmt: skip


def _tables(keys: float) -> float:
    """A dict's bucket array: 8 B a bucket, the next power of two at or above its keys."""
    return 8.0 * 2 ** math.ceil(math.log2(max(keys, 1)))


def _size(n: float) -> str:
    return f"{n / 2**30:,.2f} GiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", type=Path, default=None, help="a redis-server binary")
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--vote-articles", type=int, default=10_000)
    parser.add_argument("--votes", type=int, default=100, help="votes per article, 2nd load")
    parser.add_argument("--per-day", type=int, default=100_000)
    parser.add_argument("--votes-per-day", type=int, default=10_000_000)
    parser.add_argument("--comments", type=int, default=50_000, help="0: no comment load")
    parser.add_argument("--comment-articles", type=int, default=5_000)
    parser.add_argument("--comments-per-day", type=int, default=1_000_000)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vs-mem-", dir="/tmp") as tmp:
        from articles.operations.embedded import EmbeddedRedis

        server = EmbeddedRedis(
            Path(tmp),
            daemonize=False,
            binary=opts.server,
            extra_config='appendonly no\nsave ""\nenable-debug-command local\n',
        )
        server.start()
        try:
            os.environ["REDIS_URL"] = f"{server.url}?db=0"
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")
            os.environ.setdefault("DJANGO_DEBUG", "true")  # the development key; nothing served
            import django

            django.setup()
            conn = server.client(timeout=120)
            print(f"redis {conn.info('server')['redis_version']} ({server.binary})")
            first = load(conn, opts.articles, 11)
            second = load(conn, opts.vote_articles, opts.votes)
            from articles.store import keys

            buckets = 16**keys.LINK_BUCKETS_HEX
            links = {d: link_entry(conn, opts.per_day * d // buckets) for d in (7, 365)}
            report(first, second, links, opts.per_day, opts.votes_per_day)
            if opts.comments:
                comments_report(
                    comments_load(conn, opts.comments, opts.comment_articles),
                    opts.comments_per_day,
                )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
