"""Django's response header store, written straight by votesite's middleware.

Setting a header through `response[...]` checks and encodes its name and value on every
response (ResponseHeaders._convert_to_charset). A header whose value is fixed or one of a
few (the policies, a language, the request id) is checked once, by `checked`, and put
into the store as Django would have left it: the name lowered, then (name, value). The
store is Django's private `ResponseHeaders._store`: `store_of` answers None where it is
not there as a dict, and the caller then sets the header the checking way; the tests
compare each such layer's headers with Django's and django-csp's own, in order."""

from __future__ import annotations

from typing import Any

from django.http.response import ResponseHeaders

Entry = tuple[str, tuple[str, str]]  # (lowered name, (name, value)): an item of the store

_check = ResponseHeaders({})._convert_to_charset


def store_of(response: Any) -> dict[str, tuple[str, str]] | None:
    """The response's header store, or None (set headers through response[...] then)."""
    store = getattr(getattr(response, "headers", None), "_store", None)
    return store if type(store) is dict else None


def checked(name: str, value: str) -> Entry:
    """The store's item for `name: value`, checked as Django checks a header when it is
    set (raising as it would: a newline, a value Latin-1 cannot carry is MIME-encoded)."""
    return name.lower(), (name, _check(value, "latin-1", mime_encode=True))
