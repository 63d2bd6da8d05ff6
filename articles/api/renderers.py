"""The API's JSON renderer: DRF's, through orjson (the standard json module was a tenth of
an API page's time). Same bytes for the API's data: compact UTF-8, U+2028/U+2029 escaped,
datetimes and the rest as DRF's encoder writes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from django.urls import Resolver404, get_script_prefix, resolve
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.utils.encoders import JSONEncoder

_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS
_ENCODER = JSONEncoder()


class FastJSONRenderer(JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        indent = self.get_indent(accepted_media_type or "", renderer_context or {})
        if indent is not None or self.ensure_ascii or not self.compact:
            return super().render(data, accepted_media_type, renderer_context)
        try:
            out = orjson.dumps(data, default=_ENCODER.default, option=_OPTIONS)
        except (orjson.JSONEncodeError, TypeError):
            # What orjson refuses (ints past 64 bits, NaN under STRICT_JSON...): DRF's way.
            return super().render(data, accepted_media_type, renderer_context)
        if b"\xe2\x80\xa8" in out or b"\xe2\x80\xa9" in out:  # keep JSON a JavaScript subset
            out = out.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return out


# What DRF's browsable API needs beyond a strict Content-Security-Policy: inline styles (its
# templates' style attributes, Pygments' <style>). django-csp, when the host runs it, adds
# this to the policy of a response that carries it; without django-csp it is inert.
BROWSABLE_API_CSP = {"style-src": ["'unsafe-inline'"]}


class CSPBrowsableAPIRenderer(BrowsableAPIRenderer):
    """DRF's browsable API in the app's template (a viewport, the site's log-in link), stating
    the Content-Security-Policy it needs, with breadcrumbs of real pages only."""

    template = "articles/api/browsable_api.html"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> Any:
        response = (renderer_context or {}).get("response")
        if response is not None:
            response._csp_update = BROWSABLE_API_CSP
        return super().render(data, accepted_media_type, renderer_context)

    def get_breadcrumbs(self, request: Request) -> list[tuple[str, str]]:
        """DRF's crumbs, one per API view met cutting the path back a part at a time, without
        the API's catch-all 404 view: DRF tries each path without its trailing slash too
        ("/api/articles"), which only the catch-all answers, and named it "Not Found"."""
        crumbs: list[tuple[str, str]] = super().get_breadcrumbs(request)
        return [(name, url) for name, url in crumbs if not _answers_only_404(url)]


def _answers_only_404(url: str) -> bool:
    path = "/" + url.split("?", 1)[0][len(get_script_prefix()) :]
    try:
        view = resolve(path).func
    except Resolver404:
        return False
    return bool(getattr(getattr(view, "cls", None), "answers_only_404", False))


def fast_renderers(renderers: list[Any]) -> list[Any]:
    """The host's configured renderers, with DRF's own JSON renderer swapped for ours, and its
    browsable API for one that states the Content-Security-Policy it needs."""
    swap = {JSONRenderer: FastJSONRenderer, BrowsableAPIRenderer: CSPBrowsableAPIRenderer}
    return [swap[type(r)]() if type(r) in swap else r for r in renderers]
