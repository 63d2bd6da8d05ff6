"""Named URLs reversed once per process rather than once per article of a listing.

The patterns are a content-addressed cache (articles.caches "url_patterns"): keyed by the
URL name, the number of arguments, the request's URLconf and its script prefix (a host
mounted under SCRIPT_NAME gets its own links), so never stale; at most MAX_PATTERNS.
"""

from __future__ import annotations

import re

from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse

from articles.caches import Cache, Kind

# Placeholder arguments that match both <int:...> and <slug:...>, one per position.
_SENTINELS = ("987654321", "987654322", "987654323")
_SPLIT = re.compile("|".join(_SENTINELS))
_SLUG = re.compile(r"[-a-zA-Z0-9_]+")
MAX_PATTERNS = 1024  # ~60 route names, times the prefixes and URLconfs a host serves

_patterns: Cache[tuple[object, ...], tuple[str, ...]] = Cache(
    "url_patterns", Kind.CONTENT, entries=MAX_PATTERNS
)


def url_for(name: str, *values: object) -> str:
    """reverse(name, args=values) (None values left out), from a cached pattern for ids
    and slugs; anything else goes through reverse() itself."""
    args = [v for v in values if v is not None]
    texts = [str(v) for v in args]
    if len(texts) > len(_SENTINELS) or not all(_SLUG.fullmatch(t) for t in texts):
        return reverse(name, args=args)
    try:
        parts = _pattern(name, len(texts))
    except NoReverseMatch:  # a route whose argument the sentinel does not fit (a date)
        return reverse(name, args=args)
    if len(parts) != len(texts) + 1:  # a sentinel also in the route's own text
        return reverse(name, args=args)
    pieces = [parts[0]]
    for text, part in zip(texts, parts[1:], strict=True):
        pieces += (text, part)
    return "".join(pieces)


def _pattern(name: str, count: int) -> tuple[str, ...]:
    """The route reversed with placeholders, as the text between them."""
    key = (name, count, get_urlconf(), get_script_prefix())
    parts = _patterns.get(key)
    if parts is None:
        parts = tuple(_SPLIT.split(reverse(name, args=list(_SENTINELS[:count]))))
        _patterns.put(key, parts)
    return parts
