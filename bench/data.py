"""The benchmark's data: articles posted over the last 6.5 days with a heavy-tailed spread
of votes, generated deterministically chunk by chunk, and loaded into Redis (pipelined
bulk writes of exactly the keys post.lua and vote.lua write) and into the ORM baseline.

Loading through the services would take 1.1 M script calls (minutes); the bulk load writes
the same keys and values, and the harness runs the store's own invariant audit over the
10,000-article store before timing anything (tests/bench checks it too). Titles, texts and
link hosts are words drawn as bench/words.py says, so searches find realistic numbers of
articles; the search index is written by the load, or left to the store's own reindex.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import redis

from articles import conf, validation
from articles.operations import audit
from articles.store import keys, search
from bench import words as wording

DAY = 86_400
SPAN = 6.5 * DAY
WEEK = 7 * DAY
VOTE_SCORE = 432
GOOD_VOTES = 200
USERS = 200_000  # voters are user:1 .. user:200000
POSTERS = 10_000
HIT_SHARE = 0.005  # 0.5 % of articles gather 200-600 up-votes (the good articles)
VOTES_PER_ARTICLE = 11  # 100,000 articles -> 1.1 M votes, the poster's own included
DOWN_SHARE = 0.1
CHUNK = 2_000
GROUP = "bench"


@dataclass(frozen=True, slots=True)
class Row:
    id: int
    title: str
    text: str
    link: str
    poster: int
    time: int
    ups: list[int]
    downs: list[int]
    grouped: bool


@dataclass(frozen=True, slots=True)
class Spec:
    articles: int
    group_size: int
    now: float
    votes_per_article: int = VOTES_PER_ARTICLE
    seed: int = 6

    @property
    def groups(self) -> str:
        return GROUP


def title_of(article_id: int) -> str:
    """Exactly 60 characters (the memory section's articles, comparable run to run)."""
    return f"Article {article_id} on sorted sets, scripts and pages ".ljust(60, "x")[:60]


def rows(spec: Spec) -> Iterator[list[Row]]:
    """The articles in chunks, oldest first (ids ascend with post time)."""
    first = spec.now - SPAN
    step = SPAN / spec.articles
    hits = int(spec.articles * HIT_SHARE)
    # Extra votes of an ordinary article: geometric, its mean set so the total matches.
    hit_mean = 400 * (1 + DOWN_SHARE)
    rest = max(0.0, spec.votes_per_article * spec.articles - hits * hit_mean - spec.articles)
    mean = rest / max(1, spec.articles - hits)
    # floor of an exponential is geometric; its mean is about mean - 0.5
    mean_rate = 1.0 / (mean + 0.5) if mean > 0 else 0.0
    pick = random.Random(spec.seed)
    grouped = set(pick.sample(range(1, spec.articles + 1), spec.group_size))
    hit_ids = set(pick.sample(range(1, spec.articles + 1), hits))
    for start in range(1, spec.articles + 1, CHUNK):
        rng = random.Random(spec.seed * 1_000_003 + start)
        # Words from their own generator: the votes stay those of runs before words.
        say = random.Random(spec.seed * 1_000_033 + start)
        chunk = []
        for article_id in range(start, min(start + CHUNK, spec.articles + 1)):
            poster = rng.randint(1, POSTERS)
            if article_id in hit_ids:
                ups_n, downs_n = rng.randint(200, 600), rng.randint(0, 80)
            else:
                extra = int(rng.expovariate(mean_rate)) if mean_rate else 0
                downs_n = int(extra * DOWN_SHARE + rng.random())
                ups_n = 1 + extra - downs_n
            voters = rng.sample(range(1, USERS + 1), ups_n + downs_n)
            if poster in voters:
                voters.remove(poster)
            else:
                voters.pop()
            ups = [poster, *voters[: ups_n - 1]]
            downs = voters[ups_n - 1 :]
            chunk.append(
                Row(
                    id=article_id,
                    title=wording.title(say),
                    text=wording.text(say),
                    link=wording.link(say, article_id),
                    poster=poster,
                    time=int(first + (article_id - 1) * step),
                    ups=ups,
                    downs=downs,
                    grouped=article_id in grouped,
                )
            )
        yield chunk


def _resp(*args: object) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        raw = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(raw), raw))
    return b"".join(out)


