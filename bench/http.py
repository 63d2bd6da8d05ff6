"""HTTP through gunicorn (production settings, loopback) driven by wrk, bounded in time
and in requests: the API, the pages and the vote endpoint, each against plain Django (a
fresh startproject serving fixed JSON, bench/baseline.py) served the same way in the
same run."""

from __future__ import annotations

import json
import re
import secrets
import shutil
import statistics
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

GROUP_API = "/api/groups/bench/articles/"
USERS = 2_000  # voters for the vote endpoint (spreads any per-user rate limit)

LUA = """
local max_requests = {max_requests}
local kind = "{kind}"
local path = "{path}"
local max_id = {max_id}
local tokens = {{{tokens}}}
local cookie = "{cookie}"
local sent = 0
init = function(args)
  math.randomseed(tonumber(tostring({{}}):match("0x(%x+)") or "1", 16) % 2147483647)
end
request = function()
  sent = sent + 1
  if kind == "vote" then
    local id = math.random(1, max_id)
    local token = tokens[math.random(1, #tokens)]
    return wrk.format("PUT", "/api/articles/" .. id .. "/vote/",
      {{["Authorization"] = "Token " .. token, ["Content-Type"] = "application/json"}},
      '{{"value": "up"}}')
  end
  local headers = {{}}
  if cookie ~= "" then headers["Cookie"] = cookie end
  if kind == "article" then
    return wrk.format("GET", "/a/" .. math.random(1, max_id) .. "/", headers)
  end
  return wrk.format("GET", path, headers)
end
response = function(status, headers, body)
  if sent >= max_requests then wrk.thread:stop() end
end
"""


# The HTTP table's groups, in its order.
REFERENCE, UNCACHED, CACHED = "reference", "uncached", "cached"
GROUP_TITLES = {
    REFERENCE: "fixed JSON view: plain Django (the baseline) and votesite",
    UNCACHED: "rendered every time",
    CACHED: "anonymous, served from the per-process page cache (ARTICLES_ANONYMOUS_PAGE_SECONDS)",
}
MIDDLEWARE_OVERHEAD = 0.15  # goal: votesite's middleware costs at most this share of a baseline


@dataclass
class Endpoint:
    name: str
    kind: str  # "get" | "vote" | "article" (a random article's page)
    path: str
    target: float | None  # goal: share of the baseline's requests/s (None: a reference)
    logged_in: bool = False  # sent with a logged-in session's cookie
    group: str = UNCACHED
    server: str = "site"  # "site" | "plain" (baseline, default middleware) | "bare" (none)
    available: bool = True
    why: str = ""
    rps: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    requests: int = 0
    errors: int = 0

    @property
    def median_rps(self) -> float:
        return statistics.median(self.rps) if self.rps else 0.0


def endpoints(user_page: str) -> list[Endpoint]:
    """The baseline first (every ratio is to it), then the references, then votesite's
    pages: those rendered every time apart from those the anonymous page cache serves."""
    return [
        Endpoint(
            "plain Django, default middleware (fresh startproject), fixed JSON",
            "get",
            "/bench/fixed/",
            None,
            group=REFERENCE,
            server="plain",
        ),
        Endpoint(
            "plain Django, no middleware, fixed JSON",
            "get",
            "/bench/fixed/",
            None,
            group=REFERENCE,
            server="bare",
        ),
        Endpoint(
            "votesite's middleware on a fixed view (/bench/fixed/)",
            "get",
            "/bench/fixed/",
            None,
            group=REFERENCE,
        ),
        Endpoint("API page GET /api/articles/", "get", "/api/articles/", 0.4),
        Endpoint("API top GET /api/articles/top/", "get", "/api/articles/top/?period=week", 0.4),
        Endpoint(
            "API group GET /api/groups/bench/articles/", "get", "/api/groups/bench/articles/", 0.4
        ),
        Endpoint("home page GET /, logged in", "get", "/", 0.3, logged_in=True),
        Endpoint("new GET /new/, logged in", "get", "/new/", 0.3, logged_in=True),
        # Anonymous, but a random article each time: the page cache seldom holds it.
        Endpoint("article GET /a/{id}/ (random id)", "article", "/a/1/", 0.3),
        Endpoint("vote PUT /api/articles/{id}/vote/", "vote", "/api/articles/1/vote/", 0.5),
        Endpoint("home page GET / (HTML)", "get", "/", 0.3, group=CACHED),
        Endpoint("new GET /new/", "get", "/new/", 0.3, group=CACHED),
        Endpoint("top GET /top/?period=week", "get", "/top/?period=week", 0.3, group=CACHED),
        Endpoint("group GET /g/bench/", "get", "/g/bench/", 0.3, group=CACHED),
        Endpoint("user GET /u/{name}/", "get", user_page, 0.3, group=CACHED),
    ]


