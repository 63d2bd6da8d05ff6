"""Every page and API route of the real URL configuration, with Redis stopped: an answer
within 1 s and never a 500. Routes added by later branches are picked up by themselves."""

from __future__ import annotations

import contextlib
import logging
import re
import time

import pytest
from django.conf import settings
from django.template.loader import render_to_string
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver

from tests.reliability.conftest import articles_cache
from votesite.embedded import EmbeddedRedis

log = logging.getLogger("reliability")
pytestmark = pytest.mark.slow

# A sample value for each path converter, so parameterised routes are tried too.
SAMPLES = {"int": "1", "slug": "redis", "str": "redis", "path": "redis", "uuid": "0" * 32}
_PARAM = re.compile(r"<(?:(\w+):)?\w+>")


def _routes(patterns=None, prefix: str = "") -> list[str]:  # type: ignore[no-untyped-def]
    found = []
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        route = str(entry.pattern)
        if route.startswith("^") or route.startswith("admin/"):
            continue  # regex routes (static files) and the admin, which never reads Redis
        route = _PARAM.sub(lambda m: SAMPLES.get(m.group(1) or "str", "redis"), route)
        if isinstance(entry, URLResolver):
            found += _routes(entry.url_patterns, prefix + route)
        elif isinstance(entry, URLPattern):
            found.append("/" + prefix + route)
    return sorted(set(found))


@pytest.mark.django_db
def test_every_route_answers_quickly_and_never_500_while_redis_is_stopped(
    own_redis: EmbeddedRedis, client, make_user
):
    routes = _routes()
    assert "/healthz" in routes
    render_to_string("articles/unavailable.html", {"message": ""})  # warm the engine
    # Django's own cache (throttling, rate limits) lives on the same Redis in production.
    caches = {**settings.CACHES, "default": articles_cache(f"{own_redis.url}?db=1")}
    stack = contextlib.ExitStack()
    stack.enter_context(override_settings(CACHES=caches))
    stack.callback(own_redis.start)
    own_redis.stop()
    staff = make_user(staff=True)
    tried, slowest = 0, 0.0
    with stack:
        for who in ("anonymous", "staff"):
            if who == "staff":
                client.force_login(staff)
            for route in routes:
                for accept in ("text/html", "application/json"):
                    started = time.monotonic()
                    response = client.get(route, HTTP_ACCEPT=accept)
                    took = time.monotonic() - started
                    tried += 1
                    slowest = max(slowest, took)
                    assert response.status_code != 500, (who, route)
                    assert took < 1.0, (who, route, took)
                    if response.status_code == 503:
                        assert b"Traceback" not in response.content
    log.info(
        f"outage: {tried} GETs over {len(routes)} routes with Redis stopped, "
        f"none 500, slowest {slowest:.3f} s"
    )
