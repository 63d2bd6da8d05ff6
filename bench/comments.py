"""The comment-thread cases (issue 12): an article with 500 comments, read through the
store's selector, the REST API and the article page, beside baselines of the same run
(the article alone, a 25-article listing page, the bare JSON view), with round trips and
Redis' own time counted.

    python -m bench.comments [--comments 500] [--seconds 0.3] [--reps 5]

The thread: 50 top-level comments, each with a subthread of replies up to 5 levels deep
(inside the default display depth of 6), 500 in all; the first page of the thread shows
the 50 top-level comments and as many replies as ARTICLES_COMMENT_PAGE_ROWS allows. It is
posted through the store's services with votes on a third of the comments.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench import scratch_site

TOP_LEVEL = 50
MAX_DEPTH = 5  # below the default ARTICLES_COMMENT_DISPLAY_DEPTH (6): no reply is cut by depth
MARK = "bench-comment-"  # in every comment's text: the article page shows the thread


@dataclass
class ThreadCase:
    name: str
    fn: Callable[[], Any]
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)  # every call's latency, seconds
    round_trips: int | None = None
    redis_ms: float | None = None  # Redis' own time per call (INFO commandstats)
    available: bool = True  # False: what it measures is not there (the page shows no thread)

    @property
    def cpu_ms(self) -> float:
        return statistics.median(self.cpu) * 1000 if self.cpu else float("nan")

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.wall) * 1000 if self.wall else float("nan")


def post_thread(article_id: int, comments: int, rng: random.Random, now: float) -> list[int]:
    """`comments` comments on the article through comment_post: TOP_LEVEL top-level ones
    (fewer when `comments` is small), the rest as replies to random earlier comments no
    deeper than MAX_DEPTH; then votes on a third of them. Returns their ids."""
    from articles.store import services
    from articles.types import Vote

    top = min(TOP_LEVEL, max(1, comments // 10))
    ids: list[int] = []
    depth: dict[int, int] = {}
    at = now - comments - 60
    for n in range(comments):
        parents = [c for c in ids if depth[c] < MAX_DEPTH]
        parent = None if n < top or not parents else rng.choice(parents)
        at += 1
        comment = services.comment_post(
            article_id=article_id,
            user_id=1 + n % 97,
            author_name=f"bench{1 + n % 97}",
            text=f"{MARK}{n} Some words about the article, with *emphasis* and a `code` span.",
            parent_id=parent,
            now=at,
        )
        ids.append(comment.id)
        depth[comment.id] = comment.depth
    for comment_id in rng.sample(ids, len(ids) // 3):
        for voter in range(rng.randint(1, 6)):
            services.comment_vote(
                comment_id=comment_id,
                user_id=1_000 + voter,
                vote=Vote.UP if rng.random() < 0.85 else Vote.DOWN,
                now=now - 1,
            )
    return ids


def build(*, comments: int, seed: int = 12) -> tuple[list[ThreadCase], dict[str, Any]]:
    """The cases, on a store and user database already set up (posts its own two articles,
    one with the thread and one without; makes its own reader). Run them under
    bench.pages.LIFTED_LIMITS. Returns the cases (the bare view first) and facts for the
    report."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from articles.store import selectors, services
    from articles.store.tokens import token_create
    from articles.types import NewPost, Order

    rng = random.Random(seed)
    now = time.time()
    users = get_user_model()
    reader = users.objects.filter(username="thread-reader").first() or users.objects.create_user(
        "thread-reader", password="x-Secret-123"
    )
    token = token_create(user=reader)
    suffix = f"{rng.getrandbits(48):012x}"
    articles = []
    for title in ("Bench thread", "Bench article without comments"):
        articles.append(
            services.article_post(
                NewPost(
                    user_id=reader.pk,
                    poster_name=reader.username,
                    title=title,
                    link=f"https://example.org/bench-{title.split()[-1]}-{suffix}",
                    now=now - comments - 120,
                )
            )
        )
    threaded, bare = articles[0].id, articles[1].id
    post_thread(threaded, comments, rng, now)
    small = services.article_post(
        NewPost(
            user_id=reader.pk,
            poster_name=reader.username,
            title="Bench small thread",
            link=f"https://example.org/bench-small-{suffix}",
            now=now - 120,
        )
    ).id
    post_thread(small, 5, rng, now)

    anon = Client(HTTP_HOST="127.0.0.1")
    user = Client(HTTP_HOST="127.0.0.1")
    user.force_login(reader)
    auth = {"HTTP_AUTHORIZATION": f"Token {token}"}
    shown = selectors.comment_thread(article_id=threaded)
    label = f"{len(shown.items)} of {comments} comments"
    cases = [
        ThreadCase("bare JSON view", lambda: anon.get("/bench/fixed/")),
        ThreadCase(
            "store article (no thread), baseline",
            lambda: selectors.article_get(article_id=threaded),
        ),
        ThreadCase(
            "store article list page (25 articles), baseline",
            lambda: selectors.article_list(order=Order.TIME, page=1),
        ),
        ThreadCase(
            f"store thread page, {label}",
            lambda: selectors.comment_thread(article_id=threaded),
        ),
        ThreadCase(
            f"store thread page, {label}, logged in",
            lambda: selectors.comment_thread(article_id=threaded, user_id=1_001),
        ),
        ThreadCase(
            "store thread page, 5 comments", lambda: selectors.comment_thread(article_id=small)
        ),
        ThreadCase(
            "API article (no thread), baseline", lambda: anon.get(f"/api/articles/{threaded}/")
        ),
        ThreadCase(
            "API article list (25 articles), baseline",
            lambda: anon.get("/api/articles/?order=time"),
        ),
        ThreadCase(
            f"API thread page, {label}, anonymous",
            lambda: anon.get(f"/api/articles/{threaded}/comments/"),
        ),
        ThreadCase(
            f"API thread page, {label}, token",
            lambda: anon.get(f"/api/articles/{threaded}/comments/", **auth),
        ),
        ThreadCase(
            "article page without comments, logged in, baseline",
            lambda: user.get(f"/a/{bare}/"),
        ),
        ThreadCase(
            f"article page, {label}, anonymous",
            lambda: anon.get(f"/a/{threaded}/"),
        ),
        ThreadCase(
            f"article page, {label}, logged in",
            lambda: user.get(f"/a/{threaded}/"),
        ),
    ]
    # The last comment the thread's first page shows: the article page shows it too once
    # the pages show threads; before that the page is the article alone, not measured.
    last = shown.items[-1].text.split()[0].encode()
    for case in cases:
        if case.name.startswith("article page,"):
            page = case.fn()
            case.available = page.status_code == 200 and last + b" " in page.content
    facts = {
        "comments": comments,
        "rows": len(shown.items),
        "top_level": shown.count,
        "deepest": max((c.depth for c in shown.items), default=0),
        "article": threaded,
        "listed": len(selectors.article_list(order=Order.TIME).items),
    }
    return cases, facts


