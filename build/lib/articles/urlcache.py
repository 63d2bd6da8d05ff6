"""Named URLs reversed once per process rather than once per article of a listing."""

from __future__ import annotations

import functools
import re
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.urls import NoReverseMatch, reverse

_SENTINEL = "987654321"  # matches both <int:...> and <slug:...>
_SLUG = re.compile(r"[-a-zA-Z0-9_]+")


def url_for(name: str, value: object | None = None) -> str:
    """reverse(name, args=[value]) (or no args when value is None), from a cached pattern
    for ids and slugs; anything else goes through reverse() itself."""
    if value is None:
        return _pattern(name, False)
    text = str(value)
    if not _SLUG.fullmatch(text):
        return reverse(name, args=[value])
    try:
        pattern = _pattern(name, True)
    except NoReverseMatch:  # a route whose argument the sentinel does not fit (a date)
        return reverse(name, args=[value])
    return pattern.replace(_SENTINEL, text, 1)


@functools.cache
def _pattern(name: str, with_argument: bool) -> str:
    return reverse(name, args=[_SENTINEL]) if with_argument else reverse(name)


@receiver(setting_changed)
def _forget(*, setting: str, **kwargs: Any) -> None:
    if setting == "ROOT_URLCONF":
        _pattern.cache_clear()
