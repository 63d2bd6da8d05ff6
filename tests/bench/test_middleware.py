"""The lean middleware write what the libraries' own would (the same request line, the same
headers, the same metric series), and the benchmark times each middleware of the stack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import structlog
from csp.middleware import CSPMiddleware
from django.conf import settings
from django.http import HttpResponse
from django.test import RequestFactory, override_settings
from prometheus_client import REGISTRY

from votesite.logs import ConsoleRenderer
from votesite.security import ContentSecurityPolicyMiddleware

ROOT = Path(__file__).resolve().parents[2]

LINES = [
    {
        "event": "request",
        "method": "GET",
        "status": 200,
        "duration_ms": 0.5,
        "user_id": None,
        "client": "127.0.0.1",
        "user_agent": "Mozilla/5.0 (X11; Linux)",
        "query": "page=1&x=%22y%22",
        "request_id": "lb-42.abc",
        "path": "/new/",
        "level": "info",
        "logger": "votesite.requests",
        "timestamp": "2026-11-25T19:37:42.848757Z",
    },
    {"event": "an event longer than the thirty characters of its column", "level": "warning"},
    {"event": "", "level": "", "timestamp": "", "logger_name": "x"},
    {"event": 12, "level": "critical", "b": b"bytes", "f": 1.5, "l": ["a b"], "t": "tab\there"},
    {"event": "e", "positional_args": ("a",), "logger": "py.warnings", "level": "exception"},
    {"event": "x", "u": "ünïcode", "q": 'say "hi"', "e": "a=b", "s": "it's", "n": "new\nline"},
    {"level": "info"},
]


@pytest.mark.parametrize("line", LINES)
def test_the_console_renderer_writes_structlogs_own_line(line: dict) -> None:
    ours = ConsoleRenderer()(None, "info", dict(line))
    assert ours == structlog.dev.ConsoleRenderer(colors=False)(None, "info", dict(line))


def test_a_line_with_a_traceback_is_rendered_by_structlog() -> None:
    try:
        raise ValueError("boom")
    except ValueError as exc:
        line = {"event": "failed", "level": "error", "exc_info": exc}
        ours = ConsoleRenderer()(None, "error", dict(line))
    assert "ValueError" in ours and "boom" in ours and ours.startswith("[error    ] failed")


def _both(request_path: str = "/", **response_attrs: object) -> tuple[HttpResponse, HttpResponse]:
    """The same response through django-csp's middleware and ours."""
    answers = []
    for middleware in (CSPMiddleware, ContentSecurityPolicyMiddleware):
        request = RequestFactory().get(request_path)
        response = HttpResponse("ok")
        for name, value in response_attrs.items():
            setattr(response, name, value)
        m = middleware(lambda r, response=response: response)
        m.process_request(request)
        answers.append(m.process_response(request, response))
    return answers[0], answers[1]


def test_the_csp_header_built_once_is_django_csps_header() -> None:
    theirs, ours = _both()
    assert ours["Content-Security-Policy"] == theirs["Content-Security-Policy"]
    assert "script-src 'self'" in ours["Content-Security-Policy"]
    assert "Content-Security-Policy-Report-Only" not in ours

    # A view's own policy (the browsable API's, the docs pages') still applies.
    update = {"style-src": ["'unsafe-inline'"]}
    theirs, ours = _both(_csp_update=update)
    assert ours["Content-Security-Policy"] == theirs["Content-Security-Policy"]
    assert "'unsafe-inline'" in ours["Content-Security-Policy"]
    theirs, ours = _both(_csp_exempt=True)
    assert "Content-Security-Policy" not in ours and "Content-Security-Policy" not in theirs


