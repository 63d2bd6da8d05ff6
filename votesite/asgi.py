"""ASGI entry point: the whole site (the same Django app as wsgi.py), with the live endpoint
(articles:live) answered by the articles app's small ASGI app in front of Django, which
holds no thread per open stream (articles/live/asgi.py)."""

import os

from django.core.asgi import get_asgi_application

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
