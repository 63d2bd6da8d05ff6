"""Translation helpers: a message with figures filled in, translated when it is shown."""

from __future__ import annotations

from typing import Any

from django.utils.functional import lazy
from django.utils.translation import gettext


def _filled(message: str, params: dict[str, Any]) -> str:
    return gettext(message) % params


# `message % params` in the language of the request that shows it, for a module's constant
# (gettext_lazy's own `%` translates at once, at import): mark `message` with gettext_noop.
filled_lazy = lazy(_filled, str)
