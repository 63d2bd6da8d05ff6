"""ASGI entry point: the whole site (the same Django app as wsgi.py), for uvicorn (`make run`,
and the live endpoint's gunicorn, gunicorn.live.conf.py), with the live endpoint
(articles:live) answered by the articles app's small ASGI app in front of Django, which
holds no thread per open stream (articles/live/asgi.py)."""

import os
import warnings

from django.core.asgi import get_asgi_application

# whitenoise (static files) answers with a file's synchronous iterator, which Django under
# ASGI reads in a thread, warning at each file. That is correct, only slower, and only
# `make run` serves static files over ASGI: production serves them over WSGI.
warnings.filterwarnings(
    "ignore", message="StreamingHttpResponse must consume synchronous iterators", category=Warning
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")

django_application = get_asgi_application()

from articles.live.asgi import LiveApp  # noqa: E402
from articles.operations.checks import log_redis_warnings, refuse_unsupported_redis  # noqa: E402

# Refuse to serve on a Redis Cluster, with a clear message, and say at once when the Redis
# could lose votes (persistence off, eviction): gunicorn runs no system checks
# (articles/operations/checks.py).
refuse_unsupported_redis()
log_redis_warnings()

application = LiveApp(django_application)
