"""The operations bench/scale.py measures: every listing, top of every period, group,
site and user page, search, a many-comment thread, the writes and the periodic jobs,
each a call of the store's own services or selectors; and the mixed load of several
threads."""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SLOW_US = 5_000  # the goal: no Redis call over 5 ms
LISTINGS = "listing"  # the kind of operation the flatness goal covers
JOB_FLOOR = 500  # µs: the calls a whole-store job's log keeps
_SERIAL = itertools.count(1)


@dataclass
class Op:
    name: str
    kind: str  # listing, read (a part of a page), search, thread, write, job
    fn: Callable[[], Any]
    repeat: bool = True  # False: run once (a delete, a job that changes what it reads)
    last: bool = False  # after the mixed load: it moves the clock or removes what others read
    floor_us: int = 0  # log only calls from this long (a job of very many calls)


def _thread_article(comments: int, now: float) -> tuple[int, list[int]]:
    """An article with `comments` comments (bench.comments.post_thread: the services)."""
    from articles.store import services
    from articles.types import NewPost
    from bench.comments import post_thread

    article = services.article_post(
        NewPost(user_id=7, poster_name="scale", title="A thread of many comments", text="x")
    ).id
    return article, post_thread(article, comments, random.Random(21), now)


def _prolific_poster(articles: int) -> int:
    """A poster with more than a page of articles in every store: a listing of a poster
    of the loaded data would show 5 rows at 10,000 articles and 25 at 1,000,000, and
    compare two different amounts of work."""
    from articles.store import services
    from articles.types import NewPost

    poster = 11
    services.article_post_many(
        posts=[
            NewPost(user_id=poster, poster_name="prolific", title=f"Notes {n}", text="x")
            for n in range(articles)
        ]
    )
    return poster


def _common_site(conn: Any) -> str:
    """The site of the most articles among the first hundred (a busy site's page)."""
    from collections import Counter

    from articles import validation
    from articles.store import keys

    links = [conn.hget(keys.article(i), "link") for i in range(1, 101)]
    sites = Counter(validation.link_domain(link.decode()) for link in links if link)
    sites.pop("", None)
    return sites.most_common(1)[0][0] if sites else "example.org"


def _rare_word(conn: Any) -> str:
    """The word of the fewest articles among article 1's search words (a name, most likely)."""
    from articles.store import keys, search

    title, text, link = (
        v.decode() if v else "" for v in conn.hmget(keys.article(1), "title", "text", "link")
    )
    words = search.article_words(title, text, link)
    return min(words, key=lambda w: conn.scard(keys.postings(w))) if words else "redis"


