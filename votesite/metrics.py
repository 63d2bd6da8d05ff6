"""django-prometheus' request metrics, the same names, labels and meanings, counted with
prometheus_client directly: the library's two middleware ask prometheus_client for the
series of every label set on every request (a lock, a check and a conversion of each
value, nine times a request) and pay MiddlewareMixin's dispatch twice, which cost more
than the counting itself. Here each labelled series is looked up once per process, and
each count goes straight to the series' value (adder, observer)."""

from __future__ import annotations

import math
import time
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django_prometheus.middleware import Metrics

from votesite.headers import store_of

_NONE = object()
_METHODS = frozenset(
    ("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH")
)
_UNNAMED = "<unnamed view>"

Add = Callable[[float], None]


def metrics() -> Any:
    """django-prometheus' one set of metrics (what /metrics serves)."""
    return Metrics.get_instance()


def adder(series: Any) -> Add:
    """What adds to a counter `series` (a labelled series or an unlabelled counter): its
    value's own inc, one lock and an add (in multiprocess mode, the mmap file's write too).
    Counter.inc checks on every call what holds once the series exists (all its labels
    given) and that the amount is not negative (ours are 1)."""
    inc = getattr(getattr(series, "_value", None), "inc", None)
    return inc if callable(inc) else series.inc  # type: ignore[no-any-return]


def observer(histogram: Any) -> Add:
    """Histogram.observe for a histogram `histogram` with its bucket found by bisection:
    prometheus_client walks the bounds one by one (31 of them for the body sizes). The
    same sum and bucket are counted; prometheus_client's own observe where its layout is
    not the one known here."""
    try:
        bounds = tuple(histogram._upper_bounds)
        buckets = tuple(bucket.inc for bucket in histogram._buckets)
        add = histogram._sum.inc
    except AttributeError:
        return histogram.observe  # type: ignore[no-any-return]
    if not bounds or len(bounds) != len(buckets) or bounds[-1] != math.inf:
        return histogram.observe  # type: ignore[no-any-return]

    def observe(amount: float) -> None:
        add(amount)
        buckets[bisect_left(bounds, amount)](1)  # the first bound >= amount, as its walk

    return observe


class Before:
    """What PrometheusBeforeMiddleware counts, for the outermost layer
    (votesite.observability): every request and response, and the latency of the whole
    stack below it."""

    __slots__ = ("latency", "requests", "responses")

    def __init__(self) -> None:
        found = metrics()
        self.requests = adder(found.requests_total)
        self.responses = adder(found.responses_total)
        self.latency = observer(found.requests_latency_before)

    def answered(self, seconds: float) -> None:
        """A response, `seconds` after its request reached the outermost layer."""
        self.responses(1)
        self.latency(seconds)


def _method(request: HttpRequest) -> str:
    method = request.method
    return method if method in _METHODS else "<invalid method>"  # type: ignore[return-value]


