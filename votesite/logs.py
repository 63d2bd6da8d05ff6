"""Structured logs: every record (Django's, the app's, gunicorn's, ours) through structlog, as
readable key=value lines or as JSON (DJANGO_LOG_FORMAT=json), and one line per request."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import structlog
from django.http import HttpRequest, HttpResponse
from django.utils.functional import empty

from articles.http.addresses import client_address

# Shared by structlog's own loggers and by records from the standard library's.
_CHAIN: list[Any] = [
    structlog.contextvars.merge_contextvars,  # request_id and path, bound per request
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


_NOTHING = object()
_QUOTED = frozenset(" \t=\r\n\"'")  # a string value holding one is shown as its repr()


class ConsoleRenderer(structlog.dev.ConsoleRenderer):
    """structlog's ConsoleRenderer without colours, writing the very same line, but made
    in one pass instead of through a formatter object and a StringIO per key: rendering
    the request line that way cost about a fifth of a bare request. A line with a
    traceback or a stack goes through structlog's own code."""

    def __init__(self) -> None:
        super().__init__(colors=False)

    def __call__(self, logger: Any, name: str, event_dict: Any) -> str:
        if "stack" in event_dict or "exception" in event_dict or "exc_info" in event_dict:
            return str(super().__call__(logger, name, event_dict))
        pop = event_dict.pop
        parts = []
        if (stamp := pop("timestamp", _NOTHING)) is not _NOTHING:
            parts.append(str(stamp))
        if (level := pop("level", _NOTHING)) is not _NOTHING:
            parts.append(f"[{level:<9}]")  # padded to the longest name, "exception"
        if (event := pop("event", _NOTHING)) is not _NOTHING:
            parts.append(f"{event!s:<30}")
        for key in ("logger", "logger_name"):
            if (value := pop(key, _NOTHING)) is not _NOTHING:
                parts.append(f"[{value}]")
        for key in sorted(event_dict):
            value = event_dict[key]
            shown = value if type(value) is str and not _QUOTED.intersection(value) else repr(value)
            parts.append(f"{key}={shown}")
        return " ".join(p for p in parts if p).rstrip(" ")


def logging_config(*, fmt: str, level: str) -> dict[str, Any]:
    """Django's LOGGING for `fmt` "console" or "json"; also configures structlog."""
    structlog.configure(
        processors=[*_CHAIN, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    logging.captureWarnings(True)  # a Python warning is a structured line too, not raw text
    renderer: list[Any] = (
        [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
        if fmt == "json"
        else [ConsoleRenderer()]
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "structured": {
                "()": structlog.stdlib.ProcessorFormatter,
                "foreign_pre_chain": _CHAIN,
                "processors": [
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    *renderer,
                ],
            }
        },
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
        "root": {"handlers": ["console"], "level": level},
        # The app's warnings and the request lines are INFO, whatever the root's level.
        "loggers": {"articles": {"level": "INFO"}, "votesite.requests": {"level": "INFO"}},
    }


def gunicorn_logging(*, fmt: str, level: str) -> dict[str, Any]:
    """gunicorn's logconfig_dict (gunicorn.conf.py): its own lines (start-up, worker boot
    and exit, errors) through the same formatter as the site's, so one stream has one
    format. Its access lines stay off: the site logs each request itself (richer: request
    id, user, duration)."""
    config = logging_config(fmt=fmt, level=level)
    config["handlers"]["null"] = {"class": "logging.NullHandler"}
    config["loggers"] = {
        **config["loggers"],
        # No level here: gunicorn's --log-level (info by default) decides.
        "gunicorn.error": {"handlers": [], "propagate": True},
        "gunicorn.access": {"handlers": ["null"], "propagate": False, "level": "WARNING"},
    }
    return config


_requests = logging.getLogger("votesite.requests")


def _write_request_line(level: int, fields: dict[str, Any]) -> None:
    """`fields` as the request line, handed to the standard library's handlers as a
    structlog logger would hand it (the event dict through _CHAIN, the record
    wrap_for_formatter makes), without the bound logger's own steps per call."""
    if not _requests.isEnabledFor(level):
        return
    name = _LEVEL_NAMES[level]
    event: Any = {**fields, "event": "request"}
    for processor in _CHAIN:
        event = processor(_requests, name, event)
    # The record Logger.log would make, less its search of the stack for the caller (the
    # line shows no file nor line number): that search walked every frame of the request.
    record = _requests.makeRecord(
        _requests.name, level, __file__, 0, event, (), None, extra=_EXTRA[level]
    )
    _requests.handle(record)


_LEVEL_NAMES = {
    level: logging.getLevelName(level).lower() for level in (logging.INFO, logging.ERROR)
}
_EXTRA = {level: {"_logger": _requests, "_name": name} for level, name in _LEVEL_NAMES.items()}


# Bounds on what a client sends that goes into each request line.
_USER_AGENT_MAX = 256
_QUERY_MAX = 512

# A request id a proxy gave (X-Request-ID) is kept if it is short and plain, so it can be
# searched for across the proxy's logs and ours; anything else is replaced by our own.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class RequestLogMiddleware:
    """One line per request: method, path, query, status, duration, user id, client address
    (articles.http.addresses: X-Forwarded-For only as far as our proxies), user agent, request id.
    The request
    id (X-Request-ID, taken from the proxy or made here) is on every line logged during the
    request and is sent back in the response's X-Request-ID."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        meta = request.META  # not request.headers, which would copy every header first
        given = meta.get("HTTP_X_REQUEST_ID", "")
        request_id = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id, path=request.path)
        response = self.get_response(request)
        response["X-Request-ID"] = request_id
        status = response.status_code
        _write_request_line(
            logging.ERROR if status >= 500 else logging.INFO,
            {
                "method": request.method,
                "status": status,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                "user_id": _user_id(request),
                "client": client_address(request),
                "user_agent": meta.get("HTTP_USER_AGENT", "")[:_USER_AGENT_MAX],
                "query": meta.get("QUERY_STRING", "")[:_QUERY_MAX],
            },
        )
        # Left bound: Django logs the response's warning (django.request) after us.
        return response


def _user_id(request: HttpRequest) -> int | None:
    """The user's id if this request already looked its user up (a session or an API
    token); never a lookup of its own, which would cost cached pages a database query."""
    user = getattr(request, "user", None)
    if user is None or getattr(user, "_wrapped", None) is empty:
        return None
    return user.pk if user.is_authenticated else None
