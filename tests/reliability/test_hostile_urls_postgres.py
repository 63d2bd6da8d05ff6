"""The hostile-URL tests again on PostgreSQL, the database production runs. PostgreSQL
refuses a NUL character in any text, which SQLite (the suite's database) takes, so a value
reaching a query unchecked is a 500 there only. pytest-django sets up one database for a
whole run, so this runs test_hostile_urls.py in a pytest of its own on a throwaway cluster."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests/reliability/test_hostile_urls.py"


def test_the_hostile_urls_are_refused_on_postgresql_too(postgres: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfE", MODULE],
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
