"""The store's modules that hold a `get_connection`, for tests that count or redirect trips."""

from __future__ import annotations

import sys
from types import ModuleType

import articles.store.selectors
import articles.store.services  # noqa: F401  (loads every submodule)


def store_modules(*also: ModuleType) -> list[ModuleType]:
    """Every loaded module of the services and selectors packages that calls get_connection."""
    found = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith(("articles.store.services", "articles.store.selectors"))
        and hasattr(module, "get_connection")
    ]
    return [*found, *also]