def run(report, opts, env: dict[str, str], directory: Path, now: float) -> None:
    from bench import baseline, servers
    from bench.pages import user_page
    from bench.report import log

    wrk = shutil.which("wrk")
    if wrk is None:
        report.section("HTTP", ["wrk is not installed (apt-get install wrk): HTTP not measured."])
        return
    tokens = _users_and_tokens()
    server_env = {
        k: v for k, v in __import__("os").environ.items() if k != "BENCH_COUNT_ROUND_TRIPS"
    }
    server_env.update(env)
    project = baseline.make(directory / "baseline")
    plain_port, bare_port = servers.free_port(), servers.free_port()
    gunicorns = [
        servers.Gunicorn(opts.port, server_env, workers=opts.workers),
        servers.Gunicorn(
            plain_port,
            baseline.environ(project, baseline.DEFAULT),
            workers=opts.workers,
            app=f"{baseline.PACKAGE}.wsgi:application",
        ),
        servers.Gunicorn(
            bare_port,
            baseline.environ(project, baseline.BARE),
            workers=opts.workers,
            app=f"{baseline.PACKAGE}.wsgi:application",
        ),
    ]
    bases = {
        name: f"http://127.0.0.1:{port}"
        for name, port in (("site", opts.port), ("plain", plain_port), ("bare", bare_port))
    }
    cookie = _session_cookie()
    points = endpoints(user_page())
    try:
        for server in gunicorns:
            server.start()
        for endpoint in points:
            _probe(bases[endpoint.server], endpoint, tokens[0], cookie)
        live = [e for e in points if e.available]
        # Warm every worker's imports and connections before timing.
        for endpoint in live:
            _wrk(wrk, bases[endpoint.server], endpoint, opts, tokens, directory, cookie, 1, 500)
        for rep in range(opts.http_reps):
            for endpoint in live:
                result = _wrk(
                    wrk, bases[endpoint.server], endpoint, opts, tokens, directory, cookie
                )
                endpoint.rps.append(result["rps"])
                endpoint.p50.append(result["p50"])
                endpoint.p99.append(result["p99"])
                endpoint.requests += result["requests"]
                endpoint.errors += result["errors"]
            log(f"HTTP round {rep + 1}/{opts.http_reps} done")
    finally:
        for server in gunicorns:
            server.stop()
    _report(report, opts, points)


