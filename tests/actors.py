"""Actors for tests that call the services directly: staff, and members by pk."""

from __future__ import annotations

from articles.types import Actor


def staff_actor(name: str = "", *, pk: int = 1) -> Actor:
    """Staff; with no name, as a tool: its writes go unlogged."""
    return Actor(pk=pk, name=name, is_staff=True)


def member_actor(pk: int, name: str = "") -> Actor:
    return Actor(pk=pk, name=name, is_staff=False)
