"""django-prometheus' request metrics, the same names and labels, with each labelled
series looked up once per process: its middleware asks prometheus_client for the series
of every label set on every request (a lock, a check and a conversion of each value, nine
times a request), which cost more than the counting itself."""

from __future__ import annotations

from typing import Any

from django_prometheus.middleware import PrometheusAfterMiddleware


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
