"""Benchmark settings: votesite's production settings, plus baseline B (the ORM site) on
SQLite and PostgreSQL, growth databases on the same Redis, and the fixed-JSON view.

The harness (bench/run.py) sets BENCH_DIR, REDIS_URL and VOTESITE_VAR_DIR before Django
starts; gunicorn gets the same environment, so both see one Redis and one user database.
"""

from __future__ import annotations

import os

from bench.site_settings import *  # noqa: F403
from votesite.settings import CACHES, INSTALLED_APPS, REDIS_DATA_URL

DEBUG = False  # production: also keeps Django from recording every ORM query
INSTALLED_APPS = [*INSTALLED_APPS, "bench.ormsite"]

BENCH_DIR = os.environ.get("BENCH_DIR", "/tmp/vs-bench")
GROWTH_DBS = {"bench_small": 2, "bench_large": 3, "bench_memory": 5}


def with_db(url: str, db: int) -> str:
    """`url` on database `db`. (votesite.settings.with_db turns unix:///path into
    unix:/path, which redis-py refuses; reported to the lead, worked around here.)"""
    base, _, query = url.partition("?")
    rest = "&".join(p for p in query.split("&") if p and not p.startswith("db="))
    if base.startswith("unix:"):
        return f"{base}?db={db}" + (f"&{rest}" if rest else "")
    return f"{base.rsplit('/', 1)[0] if base.count('/') > 2 else base}/{db}" + (
        f"?{rest}" if rest else ""
    )


def _with_pool(cache: dict, location: str) -> dict:
    options = dict(cache["OPTIONS"])
    pool = dict(options["CONNECTION_POOL_KWARGS"])
    if os.environ.get("BENCH_COUNT_ROUND_TRIPS"):
        from bench.counting import connection_class

        pool["connection_class"] = connection_class(location)
    options["CONNECTION_POOL_KWARGS"] = pool
    return {**cache, "LOCATION": location, "OPTIONS": options}


CACHES = {
    **CACHES,
    "articles": _with_pool(CACHES["articles"], REDIS_DATA_URL),
    **{
        alias: _with_pool(CACHES["articles"], with_db(REDIS_DATA_URL, db))
        for alias, db in GROWTH_DBS.items()
    },
}

if os.environ.get("BENCH_REDIS_PORT"):  # the same server over TCP loopback, database 0
    CACHES["bench_tcp"] = _with_pool(
        CACHES["articles"], f"redis://127.0.0.1:{os.environ['BENCH_REDIS_PORT']}/0"
    )

DATABASES = {
    **DATABASES,  # noqa: F405
    "orm_sqlite": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.path.join(BENCH_DIR, "orm.sqlite3"),
        # WAL, and fsync at checkpoints only: the durability of appendfsync everysec.
        "OPTIONS": {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"},
    },
    "orm_pg": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "postgres",
        "USER": "bench",
        "HOST": os.path.join(BENCH_DIR, "pg"),
        "CONN_MAX_AGE": None,
    },
}
