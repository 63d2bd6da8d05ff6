"""The archive's tests again on PostgreSQL, the database production runs: its upserts
(ON CONFLICT), JSON rows and the text it refuses (a NUL) differ from SQLite's, the
suite's database. pytest-django sets up one database for a whole run, so this runs them
in a pytest of its own on a throwaway cluster."""

from __future__ import annotations

import pytest

from tests.postgres import assert_pass_on

pytestmark = pytest.mark.slow

MODULES = [
    "tests/store/test_archive.py",
    "tests/operations/test_archive_job.py",
    "tests/api/test_archived_articles.py",
]


def test_archiving_works_on_postgresql_too(postgres: str) -> None:
    assert_pass_on(postgres, *MODULES)