def operations(conn: Any, spec: Any, comments: int, now: float) -> list[Op]:
    """Every operation measured, in the order run (the destructive ones last)."""
    from articles import conf
    from articles.operations import audit
    from articles.store import selectors, services
    from articles.types import Actor, CommentOrder, NewPost, Order, Period, SearchOrder, Vote

    staff = Actor(pk=1, name="", is_staff=True)
    threaded, ids = _thread_article(comments, now)
    later = 2 if comments > conf.comments_per_page() else 1
    deep = max(2, min(conf.max_page(), spec.articles // 25 // 2))  # the middle of the ranking
    site, rare = _common_site(conn), _rare_word(conn)
    poster = _prolific_poster(conf.per_page() + 5)
    rng = random.Random(5)
    counter = _SERIAL  # across runs on one store too: each post's link is new
    recent = max(1, spec.articles - spec.articles // 20)  # in the voting window

    def vote(direction: Vote) -> Callable[[], Any]:
        return lambda: services.article_vote(
            article_id=rng.randint(recent, spec.articles),
            user_id=500_000 + next(counter),
            direction=direction,
        )

    def post() -> Any:
        n = next(counter)
        return services.article_post(
            NewPost(
                user_id=3,
                poster_name="scale",
                title=f"New data on open source cloud {n}",
                link=f"https://{site}/scale/{n}",
                text="Redis sorted sets and scripts.",
                groups=[spec.groups] if n % 2 else [],
            )
        )

    mine = post().id
    author = Actor(pk=9, name="scale", is_staff=False)
    said = services.comment_post(
        article_id=threaded, user_id=9, author_name="scale", text="Mine.", parent_id=ids[0]
    ).id
    edits = iter(range(10**9))
    sweeps = iter(range(1, 10**9))  # each read a minute on: its vote sweep is due
    doomed = [
        services.comment_post(article_id=mine, user_id=9, author_name="scale", text="Gone.").id
        for _ in range(10)
    ]
    ops = [
        Op("home, page 1", LISTINGS, lambda: selectors.front_page()),
        Op("home, page 1, logged in", LISTINGS, lambda: selectors.front_page(user_id=11)),
        Op("new, page 1", LISTINGS, lambda: selectors.article_list(order=Order.TIME)),
        Op("new, deep", LISTINGS, lambda: selectors.article_list(order=Order.TIME, page=deep)),
        Op("score, deep", LISTINGS, lambda: selectors.article_list(page=deep)),
        Op("good", LISTINGS, lambda: selectors.good_article_page()),
    ]
    for period in Period:
        for number, label in ((1, "page 1"), (deep, "deep")):
            ops.append(
                Op(
                    f"top {period.value}, {label}",
                    LISTINGS,
                    lambda p=period, n=number: selectors.top_article_list(period=p, page=n),
                )
            )
    ops += [
        Op("top week, logged in", LISTINGS, lambda: selectors.top_article_list(
            period=Period.WEEK, user_id=11)),
        Op("group by score", LISTINGS, lambda: selectors.group_article_list(name=spec.groups)),
        Op("group by time, deep", LISTINGS, lambda: selectors.group_article_list(
            name=spec.groups, order=Order.TIME, page=max(2, deep // 10))),
        Op("group by score, deep, a vote sweep due", LISTINGS, lambda: selectors.group_article_list(
            name=spec.groups, page=max(2, deep // 10), now=now + 61 * next(sweeps))),
        Op("site", LISTINGS, lambda: selectors.domain_article_list(domain=site)),
        # The user page's two reads, as its view makes them. Its karma alone (two GETs,
        # ~7-13 µs) is shown apart: a flatness ratio of so short a call is its noise.
        Op("user page (articles, karma)", LISTINGS, lambda: (
            selectors.user_article_list(poster_id=poster), selectors.user_karmas(user_id=poster)
        )),
        Op("user's karma", "read", lambda: selectors.user_karmas(user_id=poster)),
        Op("user's comments", LISTINGS, lambda: selectors.user_comments(user_id=1)),
        Op("recent comments", LISTINGS, lambda: selectors.recent_comments()),
        Op("search common word", "search", lambda: selectors.article_search(q="data")),
        Op("search two common words, newest", "search", lambda: selectors.article_search(
            q="open source", order=SearchOrder.NEWEST)),
        Op("search common word, week, group", "search", lambda: selectors.article_search(
            q="new", period=Period.WEEK, group=spec.groups)),
        Op("search rare word", "search", lambda: selectors.article_search(q=rare)),
        Op("search common -word", "search", lambda: selectors.article_search(q="data -new")),
        Op("comment search", "search", lambda: selectors.comment_search(q="article")),
        Op(f"thread of {comments}, best, page 1", "thread",
           lambda: selectors.comment_thread(article_id=threaded)),
        Op(f"thread of {comments}, new, page {later}", "thread",
           lambda: selectors.comment_thread(article_id=threaded, order=CommentOrder.NEW,
                                            page=later, user_id=1_001)),
        Op(f"thread of {comments}, a comment's replies", "thread",
           lambda: selectors.comment_thread(article_id=threaded, focus_id=ids[0])),
        Op("article", LISTINGS, lambda: selectors.article_get(article_id=threaded, user_id=3)),
        Op("vote up", "write", vote(Vote.UP)),
        Op("vote down", "write", vote(Vote.DOWN)),
        Op("post", "write", post),
        Op("edit", "write", lambda: services.article_edit(
            article_id=mine, actor=staff, title=f"Edited data {next(edits)}")),
        Op("comment post", "write", lambda: services.comment_post(
            article_id=threaded, user_id=9, author_name="scale", text="More words.",
            parent_id=rng.choice(ids))),
        Op("comment vote", "write", lambda: services.comment_vote(
            comment_id=rng.choice(ids), user_id=700_000 + next(counter), vote=Vote.UP)),
        Op("comment edit", "write", lambda: services.comment_edit(
            comment_id=said, actor=author, text=f"Edited {next(edits)}")),
        Op("inbox digest (a reader's replies)", "job",
           lambda: selectors.inbox_digest_replies(user_id=1)),
        Op("cleanups_resume", "job", services.cleanups_resume, repeat=False),
        Op("top_backfill (kept: nothing to do)", "job", audit.top_backfill, repeat=False),
        Op("group_backfill (kept: nothing to do)", "job", audit.group_backfill, repeat=False),
        Op("domain_backfill", "job", audit.domain_backfill, repeat=False, floor_us=JOB_FLOOR),
        Op("top day, read a day later (trims)", "job", lambda: selectors.top_article_list(
            period=Period.DAY, now=now + 86_400), repeat=False, last=True),
        Op(f"delete the article of {comments} comments (+ purge)", "write",
           lambda: services.article_delete(article_id=threaded, actor=staff, reason="scale"),
           repeat=False, last=True),
        Op("comment delete", "write", lambda: services.comment_delete(
            comment_id=doomed.pop(), actor=author)),
    ]  # fmt: skip
    ops.append(
        Op(
            "audit (check_votes)",
            "job",
            lambda: audit.invariant_audit(),
            repeat=False,
            last=True,
            floor_us=JOB_FLOOR,
        )
    )
    return ops


def concurrent(conn: Any, log: Any, spec: Any, seconds: float, threads: int) -> dict:
    """A mixed load (reads of every listing kind, votes, posts) from `threads` threads for
    `seconds`, SLOWLOG at 1 ms: the calls it catches, the slowest and those over 5 ms."""
    from articles.store import selectors, services
    from articles.types import NewPost, Order, Period, Vote

    stop = time.monotonic() + seconds
    done = [0] * threads

    def work(n: int) -> None:
        rng = random.Random(n)
        while time.monotonic() < stop:
            pick = rng.randrange(8)
            if pick == 0:
                selectors.front_page()
            elif pick == 1:
                selectors.top_article_list(period=rng.choice(list(Period)), page=rng.randint(1, 5))
            elif pick == 2:
                selectors.article_list(order=Order.TIME, page=rng.randint(1, 50))
            elif pick == 3:
                selectors.group_article_list(name=spec.groups)
            elif pick == 4:
                selectors.article_search(q=rng.choice(["data", "open source", "new", "linux"]))
            elif pick in (5, 6):
                services.article_vote(
                    article_id=rng.randint(max(1, spec.articles * 9 // 10), spec.articles),
                    user_id=800_000 + n * 1_000_000 + done[n],
                    direction=Vote.UP,
                )
            else:
                services.article_post(
                    NewPost(user_id=4, poster_name="c", title=f"load {n} {done[n]}", text="x")
                )
            done[n] += 1

    log.threshold(1_000)
    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    calls = log.take()
    log.threshold(0)
    slowest = max(calls, default=(0, ""))
    return {
        "operations": sum(done),
        "calls_over_1ms": len(calls),
        "slowest_us": slowest[0],
        "slowest": slowest[1],
        "over_5ms": sorted((c for c in calls if c[0] > SLOW_US), reverse=True)[:10],
    }
