"""A throwaway PostgreSQL cluster for the tests that must run on the database production
uses: PostgreSQL refuses what SQLite takes (a NUL in any text value, for one)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.servers import PG_BIN, Postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The DATABASE_URL of a cluster on a unix socket in a short folder of /tmp (socket
    paths allow ~100 characters), no TCP. Fails, never skips, if it cannot start:
    `make test` installs Debian's server package (`make postgres`)."""
    if not Postgres.available():
        pytest.fail(f"PostgreSQL's initdb and pg_ctl are not in {PG_BIN}: run `make postgres`")
    directory = Path(tempfile.mkdtemp(prefix="vs-pg-", dir="/tmp"))
    cluster = Postgres(directory / "pg")
    try:
        cluster.start()
    except RuntimeError as error:
        shutil.rmtree(directory, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {error}")
    try:
        yield f"postgresql://bench@/postgres?host={cluster.directory}"
    finally:
        cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)
