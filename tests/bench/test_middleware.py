"""The lean middleware write what the libraries' own would (the same request line, the same
headers, the same metric series), and the benchmark times each middleware of the stack."""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from csp.middleware import CSPMiddleware
from django.conf import settings
from django.conf.urls.i18n import i18n_patterns
from django.http import HttpResponse
from django.test import RequestFactory, override_settings
from django.urls import path as url_path
from django.utils import translation
from prometheus_client import REGISTRY

from votesite import logs
from votesite.logs import ConsoleRenderer
from votesite.security import PERMISSIONS_POLICY, ContentSecurityPolicyMiddleware

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
    {},
    {"timestamp": "", "a": "x y"},
]


@pytest.mark.parametrize("line", LINES)
def test_the_console_renderer_writes_structlogs_own_line(line: dict) -> None:
    ours = ConsoleRenderer()(None, "info", dict(line))
    assert ours == structlog.dev.ConsoleRenderer(colors=False)(None, "info", dict(line))


REQUEST_LINES = [
    LINES[0],
    {**LINES[0], "user_id": 7, "query": "", "user_agent": 'say "hi" = x', "client": "unknown"},
    {**LINES[0], "level": "error", "status": 503, "duration_ms": 1234.5, "path": "/a b/"},
    {**LINES[0], "user_agent": "", "method": "<invalid method>", "request_id": "a" * 32},
]