def _view_name(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None or match.view_name is None:
        return _UNNAMED
    return str(match.view_name)


_CHARSET = HttpResponseBase.charset
# (the charset set on a response, its Content-Type as Django's header store holds it) ->
# what its charset property answers; bounded, as a view may send any Content-Type.
_MAX_CHARSETS = 256
_charsets: dict[tuple[Any, Any], Any] = {}


def _charset(response: Any) -> Any:
    """response.charset, which parses the Content-Type on every read (a third of the
    metrics' work on a response), found once per Content-Type: it is made of the
    response's own charset, its Content-Type and DEFAULT_CHARSET alone."""
    store = store_of(response)
    if getattr(type(response), "charset", None) is not _CHARSET or store is None:
        return getattr(response, "charset", _NONE)
    key = (response._charset, store.get("content-type"))
    found = _charsets.get(key, _NONE)
    if found is _NONE:
        found = response.charset
        if len(_charsets) < _MAX_CHARSETS:
            _charsets[key] = found
    return found


@receiver(setting_changed)
def _default_charset_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "DEFAULT_CHARSET":
        _charsets.clear()


def _body_length(response: Any) -> int | None:
    """len(response.content), as the library measures it, without joining a body written
    in several parts into a copy (a one-part body is its own content); None where there is
    no content (a streaming response)."""
    parts = response.__dict__.get("_container")
    if type(parts) is list:
        return sum(map(len, parts))
    content = getattr(response, "content", _NONE)
    return None if content is _NONE else len(content)


class RequestMetricsMiddleware:
    """PrometheusAfterMiddleware's figures from the same place in the stack (last: only
    requests that reached the URL resolver, the view's own latency), with the series of
    each set of label values looked up once and kept in dicts. The label values are
    bounded (methods, statuses, view names, charsets, exception types; the latency's
    method is the one sent, as the library labels it): so are the dicts. A dict's get and
    set are atomic, so gthread's threads may share them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        found = self.metrics = metrics()
        self._series: dict[tuple[Any, ...], Any] = {}
        self._arriving: dict[tuple[Any, ...], tuple[Add, ...]] = {}
        self._viewed: dict[tuple[Any, ...], Add] = {}
        self._answered: dict[tuple[Any, ...], tuple[tuple[Add, ...], Add]] = {}
        self._ajax = adder(found.requests_ajax)
        self._request_bytes = observer(found.requests_body_bytes)
        self._response_bytes = observer(found.responses_body_bytes)
        self._streaming = adder(found.responses_streaming)
        self._unknown = adder(found.requests_unknown_latency)

    def _labelled(self, metric: Any, *values: str) -> Any:
        key = (metric, *values)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = metric.labels(*values)
        return series

    def __call__(self, request: HttpRequest) -> HttpResponse:
        self.process_request(request)
        response = self.get_response(request)
        return self.process_response(request, response)

    def process_request(self, request: HttpRequest) -> None:
        """The library's steps, reading the two headers from META: request.headers would
        copy every header of the request into a new mapping first."""
        meta = request.META
        key = (request.method, request.is_secure())
        counters = self._arriving.get(key)
        if counters is None:
            found, transport = self.metrics, "https" if key[1] else "http"
            counters = self._arriving[key] = (
                adder(self._labelled(found.requests_by_method, _method(request))),
                adder(self._labelled(found.requests_by_transport, transport)),
            )
        for add in counters:
            add(1)
        if meta.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest":
            self._ajax(1)
        self._request_bytes(int(meta.get("CONTENT_LENGTH") or 0))
        request.prometheus_after_middleware_event = time.perf_counter()  # type: ignore[attr-defined]
        request._metrics_secure = key[1]  # type: ignore[attr-defined]

    def process_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        if hasattr(request, "resolver_match"):
            name = request.resolver_match.view_name or _UNNAMED
            secure = getattr(request, "_metrics_secure", None)
            if secure is None:
                secure = request.is_secure()
            key = (name, secure, request.method)
            add = self._viewed.get(key)
            if add is None:
                series = self.metrics.requests_by_view_transport_method
                labels = (name, "https" if secure else "http", _method(request))
                add = self._viewed[key] = adder(self._labelled(series, *labels))
            add(1)

    def process_template_response(self, request: HttpRequest, response: Any) -> Any:
        if hasattr(response, "template_name"):
            series = self.metrics.responses_by_templatename
            self._labelled(series, str(response.template_name)).inc()
        return response

    def process_response(self, request: HttpRequest, response: Any) -> Any:
        """The library's own steps and series, with the response's charset (parsed from its
        Content-Type each time it is read) and the view's name looked up once."""
        key = (response.status_code, _view_name(request), request.method, _charset(response))
        series = self._answered.get(key)
        if series is None:
            series = self._answered[key] = self._answering(request, *key)
        counters, latency = series
        for add in counters:
            add(1)
        if getattr(response, "streaming", False):
            self._streaming(1)
        elif (length := _body_length(response)) is not None:
            self._response_bytes(length)
        started = getattr(request, "prometheus_after_middleware_event", _NONE)
        if started is not _NONE:
            latency(time.perf_counter() - started)  # type: ignore[operator]
        else:
            self._unknown(1)
        return response

    def _answering(
        self, request: HttpRequest, status: int, name: str, sent: str, charset: Any
    ) -> tuple[tuple[Add, ...], Add]:
        """The counters a response with these labels adds to, and its latency's series
        (labelled, as the library does, with the method as sent, not as counted)."""
        found, method, code = self.metrics, _method(request), str(status)
        counters = [
            self._labelled(found.responses_by_status, code),
            self._labelled(found.responses_by_status_view_method, code, name, method),
        ]
        if charset is not _NONE:
            counters.append(self._labelled(found.responses_by_charset, str(charset)))
        latency = self._labelled(found.requests_latency_by_view_method, name, sent)
        return tuple(adder(series) for series in counters), observer(latency)

    def process_exception(self, request: HttpRequest, exception: Exception) -> None:
        found = self.metrics
        self._labelled(found.exceptions_by_type, type(exception).__name__).inc()
        if hasattr(request, "resolver_match"):
            name = request.resolver_match.view_name or _UNNAMED
            self._labelled(found.exceptions_by_view, name).inc()
        started = getattr(request, "prometheus_after_middleware_event", _NONE)
        if started is not _NONE:
            series = self._labelled(
                found.requests_latency_by_view_method, _view_name(request), request.method
            )
            series.observe(time.perf_counter() - started)
        else:
            self._unknown(1)