def _report(report, opts, points: list[Endpoint]) -> None:
    plain = points[0]
    site_fixed = next(e for e in points if e.group == REFERENCE and e.server == "site")
    base = plain.median_rps

    def ratio(e: Endpoint) -> float | None:
        return e.median_rps / base if e.available and e.rps and base else None

    rows = []
    for group, title in GROUP_TITLES.items():
        rows.append(f"| **{title}** | | | | | | |")
        for e in (e for e in points if e.group == group):
            if not e.available:
                rows.append(f"| {e.name} | not available ({e.why}) | | | | | |")
                continue
            rows.append(
                f"| {e.name} | {e.median_rps:,.0f} | {ratio(e) or 0:.2f}x | "
                f"{statistics.median(e.p50):.1f} | {statistics.median(e.p99):.1f} | "
                f"{e.requests:,} | {e.errors} |"
            )
    site_ratio = ratio(site_fixed)
    overhead = None if site_ratio is None else round((1 - site_ratio) * 100, 1)
    report.section(
        "HTTP (gunicorn, production settings, loopback, wrk)",
        [
            f"gunicorn {opts.workers} workers (worker class and threads from gunicorn.conf.py), "
            f"DEBUG off, whitenoise; wrk 2 threads, "
            f"{opts.connections} connections, {opts.http_reps} rounds of {opts.http_seconds:g} s "
            f"(at most {opts.http_requests:,} requests) per endpoint, interleaved; the vote "
            f"endpoint spreads random articles over {USERS:,} token-authenticated users. "
            "The baseline is plain Django: a fresh `django-admin startproject` with its default "
            "MIDDLEWARE, serving the same fixed JSON from gunicorns of its own started the same "
            "way (bench/baseline.py); the no-middleware row is the same project with "
            "MIDDLEWARE = []. votesite's middleware overhead = 1 - (votesite's fixed view / "
            f"plain Django's): {'not measured' if overhead is None else f'{overhead:g} %'}.",
            "",
            "| endpoint | requests/s | vs plain Django | p50 ms | p99 ms | requests | errors |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ],
    )
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
        cached = " (page cache)" if e.group == CACHED else ""
        report.goal(f"HTTP {e.name}{cached}: requests/s vs plain Django", ratio(e), e.target or 0)
    for e in points:
        if e.available:
            report.goal(
                f"HTTP {e.name}: p99 ms", statistics.median(e.p99), 50, unit="", at_most=True
            )
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


def _probe(base: str, endpoint: Endpoint, token: str, cookie: str = "") -> None:
    """A path that answers 404 (no such route yet) is reported as not available, and so
    is one that redirects (wrk would time the redirect, not the page)."""
    if endpoint.kind == "vote":
        request = urllib.request.Request(  # noqa: S310 - our own loopback server
            base + endpoint.path,
            data=json.dumps({"value": "up"}).encode(),
            method="PUT",
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )
    else:
        headers = {"Cookie": cookie} if endpoint.logged_in else {}
        request = urllib.request.Request(base + endpoint.path, headers=headers)  # noqa: S310
    try:
        with urllib.request.build_opener(_NoRedirects).open(request, timeout=10) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    if status >= 300:
        endpoint.available = False
        endpoint.why = f"{status} on this branch" if status == 404 else f"answers {status}"


def _wrk(
    wrk: str,
    base: str,
    endpoint: Endpoint,
    opts,
    tokens: list[str],
    directory: Path,
    cookie: str = "",
    seconds: float | None = None,
    requests: int | None = None,
) -> dict[str, float]:
    threads = 2
    total = requests or opts.http_requests
    script = directory / f"wrk-{endpoint.kind}{'-in' if endpoint.logged_in else ''}.lua"
    script.write_text(
        LUA.format(
            max_requests=max(1, total // threads),
            kind=endpoint.kind,
            path=endpoint.path,
            max_id=opts.articles,
            tokens=",".join(f'"{t}"' for t in tokens),
            cookie=cookie if endpoint.logged_in else "",
        )
    )
    duration = max(1, round(seconds or opts.http_seconds))
    out = subprocess.run(
        [
            wrk,
            "-t",
            str(threads),
            "-c",
            str(opts.connections),
            "-d",
            f"{duration}s",
            "--timeout",
            "5s",
            "--latency",
            "-s",
            str(script),
            base + endpoint.path,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=duration + 30,
    ).stdout
    return parse_wrk(out)


def parse_wrk(out: str) -> dict[str, float]:
    def latency(pct: str) -> float:
        match = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    done = re.search(r"(\d+) requests in", out)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    errors = int(non2xx.group(1)) if non2xx else 0
    if sockets:
        errors += sum(int(n) for n in sockets.groups())
    return {
        "rps": float(rps.group(1)) if rps else 0.0,
        "p50": latency("50"),
        "p99": latency("99"),
        "requests": int(done.group(1)) if done else 0,
        "errors": errors,
    }
