"""What each of votesite's middleware costs on a request with no work behind it: the fixed
JSON view (bench/urls.py) through Django's WSGI handler, with MIDDLEWARE's first 0, 1, 2,
... of them (a middleware's cost: the stack up to it less the stack before it; leaving one
out instead would break those needing an earlier one, as auth needs sessions), beside a
fresh `django-admin startproject` (bench/baseline.py) serving the same body with its
default MIDDLEWARE and with none, timed the same way. votesite runs on its own settings
(bench/site_settings.py), not on bench.settings with the other parts' databases.

    python -m bench.middleware [--reps 9] [--calls 2000]

Each configuration is a WSGIHandler of its own in one process (the plain projects in a
process of their own: Django's settings are one per process); rounds are interleaved and
each figure is the median over rounds of CPU (time.process_time) per request. A request
is a plain anonymous GET as wrk sends it, answered and closed (request_finished fires).
The request log goes where gunicorn sends it (stderr), here to /dev/null: its cost is
the line's making and writing, not the terminal's.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PATH = "/bench/fixed/"
FULL = "votesite, whole MIDDLEWARE"
NONE = "votesite, no middleware"


def environ(
    path: str = PATH, method: str = "GET", body: bytes = b"", **extra: str
) -> dict[str, Any]:
    """A request as wrk sends it (Host, no cookie; by default a GET with no body), with
    `extra` environ keys (headers as HTTP_*)."""
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "REMOTE_PORT": "40000",
        "HTTP_HOST": "127.0.0.1:8000",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
        **extra,
    }


def caller(handler: Callable[..., Any], path: str = PATH) -> Callable[[], int]:
    """One request through `handler`: its status (the body read and the response closed)."""
    status: list[str] = []

    def start_response(line: str, headers: list, exc_info: Any = None) -> None:
        status.append(line)

    def call() -> int:
        status.clear()
        body = handler(environ(path), start_response)
        try:
            b"".join(body)
        finally:
            body.close()
        return int(status[0].split()[0])

    return call


def handler_with(middleware: list[str]) -> Callable[..., Any]:
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import override_settings

    with override_settings(MIDDLEWARE=middleware):
        return WSGIHandler()  # reads MIDDLEWARE once, here


def time_rounds(calls: dict[str, Callable[[], int]], reps: int, per_round: int) -> dict:
    """{name: [µs of CPU per request, one a round]}: every configuration once a round, in
    a shuffled order, after a warm-up."""
    for name, call in calls.items():
        for _ in range(50):
            if call() != 200:
                raise SystemExit(f"{name}: the fixed view does not answer 200")
    return cpu_rounds(calls, reps, per_round)


def cpu_rounds(
    calls: dict[str, Callable[[], int]], reps: int, per_round: int
) -> dict[str, list[float]]:
    """{name: [µs of process CPU per call, one a round]}: every call `per_round` times once
    a round, in a shuffled order, so a busy machine weighs on them alike."""
    spent: dict[str, list[float]] = {name: [] for name in calls}
    order = list(calls)
    shuffle = random.Random(3)
    for _ in range(reps):
        shuffle.shuffle(order)
        for name in order:
            call = calls[name]
            start = time.process_time()
            for _ in range(per_round):
                call()
            spent[name].append((time.process_time() - start) / per_round * 1e6)
    return spent


LOCALE = "django.middleware.locale.LocaleMiddleware"


def stack() -> list[str]:
    """votesite's MIDDLEWARE, with Django's LocaleMiddleware after the sessions' where the
    settings have none (translations add it there: its cost counts)."""
    from django.conf import settings

    middleware = list(settings.MIDDLEWARE)
    if not any(path.endswith(".LocaleMiddleware") for path in middleware):
        at = next(i for i, path in enumerate(middleware, 1) if path.endswith(".SessionMiddleware"))
        middleware.insert(at, LOCALE)
    return middleware


def votesite_costs(reps: int, per_round: int) -> dict[str, list[float]]:
    """No middleware, then MIDDLEWARE up to each one (named by its last), the whole last."""
    middleware = stack()
    calls = {NONE: caller(handler_with([]))}
    for n, path in enumerate(middleware, 1):
        calls[FULL if n == len(middleware) else path] = caller(handler_with(middleware[:n]))
    return time_rounds(calls, reps, per_round)


def plain_costs(reps: int, per_round: int) -> tuple[dict[str, list[float]], list[str]]:
    """The fresh startproject's fixed view, default MIDDLEWARE and none, in its own process;
    and its MIDDLEWARE."""
    import shutil

    from bench import baseline

    directory = baseline.make(Path(tempfile.mkdtemp(prefix="vs-baseline-", dir="/tmp")))
    try:
        out = subprocess.run(
            [
                *(sys.executable, "-m", "bench.middleware", "--inside-plain"),
                *("--reps", str(reps), "--calls", str(per_round)),
            ],
            env={
                **baseline.environ(directory, baseline.DEFAULT),
                "PYTHONPATH": f"{directory}{os.pathsep}{baseline.ROOT}",
            },
            cwd=directory,
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        ).stdout
        found = json.loads(out.strip().splitlines()[-1])
        return found["times"], found["middleware"]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _inside_plain(reps: int, per_round: int) -> dict[str, Any]:
    import django

    django.setup()
    from django.conf import settings

    calls = {
        "plain Django, default MIDDLEWARE": caller(handler_with(list(settings.MIDDLEWARE))),
        "plain Django, no middleware": caller(handler_with([])),
    }
    return {"times": time_rounds(calls, reps, per_round), "middleware": settings.MIDDLEWARE}


def table(
    site: dict[str, list[float]], plain: dict[str, list[float]], defaults: list[str]
) -> list[str]:
    """Markdown: the references, then each middleware's cost (the stack up to it less the
    stack before it) in µs and as a share of the plain project's request; those a fresh
    project has too (`defaults`) are marked (default)."""
    med = {name: statistics.median(v) for name, v in {**plain, **site}.items()}
    base = med["plain Django, default MIDDLEWARE"]
    full = med[FULL]
    lines = [
        "| request / middleware | µs CPU per request | % of plain Django's request |",
        "|---|---|---|",
        *(f"| {name} | {med[name]:.0f} | {med[name] / base * 100:.0f} % |" for name in plain),
        f"| {NONE} | {med[NONE]:.0f} | {med[NONE] / base * 100:.0f} % |",
        f"| {FULL} | {full:.0f} | {full / base * 100:.0f} % |",
        f"| **added by votesite (whole - plain default)** | {full - base:.0f} | "
        f"{(full - base) / base * 100:.1f} % |",
    ]
    before = med[NONE]
    middleware = stack()
    for path in middleware:
        now = med[FULL if path == middleware[-1] else path]
        cost, before = now - before, now
        mark = " (default)" if path in defaults else ""
        lines.append(f"| {path}{mark} | {cost:.0f} | {cost / base * 100:.1f} % |")
    return lines


def added_share(site: dict[str, list[float]], plain: dict[str, list[float]]) -> float:
    """The share of the plain project's request that votesite's stack adds, in %."""
    base = statistics.median(plain["plain Django, default MIDDLEWARE"])
    return (statistics.median(site[FULL]) - base) / base * 100


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2000, help="requests per round")
    parser.add_argument("--json", action="store_true", help="the table and share as JSON")
    parser.add_argument("--inside-plain", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    # The request lines' stream, as gunicorn's would be a pipe or a file: the cost of
    # writing a line stays in, a terminal's does not.
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    if args.inside_plain:
        print(json.dumps(_inside_plain(args.reps, args.calls)))
        return
    directory = Path(tempfile.mkdtemp(prefix="vs-mw-", dir="/tmp"))
    # votesite's own settings: bench.settings' extra databases and caches would add a
    # walk of their aliases to every request (bench/site_settings.py).
    os.environ.update(DJANGO_SETTINGS_MODULE="bench.site_settings", DJANGO_DEBUG="false")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-" + "x" * 50)
    os.environ.setdefault("BENCH_DIR", str(directory))
    os.environ.setdefault("VOTESITE_VAR_DIR", str(directory))
    try:
        import django

        django.setup()
        plain, defaults = plain_costs(args.reps, args.calls)
        site = votesite_costs(args.reps, args.calls)
        lines, added = table(site, plain, defaults), added_share(site, plain)
    finally:
        import shutil

        shutil.rmtree(directory, ignore_errors=True)
    if args.json:
        print(json.dumps({"lines": lines, "added": added}))
    else:
        print("\n".join(lines) + f"\n\nadded by votesite's middleware: {added:.1f} %")


def run(report: Any, opts: Any) -> None:
    """The per-middleware table in the full run (bench/run.py), from a process of its own,
    and the goal on the share votesite's stack adds."""
    from bench.report import log

    log("timing each middleware in-process")
    env = {k: v for k, v in os.environ.items() if k != "BENCH_COUNT_ROUND_TRIPS"}
    out = subprocess.run(
        [
            *(sys.executable, "-m", "bench.middleware", "--json"),
            *("--reps", str(opts.middleware_reps), "--calls", str(opts.middleware_calls)),
        ],
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    ).stdout
    found = json.loads(out.strip().splitlines()[-1])
    report.section(
        "Middleware, in-process: what each one costs",
        [
            "The fixed JSON view through Django's WSGI handler (no server, no socket), CPU "
            "per request, median of "
            f"{opts.middleware_reps} interleaved rounds of {opts.middleware_calls:,} requests: "
            "votesite with no middleware, then with MIDDLEWARE's first 1, 2, ... of them (a "
            "middleware's cost is the stack up to it less the stack before it), beside a fresh "
            "startproject with its default MIDDLEWARE (the baseline) and with none, in a "
            "process of its own. (default) marks those the baseline has too. The request "
            "lines go to /dev/null: making and writing them counts, a terminal does not. "
            "Differences of a few µs are within the noise.",
            "",
            *found["lines"],
        ],
    )
    report.goal(
        "in-process votesite middleware overhead: (whole stack - baseline) / baseline",
        round(found["added"], 1),
        15,
        unit="%",
        at_most=True,
    )


if __name__ == "__main__":
    main()
