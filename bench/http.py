"""HTTP through gunicorn (production settings, gunicorn.conf.py's gthread workers, loopback)
driven by wrk, bounded in time and in requests: the pages, the API, search and the vote
endpoint, each against two references served the same way in the same run: plain Django
(a fresh startproject serving fixed JSON, bench/baseline.py) with its default MIDDLEWARE,
the baseline, and with none. votesite runs twice: with the anonymous page cache off (every
page rendered: the goals) and on (reported apart)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import statistics
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import wrk as wrk_tool
from bench.baseline import FLOORS
from bench.wrk import parse_wrk

__all__ = ["Endpoint", "endpoints", "parse_wrk", "run"]

USERS = 2_000  # voters for the vote endpoint (spreads any per-user rate limit)
TOKEN_WARM_USES = 10  # uses of each token before the vote is timed (site_settings.py)

# The tables, in their order, and the servers behind them.
REFERENCE, UNCACHED, CACHED = "reference", "uncached", "cached"
TITLES = {
    REFERENCE: "References: the fixed JSON view",
    UNCACHED: "Without the page cache (ARTICLES_ANONYMOUS_PAGE_SECONDS = 0): every page rendered",
    CACHED: "Anonymous, with the per-process page cache on (ARTICLES_ANONYMOUS_PAGE_SECONDS, 2 s)",
}
PLAIN, BARE, SITE, NOCACHE = "plain", "bare", "site", "nocache"
MIDDLEWARE_OVERHEAD = 0.15  # goal: votesite's middleware costs at most this share of a baseline
THREAD_COMMENTS = 300  # comments on the thread page's article (the case)


@dataclass
class Endpoint:
    name: str
    kind: str  # "get" | "vote" | "article" (a random article's page) | "search" (a query in turn)
    path: str
    target: float | None  # goal: share of the baseline's requests/s (None: a reference)
    logged_in: bool = False  # sent with a logged-in session's cookie
    group: str = UNCACHED
    server: str = NOCACHE  # PLAIN | BARE (the references) | NOCACHE | SITE (page cache on)
    available: bool = True
    why: str = ""
    bytes: int = 0  # the probe's body
    rps: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)  # the workers' CPU per request
    redis_us: list[float] = field(default_factory=list)  # Redis' CPU per request
    requests: int = 0
    errors: int = 0

    @property
    def median_rps(self) -> float:
        return statistics.median(self.rps) if self.rps else 0.0


def endpoints(
    user_page: str, thread: int = 1, comments: int = THREAD_COMMENTS, articles: int = 1
) -> list[Endpoint]:
    """The references first (every ratio is to them; the floors are plain Django making a
    hot path's round trips, bench/baseline.py), then votesite with the page cache off, then
    the anonymous listings with it on."""
    listings = [
        ("home GET /", "/"),
        ("new GET /new/", "/new/"),
        ("top GET /top/?period=week", "/top/?period=week"),
        ("group GET /g/bench/", "/g/bench/"),
        (f"user GET {user_page}", user_page),
    ]
    return [
        Endpoint(
            "plain Django, default MIDDLEWARE (fresh startproject): the baseline",
            "get",
            "/bench/fixed/",
            None,
            group=REFERENCE,
            server=PLAIN,
        ),
        Endpoint(
            "plain Django, no middleware",
            "get",
            "/bench/fixed/",
            None,
            group=REFERENCE,
            server=BARE,
        ),
        *(
            Endpoint(
                f"floor: plain Django + {name}",
                "get",
                f"{path}?n={articles}" if path == FLOORS[0][1] else path,
                None,
                group=REFERENCE,
                server=PLAIN,
            )
            for name, path in FLOORS
        ),
        Endpoint(
            "votesite's whole MIDDLEWARE, fixed view (/bench/fixed/)",
            "get",
            "/bench/fixed/",
            None,
            group=REFERENCE,
        ),
        *(Endpoint(f"{name}, anonymous", "get", path, 0.3) for name, path in listings),
        *(
            Endpoint(f"{name}, logged in", "get", path, 0.3, logged_in=True)
            for name, path in listings
        ),
        Endpoint("API GET /api/articles/", "get", "/api/articles/", 0.4),
        Endpoint("API GET /api/articles/top/", "get", "/api/articles/top/?period=week", 0.4),
        Endpoint("API GET /api/groups/bench/articles/", "get", "/api/groups/bench/articles/", 0.4),
        Endpoint("vote PUT /api/articles/{id}/vote/, token", "vote", "/api/articles/1/vote/", 0.5),
        Endpoint("search GET /search/?q= (6 queries in turn)", "search", "/search/?q=", 0.3),
        Endpoint("article GET /a/{id}/ (random id), anonymous", "article", "/a/1/", 0.3),
        Endpoint(
            f"article GET /a/{thread}/ with {comments} comments, logged in",
            "get",
            f"/a/{thread}/",
            0.1,
            logged_in=True,
        ),
        *(
            Endpoint(f"{name}, anonymous", "get", path, 0.3, group=CACHED, server=SITE)
            for name, path in listings
        ),
    ]


def run(report: Any, opts: Any, env: dict[str, str], directory: Path, now: float) -> None:
    from django_redis import get_redis_connection

    from bench import baseline, servers
    from bench.pages import user_page
    from bench.report import log
    from bench.searches import GOAL_KINDS, QUERIES

    wrk = shutil.which("wrk")
    if wrk is None:
        report.section("HTTP", ["wrk is not installed (apt-get install wrk): HTTP not measured."])
        return
    tokens = _users_and_tokens()
    comments = getattr(opts, "thread_comments", THREAD_COMMENTS)
    thread, plain_article, shown = _thread(comments, now)
    site_env = {k: v for k, v in os.environ.items() if k != "BENCH_COUNT_ROUND_TRIPS"}
    site_env.update(env)
    # The site served as it is (its own settings and the fixed view), without the other
    # parts' databases and caches, whose aliases Django's request signals would walk.
    site_env["DJANGO_SETTINGS_MODULE"] = "bench.site_settings"
    project = baseline.make(directory / "baseline")
    ports = {name: servers.free_port() for name in (PLAIN, BARE, SITE, NOCACHE)}
    ports[SITE] = opts.port
    app = f"{baseline.PACKAGE}.wsgi:application"
    log_file = directory / "gunicorn.log"
    gunicorns = {
        SITE: servers.Gunicorn(ports[SITE], site_env, opts.workers, log=log_file),
        NOCACHE: servers.Gunicorn(
            ports[NOCACHE],
            {**site_env, "BENCH_ANONYMOUS_PAGE_SECONDS": "0"},
            opts.workers,
            log=log_file,
        ),
        PLAIN: servers.Gunicorn(
            ports[PLAIN], baseline.environ(project, baseline.DEFAULT), opts.workers, app, log_file
        ),
        BARE: servers.Gunicorn(
            ports[BARE], baseline.environ(project, baseline.BARE), opts.workers, app, log_file
        ),
    }
    bases = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    cookie = _session_cookie()
    queries = [q.text.replace(" ", "+") for q in QUERIES if q.kind in GOAL_KINDS]
    points = endpoints(user_page(), thread, comments, opts.articles)
    redis = get_redis_connection("articles")
    try:
        for server in gunicorns.values():
            server.start()
        for endpoint in points:
            _probe(bases[endpoint.server], endpoint, tokens[0], cookie, queries)
        live = [e for e in points if e.available]

        def timed(endpoint: Endpoint, seconds: float, requests: int) -> dict[str, Any]:
            lua = wrk_tool.script(
                directory,
                f"{points.index(endpoint)}",
                kind=endpoint.kind,
                path=endpoint.path,
                requests=requests,
                max_id=opts.articles,
                tokens=tokens,
                queries=queries,
                cookie=cookie if endpoint.logged_in else "",
            )
            server = gunicorns[endpoint.server]
            cpu, redis_cpu = server.worker_cpu(), _redis_cpu(redis)
            result = wrk_tool.run(
                wrk,
                bases[endpoint.server] + endpoint.path,
                lua,
                connections=opts.connections,
                seconds=seconds,
            )
            done = max(1, result["requests"])
            result["cpu_us"] = (server.worker_cpu() - cpu) / done * 1e6
            result["redis_us"] = (_redis_cpu(redis) - redis_cpu) / done * 1e6
            return result

        # Warm every worker's imports, connections and per-process caches before timing;
        # the vote each of its tokens in both workers (gunicorn deals each request to a
        # worker; ten uses of a token miss one of two workers with odds of 1 in 1,024).
        for endpoint in live if getattr(opts, "http_warmup", True) else []:
            if endpoint.kind == "vote":
                timed(endpoint, 60, len(tokens) * TOKEN_WARM_USES)
            else:
                timed(endpoint, 1, 500)
        for rep in range(opts.http_reps):
            for endpoint in live:
                result = timed(endpoint, opts.http_seconds, opts.http_requests)
                endpoint.rps.append(result["rps"])
                endpoint.p50.append(result["p50"])
                endpoint.p99.append(result["p99"])
                endpoint.cpu_us.append(result["cpu_us"])
                endpoint.redis_us.append(result["redis_us"])
                endpoint.requests += result["requests"]
                endpoint.errors += result["errors"]
            log(f"HTTP round {rep + 1}/{opts.http_reps} done")
        per_comment = _bytes_per_comment(bases[NOCACHE], cookie, thread, plain_article, shown)
    finally:
        for server in gunicorns.values():
            server.stop()
    _report(report, opts, points, per_comment)


def _redis_cpu(conn: Any) -> float:
    info = conn.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _thread(comments: int, now: float) -> tuple[int, int, int]:
    """Two articles by a benchmark user, one with a thread of `comments` comments (posted
    as bench/comments.py posts its own) and one with none: their ids, and how many of the
    comments the thread's first page shows."""
    import random

    from articles.store import selectors, services
    from articles.types import NewPost
    from bench.comments import post_thread

    made = []
    for title in ("HTTP bench thread", "HTTP bench article without comments"):
        made.append(
            services.article_post(
                NewPost(
                    user_id=1,
                    poster_name="bench0",
                    title=title,
                    link=f"https://example.org/http-bench-{len(made)}-{secrets.token_hex(6)}",
                    now=now - comments - 120,
                )
            ).id
        )
    post_thread(made[0], comments, random.Random(23), now)
    shown = len(selectors.comment_thread(article_id=made[0]).items)
    return made[0], made[1], shown


def _bytes_per_comment(base: str, cookie: str, thread: int, plain: int, shown: int) -> dict:
    """The logged-in article page's HTML with the thread and without comments: what each
    comment shown adds."""
    sizes = {}
    for name, article in (("thread", thread), ("plain", plain)):
        request = urllib.request.Request(f"{base}/a/{article}/", headers={"Cookie": cookie})  # noqa: S310
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
            sizes[name] = len(response.read())
    per = (sizes["thread"] - sizes["plain"]) / shown if shown else float("nan")
    return {**sizes, "shown": shown, "per_comment": per}


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _report(report: Any, opts: Any, points: list[Endpoint], thread: dict) -> None:
    plain = next(e for e in points if e.server == PLAIN)
    bare = next(e for e in points if e.server == BARE)
    site_fixed = next(e for e in points if e.group == REFERENCE and e.server == NOCACHE)

    def ratio(e: Endpoint, to: Endpoint = plain) -> float | None:
        base = to.median_rps
        return e.median_rps / base if e.available and e.rps and base else None

    def row(e: Endpoint) -> str:
        if not e.available:
            return f"| {e.name} | not available ({e.why}) |" + " |" * 9
        versus = [ratio(e), ratio(e, bare)]
        return (
            f"| {e.name} | {e.median_rps:,.0f} | "
            + " | ".join("-" if r is None else f"{r:.2f}x" for r in versus)
            + f" | {_median(e.cpu_us):,.0f} | {_median(e.redis_us):,.0f} | {e.bytes:,} | "
            f"{_median(e.p50):.1f} | {_median(e.p99):.1f} | {e.requests:,} | {e.errors} |"
        )

    head = [
        "| endpoint | requests/s | x baseline (default MIDDLEWARE) | x no middleware | "
        "worker CPU µs/request | Redis CPU µs/request | body bytes | p50 ms | p99 ms | "
        "requests | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    site_ratio = ratio(site_fixed)
    overhead = None if site_ratio is None else round((1 - site_ratio) * 100, 1)
    cpu_added = _median(site_fixed.cpu_us) - _median(plain.cpu_us)
    lines = [
        f"gunicorn, {opts.workers} workers each (gunicorn.conf.py: gthread, its threads and "
        "timeouts), DEBUG off, whitenoise, votesite's request lines written to a file; wrk "
        f"{wrk_tool.THREADS} threads, {opts.connections} connections, {opts.http_reps} rounds of"
        f" {opts.http_seconds:g} s (at most {opts.http_requests:,} requests) per endpoint, every"
        " endpoint once a round, interleaved; medians over the rounds. The baseline is plain "
        "Django: a fresh `django-admin startproject` with its default MIDDLEWARE serving the "
        "same fixed JSON from gunicorns of its own started the same way (bench/baseline.py); "
        "the second reference is the same project with MIDDLEWARE = []. The floors are the "
        "baseline project making a hot path's Redis round trips with redis-py alone, nothing of"
        " votesite's: one script call answered as JSON (a vote's one round trip), and the "
        "book's listing (ZREVRANGE of score:, 25 HGETALL pipelined) through a Django template "
        "and as JSON: what any Django view pays for that much Redis on this machine. Worker CPU"
        " is the serving workers' user + system time (/proc) over the requests wrk completed; "
        "Redis CPU is INFO cpu's over the same. The vote endpoint spreads random articles over "
        f"{USERS:,} token-authenticated users, timed warm: each token used {TOKEN_WARM_USES} "
        "times before the rounds and kept by the workers for the whole part (no query a vote); "
        "logged-in pages send one user's session.",
        "",
        f"votesite's middleware on the fixed view: {overhead if overhead is not None else '-'} % "
        f"fewer requests/s than the baseline, {cpu_added:,.0f} µs more worker CPU a request.",
        f"The article page with its thread: {thread.get('thread', 0):,} bytes logged in, "
        f"{thread.get('shown', 0)} comments shown, {thread.get('per_comment', float('nan')):,.0f} "
        f"bytes a comment (against the same page without comments, {thread.get('plain', 0):,} "
        "bytes).",
    ]
    for group, title in TITLES.items():
        lines += ["", f"**{title}**", "", *head, *(row(e) for e in points if e.group == group)]
    report.section("HTTP (gunicorn, production settings, loopback, wrk)", lines)
    report.goal(
        "HTTP votesite middleware overhead: 1 - (votesite fixed view / plain Django fixed view)",
        overhead,
        MIDDLEWARE_OVERHEAD * 100,
        unit="%",
        at_most=True,
    )
    for e in points:
        if e.target is None:
            continue
        cached = " (page cache on)" if e.group == CACHED else ""
        report.goal(f"HTTP {e.name}{cached}: requests/s vs plain Django", ratio(e), e.target)
    for e in points:
        if e.available:
            report.goal(f"HTTP {e.name}: p99 ms", _median(e.p99), 50, unit="", at_most=True)
            report.goal(f"HTTP {e.name}: errors", e.errors, 0, unit="", at_most=True)


def _users_and_tokens() -> list[str]:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from articles.models import ApiToken
    from articles.store.tokens import token_digest

    call_command("migrate", database="default", verbosity=0, interactive=False)
    User = get_user_model()
    users = User.objects.bulk_create(
        [User(username=f"bench{n}", password="!") for n in range(USERS)]
    )
    if not users[0].pk:
        users = list(User.objects.filter(username__startswith="bench"))
    keys = [secrets.token_hex(20) for _ in users]
    ApiToken.objects.bulk_create(
        [
            ApiToken(digest=token_digest(k), prefix=k[:8], user=u)
            for k, u in zip(keys, users, strict=True)
        ]
    )
    return keys


def _session_cookie() -> str:
    """A logged-in session of the first benchmark user, as a Cookie header's value."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )

    user = get_user_model().objects.filter(username="bench0").get()
    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return f"{settings.SESSION_COOKIE_NAME}={session.session_key}"


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def, override]
        return None  # the 3xx is raised as an HTTPError: the probe sees it


def _probe(
    base: str, endpoint: Endpoint, token: str, cookie: str = "", queries: list[str] | None = None
) -> None:
    """A path that answers 404 (no such route yet) is reported as not available, and so
    is one that redirects (wrk would time the redirect, not the page). Keeps the body's size."""
    if endpoint.kind == "vote":
        request = urllib.request.Request(  # noqa: S310 - our own loopback server
            base + endpoint.path,
            data=json.dumps({"value": "up"}).encode(),
            method="PUT",
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )
    else:
        headers = {"Cookie": cookie} if endpoint.logged_in else {}
        path = endpoint.path + ((queries or [""])[0] if endpoint.kind == "search" else "")
        request = urllib.request.Request(base + path, headers=headers)  # noqa: S310
    try:
        with urllib.request.build_opener(_NoRedirects).open(request, timeout=10) as response:
            status = response.status
            endpoint.bytes = len(response.read())
    except urllib.error.HTTPError as exc:
        status = exc.code
    if status >= 300:
        endpoint.available = False
        endpoint.why = f"{status} on this branch" if status == 404 else f"answers {status}"