def check(cases: list[ThreadCase]) -> list[str]:
    """Each available case answers (2xx for requests; a 4xx would time the refusal)."""
    problems = []
    for case in cases:
        if not case.available:
            continue
        result = case.fn()
        status = getattr(result, "status_code", 200)
        if status >= 300:
            problems.append(f"{case.name}: answers {status}")
    return problems


def count_round_trips(cases: list[ThreadCase]) -> None:
    """Round trips of each case (when the run's connections count them), and Redis' own
    time per call: the growth of the usec of every command in INFO commandstats."""
    from django_redis import get_redis_connection

    conn = get_redis_connection("articles")

    def redis_usec() -> int:
        return sum(int(v.get("usec", 0)) for v in conn.info("commandstats").values())

    for case in cases:
        if not case.available or case.name == "bare JSON view":
            continue
        spent = []
        for _ in range(3):
            before = redis_usec()
            case.fn()
            spent.append(redis_usec() - before)
        case.redis_ms = min(spent) / 1000
        if os.environ.get("BENCH_COUNT_ROUND_TRIPS"):
            from bench import counting

            case.round_trips = counting.round_trips(case.fn)


def measure(cases: list[ThreadCase], *, reps: int, seconds: float) -> None:
    """reps rounds, each case one batch of `seconds` of wall time per round, shuffled;
    every call's latency and the batch's CPU per call are kept."""
    order = [c for c in cases if c.available]
    shuffle = random.Random(1)
    for case in order:  # warm up: templates compiled, caches filled
        for _ in range(3):
            case.fn()
    for _ in range(reps):
        shuffle.shuffle(order)
        for case in order:
            spent, cpu, calls = 0.0, 0.0, 0
            while spent < seconds or calls < 3:
                start, start_cpu = time.perf_counter(), time.process_time()
                case.fn()
                took = time.perf_counter() - start
                cpu += time.process_time() - start_cpu
                spent += took
                calls += 1
                case.wall.append(took)
            case.cpu.append(cpu / calls)


def _by_name(cases: list[ThreadCase], start: str) -> ThreadCase:
    return next(c for c in cases if c.name.startswith(start))