@pytest.mark.parametrize("line", REQUEST_LINES)
def test_the_request_line_made_with_its_keys_known_is_structlogs_line(line: dict) -> None:
    assert line.keys() == logs._REQUEST_LINE
    ours = ConsoleRenderer().request_line(dict(line))
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
    assert "LocaleMiddleware" in table
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
    from django.http import HttpResponseNotFound, JsonResponse, StreamingHttpResponse
    from django.urls import resolve
    from django_prometheus.middleware import PrometheusAfterMiddleware

    from votesite.metrics import RequestMetricsMiddleware

    def responses() -> list[HttpResponse]:
        written = HttpResponse(b"x" * 3000)
        written.write(b"y" * 2000)  # a body in two parts, its size measured without a copy
        return [
            HttpResponse("ok"),
            HttpResponse(b"x" * 5000, content_type="text/html; charset=latin-1"),
            HttpResponse(b"x" * 4096),  # on a bucket's bound
            written,
            HttpResponseNotFound("gone"),
            StreamingHttpResponse(iter([b"a", b"b"])),
            JsonResponse({"a": 1}),  # a Content-Type without a charset: DEFAULT_CHARSET's
            HttpResponse("ok", charset="utf-16"),
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
    with override_settings(DEFAULT_CHARSET="latin-1"):  # the charsets found once, again
        theirs = through(PrometheusAfterMiddleware)
        ours = through(RequestMetricsMiddleware)
    assert ours == theirs
    key = ("django_http_responses_total_by_charset_total", (("charset", "latin-1"),))
    assert ours[key] > 0


def _before_samples() -> dict[str, float]:
    names = (
        "django_http_requests_before_middlewares_total",
        "django_http_responses_before_middlewares_total",
        "django_http_requests_latency_including_middlewares_seconds_count",
        "django_http_requests_unknown_latency_including_middlewares_total",
    )
    return {name: _sample(name) for name in names}


def test_the_outer_layer_counts_what_prometheus_before_middleware_counts() -> None:
    from django_prometheus.middleware import PrometheusBeforeMiddleware

    from votesite.observability import ObservabilityMiddleware

    def through(middleware: type) -> dict[str, float]:
        before = _before_samples()
        m = middleware(lambda r: HttpResponse("ok"))
        for _ in range(3):
            m(RequestFactory().get("/new/"))
        return {k: v - before[k] for k, v in _before_samples().items()}

    theirs = through(PrometheusBeforeMiddleware)
    assert theirs["django_http_requests_before_middlewares_total"] == 3
    assert through(ObservabilityMiddleware) == theirs


@pytest.fixture
def only_handler(settings) -> Iterator[Callable[[str], io.StringIO]]:  # type: ignore[no-untyped-def]
    """`use(fmt)`: the root logger's one handler writes to a StringIO with the settings'
    formatter for `fmt`, as under gunicorn or runserver (no test capture)."""
    root = logging.getLogger()
    saved = root.handlers[:]

    def use(fmt: str) -> io.StringIO:
        config = logs.logging_config(fmt=fmt, level="INFO")["formatters"]["structured"]
        formatter = config.pop("()")(**config)
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        handler.setFormatter(formatter)
        root.handlers[:] = [handler]
        return stream

    yield use
    root.handlers[:] = saved
    logs.logging_config(fmt="console", level="INFO")  # structlog as the settings left it


@pytest.mark.parametrize("fmt", ["console", "json"])
def test_the_request_line_written_straight_is_the_line_logging_writes(only_handler, fmt) -> None:
    """The line the handler's stream gets without a record is the one the logging
    module's dispatch writes (when another handler, such as a test's capture, listens)."""
    fields = {"method": "GET", "status": 200, "duration_ms": 0.5, "user_id": None}
    fields |= {"client": "127.0.0.1", "user_agent": 'probe "1" é', "query": "a=1&b"}
    structlog.contextvars.bind_contextvars(request_id="lb-42.abc", path="/new/")
    try:
        straight = only_handler(fmt)
        assert logs._sole_handler(logging.INFO) is not None
        logs.write_request_line(logging.INFO, dict(fields))
        root = logging.getLogger()
        dispatched = only_handler(fmt)
        root.addHandler(logging.NullHandler())  # a second listener: the logging module's way
        assert logs._sole_handler(logging.INFO) is None
        logs.write_request_line(logging.INFO, dict(fields))
    finally:
        structlog.contextvars.clear_contextvars()
    ours, theirs = straight.getvalue(), dispatched.getvalue()
    assert ours.count("\n") == 1 and theirs.count("\n") == 1
    stamp = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z")
    assert stamp.sub("T", ours) == stamp.sub("T", theirs)
    if fmt == "json":
        line = json.loads(ours)
        assert line == {
            **fields,
            "event": "request",
            "request_id": "lb-42.abc",
            "path": "/new/",
        } | {
            "level": "info",
            "logger": "votesite.requests",
            "timestamp": line["timestamp"],
        }
        rendered = structlog.processors.JSONRenderer()(None, "info", dict(line))
        assert json.loads(rendered) == line  # what structlog's own renderer says
    else:
        assert "request_id=lb-42.abc" in ours and "user_agent='probe \"1\" é'" in ours


def test_a_json_line_orjson_refuses_is_written_by_the_standard_library() -> None:
    line = {"event": "big", "n": 2**70, "level": "info"}
    assert json.loads(logs._json(line, default=repr)) == line


# A URLconf with language prefixes (votesite's has none): Django's own steps there.
urlpatterns = i18n_patterns(url_path("page/", lambda request: HttpResponse("ok")))


def _languages(middleware: type, request_path: str, urlconf: str | None, **extra: Any) -> tuple:
    request = RequestFactory().get(request_path, **extra)
    if urlconf:
        request.urlconf = urlconf
    status = 404 if request_path.endswith("missing/") else 200

    def view(r: Any) -> HttpResponse:
        response = HttpResponse("ok", status=status)
        if "varied/" in request_path:
            response["Vary"] = "Cookie"
        if "said/" in request_path:
            response["Content-Language"] = "fr"
        if "switched/" in request_path:
            translation.activate("de")
        return response

    m = middleware(view)
    try:
        response = m(request)
        return (request.LANGUAGE_CODE, response.status_code, list(response.items()))
    finally:
        translation.deactivate()


@pytest.mark.parametrize(
    ("request_path", "extra"),
    [
        ("/new/", {}),
        ("/new/", {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9"}),
        ("/new/", {"HTTP_ACCEPT_LANGUAGE": "fr, en;q=0.5"}),
        ("/de/new/", {}),
        ("/new/", {"HTTP_COOKIE": f"{settings.LANGUAGE_COOKIE_NAME}=de"}),
        ("/missing/", {"HTTP_ACCEPT_LANGUAGE": "de"}),
        ("/page/", {"HTTP_ACCEPT_LANGUAGE": "de"}),
        ("/de/page/", {}),
        ("/varied/", {"HTTP_ACCEPT_LANGUAGE": "de"}),
        ("/said/", {}),
        ("/switched/", {"HTTP_ACCEPT_LANGUAGE": "en"}),
    ],
)
@pytest.mark.parametrize("urlconf", [None, __name__])
def test_the_locale_middleware_picks_and_says_what_djangos_does(request_path, extra, urlconf):
    from django.middleware.locale import LocaleMiddleware as Django

    from votesite.language import LocaleMiddleware

    ours = _languages(LocaleMiddleware, request_path, urlconf, **extra)
    assert ours == _languages(Django, request_path, urlconf, **extra)


def test_the_kept_language_choice_follows_the_settings() -> None:
    from votesite.language import LocaleMiddleware

    def chosen(**extra: str) -> str:
        return str(_languages(LocaleMiddleware, "/new/", None, **extra)[0])

    asked = {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9"}
    assert chosen(**asked) == chosen(**asked) == "de"
    with override_settings(LANGUAGES=[("en", "English")]):
        assert chosen(**asked) == "en"
    assert chosen(**asked) == "de"
    cookie = {"HTTP_COOKIE": f"{settings.LANGUAGE_COOKIE_NAME}=en", **asked}
    assert chosen(**cookie) == chosen(**cookie) == "en"


def test_the_request_lines_time_is_structlogs_timestamp() -> None:
    import datetime
    import time

    stamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    for nanoseconds in (time.time_ns(), 1_764_000_000_000_000_000, 1_764_000_000_000_001_000):
        ours = logs.iso_time(nanoseconds)
        at = datetime.datetime.fromtimestamp(nanoseconds // 1000 / 1e6, datetime.UTC)
        assert ours == at.isoformat().replace("+00:00", "Z")
    now = stamper(None, "info", {})["timestamp"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", now)


@pytest.mark.django_db
def test_a_key_bound_during_one_request_is_not_on_the_next_ones_line(client, caplog) -> None:
    """The outer layer leaves each request only its id and path in the log's context, as
    clear_contextvars did, also once another key was bound somewhere."""
    caplog.set_level("INFO", logger="votesite.requests")
    structlog.contextvars.bind_contextvars(left_over="from before")
    try:
        assert client.get("/top/").status_code == 200
    finally:
        structlog.contextvars.clear_contextvars()
    line = next(r.msg for r in caplog.records if r.name == "votesite.requests")
    assert "left_over" not in line and line["path"] == "/top/" and len(line["request_id"]) == 32


def test_the_nonce_after_the_response_refuses_to_be_read_as_django_csps_does() -> None:
    from csp.exceptions import CSPNonceError

    for middleware in (CSPMiddleware, ContentSecurityPolicyMiddleware):
        request = RequestFactory().get("/")
        m = middleware(lambda r: HttpResponse("ok"))
        m(request)
        assert not request.csp_nonce
        with pytest.raises(CSPNonceError):
            str(request.csp_nonce)


@override_settings(ROOT_URLCONF="bench.urls")
def test_the_stack_answers_the_same_headers_under_asgi_as_under_wsgi() -> None:
    """The layers called without MiddlewareMixin's dispatch are synchronous: under ASGI
    (the live endpoint's server, `make run`) Django runs them in its thread, headers and
    all."""
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient, Client

    def named(response: HttpResponse) -> dict[str, str]:
        varying = ("X-Request-ID", "Content-Security-Policy")  # an id; a nonce once used
        return {k: "" if k in varying else v for k, v in response.items()}

    asked = {"Accept-Language": "de"}
    wsgi = Client().get("/bench/fixed/", headers=asked)
    asgi = async_to_sync(AsyncClient().get)("/bench/fixed/", headers=asked)
    assert wsgi.status_code == asgi.status_code == 200
    assert named(asgi) == named(wsgi)
    assert asgi["Content-Language"] == "de" and asgi["Permissions-Policy"]
    assert "Content-Security-Policy" in asgi and len(asgi["X-Request-ID"]) == 32


def _layered(
    middleware: type, request_path: str, status: int, response_attrs: dict, use_nonce: bool
) -> tuple[list[tuple[str, str]], bool]:
    """A response through `middleware`: its headers in order, and whether reading the nonce
    afterwards still works."""
    from csp.exceptions import CSPNonceError

    request = RequestFactory().get(request_path)

    def view(r: Any) -> HttpResponse:
        if use_nonce:
            str(r.csp_nonce)
        response = HttpResponse("ok", status=status)
        for name, value in response_attrs.items():
            if name[0].isupper():
                response[name] = value
            else:
                setattr(response, name, value)
        return response

    response = middleware(view)(request)
    try:
        str(request.csp_nonce)
        readable = True
    except CSPNonceError:
        readable = False
    return list(response.items()), readable


class _DjangoCSPWithPermissions(CSPMiddleware):
    """What votesite.security.SecurityHeadersMiddleware stands for: django-csp's middleware
    and the Permissions-Policy unless the view set one."""

    def __call__(self, request: Any) -> Any:
        self.process_request(request)
        response = self.get_response(request)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return self.process_response(request, response)


@pytest.mark.parametrize(
    ("request_path", "status", "response_attrs", "use_nonce"),
    [
        ("/", 200, {}, False),
        ("/", 404, {}, False),
        ("/", 500, {}, False),
        ("/", 200, {}, True),
        ("/", 200, {"_csp_update": {"style-src": ["'unsafe-inline'"]}}, False),
        ("/", 200, {"_csp_exempt": True}, False),
        ("/", 200, {"Permissions-Policy": "camera=(self)"}, False),
        ("/", 200, {"Content-Security-Policy": "default-src 'none'"}, False),
        ("/skip/this/", 200, {}, False),
    ],
)
@pytest.mark.parametrize("debug", [False, True])
def test_the_security_headers_layer_writes_what_django_csp_writes(
    request_path, status, response_attrs, use_nonce, debug
) -> None:
    """Built once and written straight into the header store, the headers are the same
    bytes in the same order as django-csp and a setdefault of the Permissions-Policy give,
    with the settings' exclusions, a response's own policy or exemption, a used nonce,
    and Django's debug pages left alone."""
    from votesite.security import SecurityHeadersMiddleware

    policy = {**settings.CONTENT_SECURITY_POLICY, "EXCLUDE_URL_PREFIXES": ["/skip/"]}
    report_only = {"DIRECTIVES": {"img-src": ["'self'"]}}
    with override_settings(
        DEBUG=debug,
        CONTENT_SECURITY_POLICY=policy,
        CONTENT_SECURITY_POLICY_REPORT_ONLY=report_only,
    ):
        args = (request_path, status, response_attrs, use_nonce)
        ours = _layered(SecurityHeadersMiddleware, *args)
        assert ours == _layered(_DjangoCSPWithPermissions, *args)
    headers = dict(ours[0])
    if request_path == "/" and not response_attrs and not (debug and status != 200):
        assert headers["Permissions-Policy"] == PERMISSIONS_POLICY
        assert "img-src 'self'" in headers["Content-Security-Policy-Report-Only"]
        assert "script-src 'self'" in headers["Content-Security-Policy"]
    ours = _layered(SecurityHeadersMiddleware, "/", 200, {}, False)
    assert "Content-Security-Policy-Report-Only" not in dict(ours[0])  # the settings again


@pytest.mark.django_db
@pytest.mark.parametrize("adds", [False, True])
def test_the_message_layer_stores_what_djangos_stores(adds: bool) -> None:
    """A message added is stored (and shown on the next request) as Django's middleware
    stores it; a request that adds none writes no cookie, as Django's writes none."""
    from django.contrib import messages
    from django.contrib.messages.middleware import MessageMiddleware as Django
    from django.contrib.sessions.middleware import SessionMiddleware

    from votesite.messages import MessageMiddleware

    def through(middleware: type) -> tuple[list[str], list[str]]:
        def view(request: Any) -> HttpResponse:
            if adds:
                messages.success(request, "saved")
            return HttpResponse("ok")

        response = SessionMiddleware(middleware(view))(RequestFactory().get("/"))
        shown: list[str] = []

        def next_view(request: Any) -> HttpResponse:
            shown.extend(str(m) for m in messages.get_messages(request))
            return HttpResponse("ok")

        later = RequestFactory().get("/")
        later.COOKIES = {name: morsel.value for name, morsel in response.cookies.items()}
        SessionMiddleware(middleware(next_view))(later)
        return sorted(response.cookies), shown

    ours = through(MessageMiddleware)
    assert ours == through(Django)
    assert ours == ((["messages"], ["saved"]) if adds else ([], []))


def test_a_nonce_read_by_the_view_is_in_the_policy() -> None:
    from csp.constants import NONCE, SELF

    from votesite.security import SecurityHeadersMiddleware

    request = RequestFactory().get("/")
    read = []

    def view(r: Any) -> HttpResponse:
        read.append(str(r.csp_nonce))
        assert str(r.csp_nonce) == read[0]  # one nonce a request
        return HttpResponse("ok")

    policy = {"DIRECTIVES": {"script-src": [SELF, NONCE]}}
    with override_settings(CONTENT_SECURITY_POLICY=policy):
        response = SecurityHeadersMiddleware(view)(request)
    assert f"script-src 'self' 'nonce-{read[0]}'" in response["Content-Security-Policy"]
    assert len(read[0]) == 24 and response["Permissions-Policy"] == PERMISSIONS_POLICY
