"""Structured logs: every record (Django's, the app's, gunicorn's, ours) through structlog, as
readable key=value lines or as JSON (DJANGO_LOG_FORMAT=json), and the request line
(votesite.observability writes one per request)."""

from __future__ import annotations

import datetime
import json
import logging
import re
import time
from typing import Any

import orjson
import structlog

# Shared by structlog's own loggers and by records from the standard library's.
_CHAIN: list[Any] = [
    structlog.contextvars.merge_contextvars,  # request_id and path, bound per request
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


_NOTHING = object()
_quoted = re.compile("[ \t=\r\n\"']").search  # a string value holding one is shown as its repr()


# The request line's fields (votesite.observability), in the order the renderer sorts them.
REQUEST_FIELDS = (
    *("client", "duration_ms", "method", "path", "query"),
    *("request_id", "status", "user_agent", "user_id"),
)
_REQUEST_LINE = frozenset((*REQUEST_FIELDS, "event", "level", "logger", "timestamp"))


def _shown(value: Any) -> str:
    return value if type(value) is str and not _quoted(value) else repr(value)


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
            if type(value) is not str or _quoted(value):
                value = repr(value)
            parts.append(f"{key}={value}")
        if parts and not parts[0]:  # an empty timestamp; no other part can be empty
            del parts[0]
        return " ".join(parts).rstrip(" ")

    def request_line(self, event: dict[str, Any]) -> str:
        """The line __call__ writes for a request line's event dict (exactly its keys, a
        time stamp), made with its keys' order known: no pops, no sort, and one f-string
        (REQUEST_FIELDS' order) rather than a part per field joined."""
        e = event
        return (
            f"{e['timestamp']} [{e['level']:<9}] {e['event']!s:<30} [{e['logger']}] "
            f"client={_shown(e['client'])} duration_ms={_shown(e['duration_ms'])} "
            f"method={_shown(e['method'])} path={_shown(e['path'])} "
            f"query={_shown(e['query'])} request_id={_shown(e['request_id'])} "
            f"status={_shown(e['status'])} user_agent={_shown(e['user_agent'])} "
            f"user_id={_shown(e['user_id'])}"
        ).rstrip(" ")


class Formatter(structlog.stdlib.ProcessorFormatter):
    """structlog's ProcessorFormatter, but a record whose event dict is complete already
    (the request line: write_request_line) goes straight to the renderer, without the
    copy of the record and the standard Formatter's pass the other lines take (a third
    of the line's cost). The rendered line is the same."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A plain list: dictConfig hands over a ConvertingList, which converts the item
        # again on each read.
        self.processors = list(self.processors)

    def format(self, record: logging.LogRecord) -> str:
        if record.__dict__.get("_complete") is not True or record.exc_info or record.stack_info:
            return super().format(record)
        rendered = self.processors[-1](record._logger, record._name, dict(record.msg))  # type: ignore[attr-defined, call-overload]
        return str(rendered)


def _json(event: Any, **kwargs: Any) -> str:
    """One JSON object, by orjson (a tenth of json.dumps' time), with the JSON standard
    library's writing of what orjson refuses (an integer over 64 bits)."""
    try:
        return orjson.dumps(event, default=kwargs["default"], option=_ORJSON).decode()
    except TypeError:
        return json.dumps(event, **kwargs)


_ORJSON = orjson.OPT_NON_STR_KEYS


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
        [structlog.processors.format_exc_info, structlog.processors.JSONRenderer(_json)]
        if fmt == "json"
        else [ConsoleRenderer()]
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "structured": {
                "()": Formatter,
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
merge_contextvars = structlog.contextvars.merge_contextvars

# structlog keeps one ContextVar per key ever bound in the process. While the request's two
# are the only ones, a request binds them by setting those two: clear_contextvars would walk
# every variable of the context (Django's and asgiref's too) to find nothing else.
_tokens = structlog.contextvars.bind_contextvars(request_id="", path="")
_REQUEST_ID, _PATH = _tokens["request_id"].var, _tokens["path"].var
structlog.contextvars.reset_contextvars(**_tokens)
_BOUND: dict[str, Any] | None = getattr(structlog.contextvars, "_CONTEXT_VARS", None)


def _only_the_requests_keys() -> bool:
    """Whether no key but request_id and path was ever bound to structlog's context."""
    return _BOUND is not None and len(_BOUND) == 2


def bind_request(request_id: str, path: str) -> None:
    """A request's context, on every line logged while it is served: what
    clear_contextvars() then bind_contextvars(request_id=..., path=...) leave."""
    if _only_the_requests_keys():
        _REQUEST_ID.set(request_id)
        _PATH.set(path)
    else:
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id, path=path)


_second: tuple[int, str] = (-1, "")


def iso_time(nanoseconds: int) -> str:
    """TimeStamper(fmt="iso", utc=True)'s text for a time.time_ns() (microseconds shown
    unless 0), with the date and time of day formatted once a second."""
    global _second
    second, rest = divmod(nanoseconds, 1_000_000_000)
    made = _second
    if made[0] != second:
        at = datetime.datetime.fromtimestamp(second, datetime.UTC)
        made = _second = (second, at.strftime("%Y-%m-%dT%H:%M:%S"))
    micro = rest // 1000
    return f"{made[1]}.{micro:06d}Z" if micro else f"{made[1]}Z"


def write_request_line(level: int, fields: dict[str, Any]) -> None:
    """`fields` as the request line: the event dict _CHAIN would make (the request's
    context, level, logger, time), made in one step. Where the line goes to one stream
    handler with our Formatter only (the settings' LOGGING, under gunicorn and runserver
    alike), it is rendered and written under that handler's lock: the same line on the
    same stream as through the logging module, without a record and its dispatch (half
    the line's cost). Anywhere else (a test's log capture, another handler, a filter) it
    goes the logging module's way, in the record structlog's wrap_for_formatter makes.
    Fields holding the request's id and path (the request line's own) need the context
    merged in only where something else was bound."""
    if not _requests.isEnabledFor(level):
        return
    name = _LEVEL_NAMES[level]
    event: Any = {**fields, "event": "request"}
    if "request_id" not in fields or not _only_the_requests_keys():
        event = merge_contextvars(_requests, name, event)
    event["level"] = name
    event["logger"] = "votesite.requests"
    event["timestamp"] = iso_time(time.time_ns())
    handler = _sole_handler(level)
    if handler is not None:
        formatter: Any = handler.formatter
        handler.acquire()
        try:
            render = formatter.processors[-1]
            if type(render) is ConsoleRenderer and event.keys() == _REQUEST_LINE:
                line = render.request_line(event)
            else:
                line = render(_requests, name, event)
            stream = handler.stream
            stream.write(f"{line}{handler.terminator}")
            if hasattr(stream, "flush"):  # StreamHandler.flush's step, under the lock held
                stream.flush()
        except Exception:  # as StreamHandler.emit: a log line never fails a request
            handler.handleError(_record(level, event))
        finally:
            handler.release()
        return
    _requests.handle(_record(level, event))


def _record(level: int, event: dict[str, Any]) -> logging.LogRecord:
    """The record Logger.log would make, less its search of the stack for the caller (the
    line shows no file nor line number): that search walked every frame of the request."""
    return _requests.makeRecord(
        _requests.name, level, __file__, 0, event, (), None, extra=_EXTRA[level]
    )


def _sole_handler(level: int) -> logging.StreamHandler | None:  # type: ignore[type-arg]
    """The one handler a `level` record of votesite.requests would reach, if that is a
    plain StreamHandler with our Formatter and no filter (Logger.callHandlers' walk)."""
    logger: logging.Logger | None = _requests
    if _requests.disabled or _requests.filters:
        return None
    found = None
    while logger is not None:
        for handler in logger.handlers:
            if level >= handler.level:
                if found is not None:
                    return None
                found = handler
        if not logger.propagate:
            break
        logger = logger.parent
    if (
        type(found) is not logging.StreamHandler
        or found.filters
        or type(found.formatter) is not Formatter
    ):
        return None
    return found


_LEVEL_NAMES = {
    level: logging.getLevelName(level).lower() for level in (logging.INFO, logging.ERROR)
}
_EXTRA = {
    level: {"_logger": _requests, "_name": name, "_complete": True}
    for level, name in _LEVEL_NAMES.items()
}
