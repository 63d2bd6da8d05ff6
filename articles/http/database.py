"""Django's database as a dependency: which of its errors mean "down", and a health probe."""

from __future__ import annotations

import logging

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.utils import InterfaceError, OperationalError

logger = logging.getLogger(__name__)

# Django wraps the driver's errors in these; a few reach us unwrapped (raised while
# connecting or from a connection the server dropped: psycopg's AdminShutdown on a
# PostgreSQL shutdown is an OperationalError).
_DOWN: tuple[type[BaseException], ...] = (OperationalError, InterfaceError)
try:
    import psycopg

    _DOWN += (psycopg.OperationalError, psycopg.InterfaceError)
except ImportError:  # pragma: no cover - PostgreSQL support is optional
    pass


def database_unavailable(exc: BaseException) -> bool:
    """True for an error meaning the database cannot be reached or used right now."""
    return isinstance(exc, _DOWN)


def database_reachable(alias: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether the database answers a query that reads its file or server (logged, never
    shown: the error text names hosts and ports)."""
    connection = connections[alias]
    try:
        with connection.cursor() as cursor:
            # SQLite answers "SELECT 1" without opening its file; the schema is on disk.
            cursor.execute("SELECT 1" if connection.vendor != "sqlite" else "PRAGMA schema_version")
            cursor.fetchone()
    except _DOWN as exc:
        logger.warning("Database unreachable: %s", exc)
        connection.close_if_unusable_or_obsolete()
        return False
    return True