def table(cases: list[ThreadCase]) -> list[str]:
    lines = [
        "| case | round trips | p50 ms | ms CPU (client) | ms in Redis |",
        "|---|---|---|---|---|",
    ]
    for case in cases:
        if not case.available:
            lines.append(f"| {case.name} | not available (the page shows no thread yet) | | | |")
            continue
        trips = "" if case.round_trips is None else str(case.round_trips)
        redis_ms = "" if case.redis_ms is None else f"{case.redis_ms:.2f}"
        lines.append(
            f"| {case.name} | {trips} | {case.p50_ms:.2f} | {case.cpu_ms:.2f} | {redis_ms} |"
        )
    return lines


# Goals. A thread page's round trips do not grow with the thread; a row of it (one
# comment) costs at most this many times a row of a listing page (one article) of the
# same run, in the store and in the API; the article page renders the thread (HTML) in
# at most this many times the API's JSON of the same thread.
THREAD_TRIPS_LIMIT = 1.0  # x the 5-comment thread's round trips
STORE_ROW_LIMIT = 3.0  # x a row of selectors.article_list, p50
API_ROW_LIMIT = 3.0  # x a row of GET /api/articles/, p50
PAGE_LIMIT = 3.0  # x GET /api/articles/<id>/comments/, p50


def goals(report: Any, cases: list[ThreadCase], facts: dict[str, Any]) -> None:
    rows, listed = facts["rows"], facts["listed"]
    big = _by_name(cases, "store thread page, ")
    small = _by_name(cases, "store thread page, 5 ")
    report.goal(
        f"comment thread round trips, {rows} comments vs 5",
        big.round_trips / small.round_trips if big.round_trips and small.round_trips else None,
        THREAD_TRIPS_LIMIT,
        at_most=True,
    )
    per_row = [
        ("store thread page, ", "store article list", STORE_ROW_LIMIT, "store"),
        ("API thread page, ", "API article list", API_ROW_LIMIT, "API"),
    ]
    for name, baseline, limit, where in per_row:
        case, base = _by_name(cases, name), _by_name(cases, baseline)
        report.goal(
            f"{where} thread page of {rows} comments: p50 per comment vs per article of a "
            f"{listed}-article page",
            (case.p50_ms / rows) / (base.p50_ms / listed),
            limit,
            at_most=True,
        )
    api = _by_name(cases, "API thread page, ")
    page = next(c for c in cases if c.name.startswith("article page,") and "logged in" in c.name)
    report.goal(
        f"article page with {rows} comments, logged in: p50 vs the API's JSON of the thread",
        page.p50_ms / api.p50_ms if page.available else None,
        PAGE_LIMIT,
        at_most=True,
    )


def run(report: Any, opts: Any) -> None:
    """The cases in the full run (bench/run.py), on its main store: a section with the
    table, and the goals."""
    from django.core.management import call_command
    from django.test import override_settings

    from bench.pages import LIFTED_LIMITS
    from bench.report import log

    comments = getattr(opts, "comments", 500)
    call_command("migrate", database="default", verbosity=0, interactive=False)
    with override_settings(**LIFTED_LIMITS):
        log(f"posting a thread of {comments} comments")
        cases, facts = build(comments=comments)
        problems = check(cases)
        if problems:
            raise RuntimeError("; ".join(problems))
        count_round_trips(cases)
        log("timing the comment thread in-process")
        measure(cases, reps=opts.reps, seconds=opts.seconds)
    report.section(
        "Comment threads in-process: the store, the API and the article page",
        [
            f"One article with {facts['comments']} comments ({facts['top_level']} top-level, "
            f"replies up to depth {facts['deepest']}; the first page of the thread shows "
            f"{facts['rows']} of them), posted through `comment_post` with votes on a third "
            "(`bench/comments.py`). Each case's round trips (counted), median latency (p50 "
            f"of every call), CPU per call and Redis' own time (commandstats), {opts.reps} "
            "interleaved rounds, beside the article alone and a 25-article listing page in "
            "the same run. The API thread is one page of the flat thread "
            "(`GET /api/articles/<id>/comments/`); the article page is `/a/<id>/` with its "
            "thread rendered (not available before the pages show threads).",
            "",
            *table(cases),
        ],
    )
    goals(report, cases, facts)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--comments", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    directory = scratch_site("vs-comments-", BENCH_COUNT_ROUND_TRIPS="1")
    import django

    django.setup()
    from bench import servers
    from bench.report import Report

    server = servers.redis_server(directory / "redis")
    server.start()
    try:
        from django_redis import get_redis_connection

        from bench import data

        spec = data.Spec(articles=2_000, group_size=200, now=time.time())
        data.load_redis(get_redis_connection("articles"), spec)  # the listing baselines
        report = Report()
        run(
            report, argparse.Namespace(comments=args.comments, reps=args.reps, seconds=args.seconds)
        )
    finally:
        server.stop()
        servers.remove(directory)


if __name__ == "__main__":
    main()
