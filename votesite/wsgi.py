"""WSGI entry point (gunicorn votesite.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")

application = get_wsgi_application()

# Refuse to serve on a Redis Cluster, with a clear message, and say at once when the Redis
# could lose votes (persistence off, eviction): gunicorn runs no system checks
# (articles/operations/checks.py).
from articles.operations.checks import log_redis_warnings, refuse_unsupported_redis  # noqa: E402

refuse_unsupported_redis()
log_redis_warnings()
