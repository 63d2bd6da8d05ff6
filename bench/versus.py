"""The site's lean middleware against the libraries' own, in one process on the same
request: django-csp's CSPMiddleware and ours (its header built once), django-prometheus'
After middleware and ours (series kept), and the request line as structlog's bound
logger and ConsoleRenderer made it and as it is made now. µs of CPU per request above
get_response alone, median of interleaved repeats.

    python -m bench.versus [--reps 21] [--calls 1000]
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import tempfile
import time
import timeit
from collections.abc import Callable
from typing import Any

FIELDS = {
    "method": "GET",
    "status": 200,
    "duration_ms": 0.5,
    "user_id": None,
    "client": "127.0.0.1",
    "user_agent": "wrk",
    "query": "",
}


def pairs() -> dict[str, tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any] | None]]:
    """name: (the library's, ours, the control to subtract or None)."""
    import structlog
    from csp.middleware import CSPMiddleware
    from django.http import JsonResponse
    from django.test import RequestFactory
    from django.urls import resolve
    from django_prometheus.middleware import PrometheusAfterMiddleware

    from votesite import logs
    from votesite.metrics import RequestMetricsMiddleware
    from votesite.security import ContentSecurityPolicyMiddleware

    factory = RequestFactory()

    def request() -> Any:
        made = factory.get("/bench/fixed/", HTTP_HOST="127.0.0.1")
        made.resolver_match = resolve("/bench/fixed/")
        return made

    def view(request: Any) -> JsonResponse:
        return JsonResponse({"status": "ok"})

    def through(middleware: Any) -> Callable[[], Any]:
        instance = middleware(view)
        return lambda: instance(request())

    formatter: Any = logging.getLogger().handlers[0].formatter
    ours, theirs = formatter.processors[-1], structlog.dev.ConsoleRenderer(colors=False)
    bound = structlog.get_logger("votesite.requests")
    structlog.contextvars.bind_contextvars(request_id="a" * 32, path="/bench/fixed/")

    def line_before() -> None:
        formatter.processors[-1] = theirs
        bound.log(logging.INFO, "request", **FIELDS)

    def line_now() -> None:
        formatter.processors[-1] = ours
        logs.write_request_line(logging.INFO, dict(FIELDS))

    def control() -> Any:
        return view(request())

    return {
        "request line (made, rendered, written)": (line_before, line_now, None),
        "Content-Security-Policy": (
            through(CSPMiddleware),
            through(ContentSecurityPolicyMiddleware),
            control,
        ),
        "Prometheus, after the others": (
            through(PrometheusAfterMiddleware),
            through(RequestMetricsMiddleware),
            control,
        ),
    }


def measure(reps: int, calls: int) -> list[tuple[str, float, float]]:
    """(name, the library's µs, ours µs) per pair."""
    rows = []
    for name, (before, now, control) in pairs().items():
        spent: dict[str, list[float]] = {"before": [], "now": [], "control": []}
        timed = {"before": before, "now": now, **({"control": control} if control else {})}
        for _ in range(reps):
            for which, call in timed.items():
                timer = timeit.Timer(call, timer=time.process_time)
                spent[which].append(timer.timeit(calls) / calls * 1e6)
        base = statistics.median(spent["control"]) if control else 0.0
        rows.append(
            (
                name,
                statistics.median(spent["before"]) - base,
                statistics.median(spent["now"]) - base,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args(argv)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)  # the request lines, as bench.middleware sends them
    directory = tempfile.mkdtemp(prefix="vs-versus-", dir="/tmp")
    os.environ.update(DJANGO_SETTINGS_MODULE="bench.settings", DJANGO_DEBUG="false")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-" + "x" * 50)
    os.environ.setdefault("BENCH_DIR", directory)
    os.environ.setdefault("VOTESITE_VAR_DIR", directory)
    import django

    django.setup()
    print("| middleware | the library's, µs | ours, µs |\n|---|---|---|")
    for name, before, now in measure(args.reps, args.calls):
        print(f"| {name} | {before:.0f} | {now:.0f} |", flush=True)
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