def load_redis(
    conn: redis.Redis,
    spec: Spec,
    chunks: Iterable[list[Row]] | None = None,
    *,
    index: bool = True,
) -> dict[str, int]:
    """Write the data set with the store's own keys, as Redis' mass insertion does it: the
    commands in the protocol, a chunk's worth written at once on one connection and their
    replies read after (what `redis-cli --pipe` does; no redis-cli ships with the embedded
    server). Without `index` the articles are in no postings:<word> set yet, as the book's
    code would have left them: the store's reindex then does it."""
    pool = conn.connection_pool
    # A connection of its own with no read timeout: a chunk is tens of thousands of
    # commands, and the pool's fail-fast timeout is for one request's few.
    connection = pool.connection_class(**{**pool.connection_kwargs, "socket_timeout": None})
    totals: Counter[str] = Counter()
    errors: list[str] = []

    def send(commands: list[bytes]) -> None:
        connection.send_packed_command([b"".join(commands)])
        for _ in commands:
            try:
                connection.read_response()
            except redis.ResponseError as error:
                errors.append(str(error))

    try:
        send([_resp("HSET", keys.GROUPS, spec.groups, "Benchmark group")])
        for chunk in chunks if chunks is not None else rows(spec):
            send(_commands(chunk, spec, totals, index))
        send([_resp("SET", keys.ARTICLE_IDS, spec.articles)])
        if index:  # the index is whole, in the stemmer's language: as reindex_search ends
            send([_resp("SET", keys.SEARCH_STEMMER, conf.search_language())])
    finally:
        connection.disconnect()
    if errors:
        raise RuntimeError(f"the bulk load had {len(errors)} errors, the first: {errors[0]}")
    # The kept top of each period, backfilled as check_votes --repair does after any load
    # that writes votes: itself (bounded steps; ~8 s at 1M articles).
    audit.top_backfill(client=conn)
    # ... and the groups' kept rankings (bounded steps, as check_votes --repair does).
    audit.group_backfill(client=conn)
    # ... and each poster's kept article karma (article_karma:<pk>), the same way.
    audit.article_karma_backfill(client=conn)
    return dict(totals)


def _commands(chunk: list[Row], spec: Spec, totals: Counter[str], index: bool) -> list[bytes]:
    out = []
    score, posted, good, grouped, net = [], [], [], [], []
    links: dict[str, list[object]] = {}  # links:<b> -> its fields and values
    posts_by_day: Counter[str] = Counter()
    votes_by_day: Counter[str] = Counter()
    indexed: dict[str, list[str]] = {}  # the search index (ids), as post.lua writes it
    for row in chunk:
        member = keys.article(row.id)
        words = search.article_words(row.title, row.text, row.link) if index else []
        for word in words:
            indexed.setdefault(word, []).append(str(row.id))
        day = datetime.fromtimestamp(row.time, tz=UTC).date().isoformat()
        up, down = len(row.ups), len(row.downs)
        # as post.lua and the votes write it: no empty `text`, `groups` or `downvotes`
        optional = {"text": row.text, "downvotes": down, "groups": row.grouped and spec.groups}
        out.append(
            _resp(
                "HSET", member, "title", row.title, "link", row.link,
                "poster", keys.user(row.poster), "poster_name", f"user{row.poster}",
                "time", row.time, "votes", up,
                *(part for name, value in optional.items() if value for part in (name, value)),
            )
        )  # fmt: skip
        expire_at = row.time + WEEK
        out.append(_resp("SADD", keys.voted(row.id), *[f"user:{u}" for u in row.ups]))
        out.append(_resp("EXPIREAT", keys.voted(row.id), expire_at))
        if row.downs:
            out.append(_resp("SADD", keys.voted_down(row.id), *[f"user:{u}" for u in row.downs]))
            out.append(_resp("EXPIREAT", keys.voted_down(row.id), expire_at))
        out.append(_resp("ZADD", keys.submitted(row.poster), row.time, member))
        site = validation.link_domain(row.link)
        if site:  # a site's index, as post.lua writes it
            out.append(_resp("ZADD", keys.domain(site), row.time, member))
        bucket, slot = keys.link_slot(validation.normalize_link(row.link))
        links.setdefault(bucket, []).extend((slot, row.id))
        score += [row.time + VOTE_SCORE * (up - down), member]
        net += [up - down, member]
        posted += [row.time, member]
        if up >= GOOD_VOTES:
            good += [row.time, member]
        if row.grouped:
            grouped.append(member)
        posts_by_day[day] += 1
        votes_by_day[day] += up + down - 1
        totals["votes"] += up + down
        totals["good"] += up >= GOOD_VOTES
    for word, members in indexed.items():
        out.append(_resp("SADD", keys.postings(word), *members))
    out.append(_resp("ZADD", keys.SCORE, *score))
    out.append(_resp("ZADD", keys.TIME, *posted))
    out.append(_resp("ZADD", keys.VOTES, *net))
    for bucket, fields in links.items():
        out.append(_resp("HSET", bucket, *fields))
    if good:
        out.append(_resp("ZADD", keys.GOOD, *good))
    if grouped:
        out.append(_resp("SADD", keys.group(spec.groups), *grouped))
    for day, n in posts_by_day.items():
        out.append(_resp("HINCRBY", keys.STATS_POSTS, day, n))
    for day, n in votes_by_day.items():
        out.append(_resp("HINCRBY", keys.STATS_VOTES, day, n))
    totals["articles"] += len(chunk)
    return out


