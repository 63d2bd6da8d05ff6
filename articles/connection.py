"""The Redis client for article data: django-redis' raw client on its own alias."""

from __future__ import annotations

import redis
from django_redis import get_redis_connection

from articles import conf


def get_connection() -> redis.Redis:
    """The raw client (bytes in, bytes out); never the cache API, which pickles and prefixes."""
    return get_redis_connection(conf.redis_alias())
