"""Reading the duplicate-link index (links:<b>, keys.link_slot) in tests, by link."""

from __future__ import annotations

from typing import Any

from articles.store import keys


def held(conn: Any, norm: str) -> str | None:
    """The member links:<b> maps a normalised link to, None for none."""
    value = conn.hget(*keys.link_slot(norm))
    return keys.link_holder(value.decode()) if value is not None else None


def entries(conn: Any) -> dict[tuple[str, bytes], str]:
    """Every entry of the index: its slot -> the member it maps to."""
    found = {}
    for bucket in conn.scan_iter(match=keys.LINK_INDEX_SCAN):
        for field, value in conn.hgetall(bucket).items():
            found[(bucket.decode(), field)] = keys.link_holder(value.decode())
    return found


def index_of(mapping: dict[str, str]) -> dict[tuple[str, bytes], str]:
    """What entries() reads for normalised links mapped to members."""
    return {keys.link_slot(norm): member for norm, member in mapping.items()}
