"""votesite's own settings for a load test's server: its clients all come from 127.0.0.1,
so the API's per-address limit (600 a minute) would answer 429 once the site is fast
enough; what these tests are about is the store's outage. The limit is raised, not removed,
so each request still counts itself in Redis."""

from __future__ import annotations

from votesite.settings import *  # noqa: F403

ARTICLES_RATE_LIMITS = {**ARTICLES_RATE_LIMITS, "api": (10**9, 60)}  # noqa: F405
