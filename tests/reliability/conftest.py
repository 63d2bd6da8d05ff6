"""The reliability tier: every test ends with the invariant audit finding nothing."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _audit_after_each_test(audited: None) -> None:
    """Crashes, outages and hostile input must never leave the store inconsistent."""
