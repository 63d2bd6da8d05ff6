"""A throwaway PostgreSQL cluster for the tests that must run on the database production
uses: PostgreSQL refuses what SQLite takes (a NUL in any text value, for one)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


ROOT = Path(__file__).resolve().parents[1]


def assert_pass_on(database_url: str, *modules: str) -> None:
    """`modules` pass in a pytest of their own on `database_url` (pytest-django sets up one
    database for a whole run, so a second database is a second run)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfE", *modules],
        cwd=ROOT,
        env=dict(os.environ, DATABASE_URL=database_url),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert "database: postgresql" in output, output[-3000:]  # the run was on PostgreSQL
    assert result.returncode == 0, output[-8000:]
