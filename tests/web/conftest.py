"""Fixtures of the page tests."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.fixture
def csrf_client() -> Client:
    """A client that, like a browser, must send the CSRF token of the page it came from."""
    return Client(enforce_csrf_checks=True)
