"""The hostile-URL tests again on PostgreSQL, the database production runs. PostgreSQL
refuses a NUL character in any text, which SQLite (the suite's database) takes, so a value
reaching a query unchecked is a 500 there only. pytest-django sets up one database for a
whole run, so this runs test_hostile_urls.py in a pytest of its own on a throwaway cluster."""

from __future__ import annotations

import pytest

from tests.postgres import assert_pass_on

pytestmark = pytest.mark.slow

MODULE = "tests/reliability/test_hostile_urls.py"


def test_the_hostile_urls_are_refused_on_postgresql_too(postgres: str) -> None:
    assert_pass_on(postgres, MODULE)