def test_the_csp_header_follows_the_settings_and_their_exclusions() -> None:
    policy = {"DIRECTIVES": {"default-src": ["'none'"]}, "EXCLUDE_URL_PREFIXES": ["/skip/"]}
    report_only = {"DIRECTIVES": {"img-src": ["'self'"]}}
    with override_settings(
        CONTENT_SECURITY_POLICY=policy, CONTENT_SECURITY_POLICY_REPORT_ONLY=report_only
    ):
        theirs, ours = _both()
        assert ours["Content-Security-Policy"] == "default-src 'none'"
        assert "img-src 'self'" in ours["Content-Security-Policy-Report-Only"]
        assert ours.headers == theirs.headers
        theirs, ours = _both("/skip/this/")
        assert "Content-Security-Policy" not in ours and ours.headers == theirs.headers
    _, ours = _both()
    assert ours["Content-Security-Policy"] != "default-src 'none'"


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.django_db
def test_the_request_metrics_count_each_request_in_django_prometheus_series(client) -> None:
    assert "votesite.metrics.RequestMetricsMiddleware" in settings.MIDDLEWARE
    by_status = ("django_http_responses_total_by_status_total", {"status": "200"})
    by_view = (
        "django_http_responses_total_by_status_view_method_total",
        {"status": "404", "view": "<unnamed view>", "method": "GET"},
    )
    by_method = ("django_http_requests_total_by_method_total", {"method": "GET"})
    before = [_sample(name, **labels) for name, labels in (by_status, by_view, by_method)]
    for _ in range(3):
        assert client.get("/top/").status_code == 200
        assert client.get("/no/such/page/").status_code == 404
    after = [_sample(name, **labels) for name, labels in (by_status, by_view, by_method)]
    assert [a - b for a, b in zip(after, before, strict=True)] == [3, 3, 6]


@pytest.mark.slow
def test_the_middleware_part_times_every_middleware_of_the_stack() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.middleware", "--json", "--reps", "1", "--calls", "20"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    found = json.loads(out.strip().splitlines()[-1])
    table = "\n".join(found["lines"])
    for path in settings.MIDDLEWARE:
        assert f"| {path}" in table, path
    assert "django.middleware.locale.LocaleMiddleware" in table
    assert "plain Django, default MIDDLEWARE" in table and "plain Django, no middleware" in table
    assert isinstance(found["added"], float)


def test_the_versus_part_times_the_libraries_middleware_beside_ours() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.versus", "--reps", "1", "--calls", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    rows = [line for line in out.splitlines() if line.startswith("| ") and "µs" not in line]
    assert [row.split(" | ")[0] for row in rows] == [
        "| request line (made, rendered, written)",
        "| Content-Security-Policy",
        "| Prometheus, after the others",
    ]


def _samples() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every django_http_ sample but the latencies' buckets and sums (they hold times)."""
    found = {}
    for family in REGISTRY.collect():
        for sample in family.samples:
            timing = "latency" in sample.name and not sample.name.endswith("_count")
            created = sample.name.endswith("_created")  # when a series was first made
            if sample.name.startswith("django_http_") and not timing and not created:
                found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_the_request_metrics_record_what_django_prometheus_records() -> None:
    from django.http import HttpResponseNotFound, StreamingHttpResponse
    from django.urls import resolve
    from django_prometheus.middleware import PrometheusAfterMiddleware

    from votesite.metrics import RequestMetricsMiddleware

    def responses() -> list[HttpResponse]:
        return [
            HttpResponse("ok"),
            HttpResponse(b"x" * 5000, content_type="text/html; charset=latin-1"),
            HttpResponseNotFound("gone"),
            StreamingHttpResponse(iter([b"a", b"b"])),
        ]

    def through(middleware: type) -> dict:
        before = _samples()
        for response in responses():
            request = RequestFactory().post("/new/", {"a": "b"})
            request.resolver_match = resolve("/new/")
            m = middleware(lambda r, response=response: response)
            m(request)
        after = _samples()
        return {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}

    theirs = through(PrometheusAfterMiddleware)
    assert theirs  # it counted something
    assert through(RequestMetricsMiddleware) == theirs