def load_orm(alias: str, spec: Spec, chunks: Iterable[list[Row]] | None = None) -> None:
    """The same articles, votes and group into baseline B's tables (raw bulk inserts;
    COPY on PostgreSQL)."""
    from django.db import connections, transaction

    connection = connections[alias]
    postgres = connection.vendor == "postgresql"
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ormsite_group (id, name, description) VALUES (1, %s, '')", [spec.groups]
        )
        for chunk in chunks if chunks is not None else rows(spec):
            articles = [
                (
                    r.id,
                    r.title,
                    r.link,
                    r.text,
                    r.poster,
                    f"user{r.poster}",
                    float(r.time),
                    len(r.ups),
                    len(r.downs),
                    float(r.time + VOTE_SCORE * (len(r.ups) - len(r.downs))),
                )
                for r in chunk
            ]
            votes = [(r.id, u, 1) for r in chunk for u in r.ups]
            votes += [(r.id, u, -1) for r in chunk for u in r.downs]
            members = [(r.id, 1) for r in chunk if r.grouped]
            if postgres:
                raw = cursor.cursor
                columns = "id, title, link, text, poster_id, poster_name, posted, votes, "
                columns += "downvotes, score"
                with raw.copy(f"COPY ormsite_article ({columns}) FROM STDIN") as copy:
                    for item in articles:
                        copy.write_row(item)
                with raw.copy("COPY ormsite_vote (article_id, user_id, value) FROM STDIN") as c:
                    for item in votes:
                        c.write_row(item)
                with raw.copy(
                    "COPY ormsite_article_groups (article_id, group_id) FROM STDIN"
                ) as copy:
                    for item in members:
                        copy.write_row(item)
            else:
                cursor.executemany(
                    "INSERT INTO ormsite_article (id, title, link, text, poster_id, poster_name,"
                    " posted, votes, downvotes, score) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    articles,
                )
                cursor.executemany(
                    "INSERT INTO ormsite_vote (article_id, user_id, value) VALUES (%s,%s,%s)",
                    votes,
                )
                cursor.executemany(
                    "INSERT INTO ormsite_article_groups (article_id, group_id) VALUES (%s,%s)",
                    members,
                )
        if postgres:
            for table in ("ormsite_article", "ormsite_vote", "ormsite_article_groups"):
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "  # noqa: S608
                    f"(SELECT max(id) FROM {table}))"
                )
            cursor.execute("ANALYZE")
        else:
            cursor.execute("ANALYZE")
