"""django-prometheus' request metrics, the same names and labels, with each labelled
series looked up once per process: its middleware asks prometheus_client for the series
of every label set on every request (a lock, a check and a conversion of each value, nine
times a request), which cost more than the counting itself."""

from __future__ import annotations

from typing import Any

from django_prometheus.middleware import PrometheusAfterMiddleware
from django_prometheus.utils import Time, TimeSince

_NONE = object()


class RequestMetricsMiddleware(PrometheusAfterMiddleware):
    """PrometheusAfterMiddleware with its labelled series kept in a dict. The label values
    are bounded (methods, statuses, view names, charsets, exception types): so is the
    dict. A dict's get and set are atomic, so gthread's threads may share it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._series: dict[tuple[Any, ...], Any] = {}

    def label_metric(self, metric: Any, request: Any, response: Any = None, **labels: Any) -> Any:
        if not labels:
            return metric
        key = (metric, *labels.items())
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = metric.labels(**labels)
        return series

    def process_request(self, request: Any) -> None:
        """The library's steps, reading the two headers from META: request.headers would
        copy every header of the request into a new mapping first."""
        metrics, meta = self.metrics, request.META
        method = self._method(request)
        self.label_metric(metrics.requests_by_method, request, method=method).inc()
        self.label_metric(
            metrics.requests_by_transport, request, transport=self._transport(request)
        ).inc()
        if meta.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest":
            self.label_metric(metrics.requests_ajax, request).inc()
        content_length = int(meta.get("CONTENT_LENGTH") or 0)
        self.label_metric(metrics.requests_body_bytes, request).observe(content_length)
        request.prometheus_after_middleware_event = Time()

    def process_response(self, request: Any, response: Any) -> Any:
        """The library's own steps and series, with the response's charset (parsed from its
        Content-Type each time it is read) and the view's name looked up once."""
        method, name = self._method(request), self._get_view_name(request)
        status = str(response.status_code)
        metrics = self.metrics
        self.label_metric(metrics.responses_by_status, request, response, status=status).inc()
        self.label_metric(
            metrics.responses_by_status_view_method,
            request,
            response,
            status=status,
            view=name,
            method=method,
        ).inc()
        charset = getattr(response, "charset", _NONE)
        if charset is not _NONE:
            self.label_metric(
                metrics.responses_by_charset, request, response, charset=str(charset)
            ).inc()
        if getattr(response, "streaming", False):
            self.label_metric(metrics.responses_streaming, request, response).inc()
        content = getattr(response, "content", _NONE)
        if content is not _NONE:
            self.label_metric(metrics.responses_body_bytes, request, response).observe(len(content))
        started = getattr(request, "prometheus_after_middleware_event", _NONE)
        if started is not _NONE:
            self.label_metric(
                metrics.requests_latency_by_view_method,
                request,
                response,
                view=name,
                method=request.method,
            ).observe(TimeSince(started))
        else:
            self.label_metric(metrics.requests_unknown_latency, request, response).inc()
        return response
