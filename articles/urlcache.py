"""Named URLs reversed once per process rather than once per article of a listing.

The patterns are a content-addressed cache (articles.caches "url_patterns"): keyed by the
URL name, the number of arguments, the request's URLconf and its script prefix (a host
mounted under SCRIPT_NAME gets its own links), so never stale; at most MAX_PATTERNS.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse

from articles.caches import Cache, Kind

# Placeholder arguments that match both <int:...> and <slug:...>, one per position.
_SENTINELS = ("987654321", "987654322", "987654323")
_SPLIT = re.compile("|".join(_SENTINELS))
_SLUG = re.compile(r"[-a-zA-Z0-9_]+")
MAX_PATTERNS = 1024  # ~60 route names, times the prefixes and URLconfs a host serves

_UNKNOWN: Any = object()
_patterns: Cache[tuple[object, ...], tuple[str, ...] | None] = Cache(
    "url_patterns", Kind.CONTENT, entries=MAX_PATTERNS
)


def url_for(name: str, *values: object, under: tuple[Any, str] | None = None) -> str:
    """reverse(name, args=values) (None values left out), from a cached pattern for ids
    and slugs; anything else goes through reverse() itself. `under`: the URLconf and
    script prefix in force, when the caller has them at hand (a page looks them up once)."""
    args = [v for v in values if v is not None]
    texts = [str(v) for v in args]
    if len(texts) > len(_SENTINELS) or not all(_SLUG.fullmatch(t) for t in texts):
        return reverse(name, args=args)
    parts = _pattern(name, len(texts), under)
    # None: a route whose argument the sentinel does not fit (a date); or a sentinel also
    # in the route's own text
    if parts is None or len(parts) != len(texts) + 1:
        return reverse(name, args=args)
    pieces = [parts[0]]
    for text, part in zip(texts, parts[1:], strict=True):
        pieces += (text, part)
    return "".join(pieces)


def url_of(
    name: str, count: int = 1, *, under: tuple[Any, str] | None = None
) -> Callable[..., str]:
    """url_for(name, *values) for many calls of `count` values each (a page's articles or
    comments): the pattern looked up once, not once a call. `under`: as url_for's."""
    parts = _pattern(name, count, under)
    if parts is None or len(parts) != count + 1:
        return lambda *values: url_for(name, *values, under=under)
    head, tail = parts[0], parts[-1]

    def one(value: object) -> str:
        text = str(value)
        if value is None or not _SLUG.fullmatch(text):
            return url_for(name, value, under=under)
        return head + text + tail

    def many(*values: object) -> str:
        texts = [str(v) for v in values]
        if len(texts) != count or not all(
            v is not None and _SLUG.fullmatch(t) for v, t in zip(values, texts, strict=True)
        ):
            return url_for(name, *values, under=under)
        pieces = [head]
        for text, part in zip(texts, parts[1:], strict=True):
            pieces += (text, part)
        return "".join(pieces)

    return one if count == 1 else many


def _pattern(name: str, count: int, under: tuple[Any, str] | None = None) -> tuple[str, ...] | None:
    """The route reversed with placeholders, as the text between them; None when the
    placeholders do not fit it. That is kept too: a failed reverse() tries every
    possibility of the name and formats an error, and the front page links 7 days."""
    key = (name, count, *(under or (get_urlconf(), get_script_prefix())))
    parts = _patterns.get(key, _UNKNOWN)
    if parts is _UNKNOWN:
        try:
            parts = tuple(_SPLIT.split(reverse(name, args=list(_SENTINELS[:count]))))
        except NoReverseMatch:
            parts = None
        _patterns.put(key, parts)
    return parts
