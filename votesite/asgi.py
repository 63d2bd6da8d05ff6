"""ASGI entry point: the whole project, as votesite.wsgi serves it, for uvicorn (`make run`,
and the live endpoint's gunicorn, gunicorn.live.conf.py).

One change to Django's handler, for the live endpoint's streams. Django runs each request's
synchronous code (the middleware: the site's are all synchronous) on a thread of that
request's own, kept until the response ends: for a stream, as long as the page is open. Two
thousand open pages were two thousand idle threads (88 KiB of memory each, measured with
bench/live.py, and the process's thread limit as the cap). The live endpoint's requests
share a few threads instead: their synchronous part (middleware, session, rate limit) is
short and runs once, at the connection, then the stream is only the event loop's.
"""

import itertools
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext
from django.core.asgi import get_asgi_application

# whitenoise (static files) answers with a file's synchronous iterator, which Django under
# ASGI reads in a thread, warning at each file. That is correct, only slower, and only
# `make run` serves static files over ASGI: production serves them over WSGI.
warnings.filterwarnings(
    "ignore", message="StreamingHttpResponse must consume synchronous iterators", category=Warning
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")

django_application = get_asgi_application()

# Each a single thread, as Django's thread-sensitive code needs (one request's synchronous
# calls, its database connection among them, stay on one thread); a few, taken in turn, so
# a connection held up (a Redis timeout, 1 s at most) does not hold up every other.
STREAM_THREADS = 8
_executors = [
    ThreadPoolExecutor(max_workers=1, thread_name_prefix="live") for _ in range(STREAM_THREADS)
]
_stream_executors = itertools.cycle(_executors)
_live_path: list[str] = []


def close_database_connections() -> None:
    """Close and forget the database connections of the stream threads (each holds its own,
    reused as a gthread worker's threads reuse theirs): for a server stopped while its
    process goes on, as the tests' are (an in-memory SQLite connection ignores close())."""
    from django.db import connections

    def forget() -> None:
        for connection in connections.all(initialized_only=True):
            connection.close()
            del connections[connection.alias]

    for executor in _executors:
        executor.submit(forget).result()


def _is_stream(scope: dict[str, Any]) -> bool:
    if not _live_path:
        from django.urls import NoReverseMatch, reverse

        try:
            _live_path.append(reverse("articles:live"))
        except NoReverseMatch:
            _live_path.append("")  # the app's URLs without the endpoint
    return scope["type"] == "http" and scope["path"] == _live_path[0]


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if _is_stream(scope):
        async with ThreadSensitiveContext(executor=next(_stream_executors)):
            await django_application.handle(scope, receive, send)
    else:
        await django_application(scope, receive, send)


# Refuse to serve on a Redis Cluster, with a clear message, and say at once when the Redis
# could lose votes (persistence off, eviction): gunicorn runs no system checks
# (articles/operations/checks.py).
from articles.operations.checks import log_redis_warnings, refuse_unsupported_redis  # noqa: E402

refuse_unsupported_redis()
log_redis_warnings()
