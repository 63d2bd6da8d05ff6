"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "votesite.settings")

application = get_asgi_application()

# Refuse to serve on a Redis Cluster, with a clear message (articles/checks.py).
from articles.checks import refuse_unsupported_redis  # noqa: E402

refuse_unsupported_redis()
