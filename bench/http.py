"""HTTP through gunicorn (production settings, loopback) driven by wrk, bounded in time
and in requests: the API page, the home page, the vote endpoint, and a bare Django view
returning fixed JSON in the same server configuration."""

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


@dataclass
class Endpoint:
    name: str
    kind: str  # "get" | "vote" | "article" (a random article's page)
    path: str
    target: float | None  # goal: share of the bare view's requests/s
    logged_in: bool = False  # sent with a logged-in session's cookie
    available: bool = True
    why: str = ""
    rps: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    requests: int = 0
    errors: int = 0


def run(report, opts, env: dict[str, str], directory: Path, now: float) -> None:
    from bench import servers
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
    server = servers.Gunicorn(opts.port, server_env, workers=opts.workers)
    cookie = _session_cookie()
    endpoints = [
        Endpoint("bare Django view, fixed JSON", "get", "/bench/fixed/", None),
        Endpoint("API page GET /api/articles/", "get", "/api/articles/", 0.4),
        Endpoint("API top GET /api/articles/top/", "get", "/api/articles/top/?period=week", 0.4),
        Endpoint(
            "API group GET /api/groups/bench/articles/", "get", "/api/groups/bench/articles/", 0.4
        ),
        Endpoint("home page GET / (HTML)", "get", "/", 0.3),
        Endpoint("new GET /new/", "get", "/new/", 0.3),
        Endpoint("top GET /top/?period=week", "get", "/top/?period=week", 0.3),
        Endpoint("group GET /g/bench/", "get", "/g/bench/", 0.3),
        Endpoint("user GET /u/{name}/", "get", user_page(), 0.3),
        Endpoint("article GET /a/{id}/", "article", "/a/1/", 0.3),
        Endpoint("home page GET /, logged in", "get", "/", 0.3, logged_in=True),
        Endpoint("new GET /new/, logged in", "get", "/new/", 0.3, logged_in=True),
        Endpoint("vote PUT /api/articles/{id}/vote/", "vote", "/api/articles/1/vote/", 0.5),
    ]
    base = f"http://127.0.0.1:{opts.port}"
    try:
        server.start()
        for endpoint in endpoints:
            _probe(base, endpoint, tokens[0], cookie)
        live = [e for e in endpoints if e.available]
        # Warm every worker's imports and connections before timing.
        for endpoint in live:
            _wrk(wrk, base, endpoint, opts, tokens, directory, cookie, seconds=1, requests=500)
        for rep in range(opts.http_reps):
            for endpoint in live:
                result = _wrk(wrk, base, endpoint, opts, tokens, directory, cookie)
                endpoint.rps.append(result["rps"])
                endpoint.p50.append(result["p50"])
                endpoint.p99.append(result["p99"])
                endpoint.requests += result["requests"]
                endpoint.errors += result["errors"]
            log(f"HTTP round {rep + 1}/{opts.http_reps} done")
    finally:
        server.stop()

    fixed = endpoints[0]
    rows = []
    for e in endpoints:
        if not e.available:
            rows.append(f"| {e.name} | not available ({e.why}) | | | | | |")
            continue
        ratio = statistics.median(e.rps) / statistics.median(fixed.rps) if fixed.rps else 0
        rows.append(
            f"| {e.name} | {statistics.median(e.rps):,.0f} | {ratio:.2f}x | "
            f"{statistics.median(e.p50):.1f} | {statistics.median(e.p99):.1f} | "
            f"{e.requests:,} | {e.errors} |"
        )
    report.section(
        "HTTP (gunicorn, production settings, loopback, wrk)",
        [
            f"gunicorn {opts.workers} sync workers, DEBUG off, whitenoise; wrk 2 threads, "
            f"{opts.connections} connections, {opts.http_reps} rounds of {opts.http_seconds:g} s "
            f"(at most {opts.http_requests:,} requests) per endpoint, interleaved; the vote "
            f"endpoint spreads random articles over {USERS:,} token-authenticated users.",
            "",
            "| endpoint | requests/s | vs bare view | p50 ms | p99 ms | requests | errors |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ],
    )
    for e in endpoints[1:]:
        if not e.available:
            report.goal(f"HTTP {e.name}: requests/s vs bare view", None, e.target or 0)
            continue
        report.goal(
            f"HTTP {e.name}: requests/s vs bare view",
            statistics.median(e.rps) / statistics.median(fixed.rps),
            e.target or 0,
        )
    for e in endpoints:
        if e.available:
            report.goal(
                f"HTTP {e.name}: p99 ms", statistics.median(e.p99), 50, unit="", at_most=True
            )
            report.goal(f"HTTP {e.name}: errors", e.errors, 0, unit="", at_most=True)


def _users_and_tokens() -> list[str]:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from articles.api.tokens import token_digest
    from articles.models import ApiToken

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
