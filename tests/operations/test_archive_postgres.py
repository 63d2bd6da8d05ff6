"""The archive's tests again on PostgreSQL, the database production runs: its upserts
(ON CONFLICT), JSON rows and the text it refuses (a NUL) differ from SQLite's, the
suite's database. pytest-django sets up one database for a whole run, so this runs them
in a pytest of its own on a throwaway cluster."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODULES = [
    "tests/store/test_archive.py",
    "tests/operations/test_archive_job.py",
    "tests/api/test_archived_articles.py",
]


def test_archiving_works_on_postgresql_too(postgres: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfE", *MODULES],
        cwd=ROOT,
        env=dict(os.environ, DATABASE_URL=postgres),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert "database: postgresql" in output, output[-3000:]  # the run was on PostgreSQL
    assert result.returncode == 0, output[-8000:]
