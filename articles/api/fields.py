"""The API's input fields: what the schema tells clients about each string, on top of
validation.py's own checks."""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar

from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty

from articles import validation
from articles.i18n import filled_lazy

# --- input fields: what the schema tells clients, on top of validation.py's own checks -------

_ONE_LINE = r"^[^\r\n\x00]*$"
# Not all spaces: [^\s\x00], as \S would take a NUL for the one non-space.
_TITLE = r"^[^\r\n\x00]*[^\s\x00][^\r\n\x00]*$"
# The group-name rule (validation.GROUP_NAME) as the schema states it: the whole string.
GROUP_NAME_SCHEMA_PATTERN = f"^{validation.GROUP_NAME_PATTERN}$"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# A port of 1-65535, as urllib reads one.
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
# clean_link's rule as a pattern, but for the spaces it would trim around a link: the API
# refuses what this refuses, and every link that fits it is accepted. A path or query may
# hold any character but a space or a control character (a Wikipedia address in its own
# script), as on the submit page.
_LINK = rf"^(?:https?://(?:{_LABEL}\.)*{_LABEL}(?::{_PORT})?(?:[/?#][^\s\x00-\x1f\x7f]*)?)?$"
_SINGLE_LINE = _("Must be a single line, without NUL characters.")
_USERNAME = r"^[^\x00]*[^\s\x00][^\x00]*$"


class StringField(serializers.CharField):
    """A CharField that takes only a JSON string: DRF's turns 5 or true into "5" or
    "True", which the schema ("type": "string") says is refused. Its `pattern` (the one
    the schema gives) is matched against the string as sent, before trimming: "\rb" would
    otherwise be taken as "b" where the schema refuses it."""

    pattern: ClassVar[str | None] = None
    default_error_messages = {
        "invalid": _("Not a valid string."),
        "pattern": _("Not a valid string."),
    }

    def run_validation(self, data: Any = empty) -> Any:
        # DRF takes "  " as "" where blank is allowed, before to_internal_value sees it.
        if isinstance(data, str) and data and not data.strip() and self.allow_blank:
            self._match(data)
        return super().run_validation(data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        self._match(data)
        return str(super().to_internal_value(data))

    def _match(self, data: str) -> None:
        if self.pattern is not None and _ecma(self.pattern).search(data) is None:
            self.fail("pattern")


@functools.cache
def _ecma(pattern: str) -> re.Pattern[str]:
    """A schema pattern as JSON Schema reads it: its `$` is the end of the string, where
    Python's also matches before a final newline ("Redis\n" would pass a one-line rule)."""
    return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern)


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": validation.GROUP_NAME_MAX,
        "pattern": GROUP_NAME_SCHEMA_PATTERN,
    }
)
class GroupNameField(StringField):
    """A group's name, by validation.GROUP_NAME."""

    pattern = GROUP_NAME_SCHEMA_PATTERN
    default_error_messages = {
        "pattern": filled_lazy(
            gettext_noop("A group name is %(rule)s"), {"rule": validation.GROUP_NAME_HELP}
        )
    }


@extend_schema_field(
    {"type": "string", "minLength": 1, "maxLength": validation.TITLE_MAX, "pattern": _TITLE}
)
class TitleField(StringField):
    """One line of text, not all spaces."""

    pattern = _TITLE
    default_error_messages = {"pattern": _SINGLE_LINE}


# A reason as its schema says it, in a body or a query string (api.base.REASON).
REASON_SCHEMA = {"type": "string", "maxLength": validation.REASON_MAX, "pattern": _ONE_LINE}


@extend_schema_field(REASON_SCHEMA)
class LineField(StringField):
    """One line of text (a reason, a description)."""

    pattern = _ONE_LINE
    default_error_messages = {"pattern": _SINGLE_LINE}


@extend_schema_field({"type": "string", "maxLength": validation.LINK_MAX, "pattern": _LINK})
class LinkField(StringField):
    """An http(s) URL, or "" for none."""

    pattern = _LINK
    default_error_messages = {
        "pattern": _(
            "A link is an http:// or https:// URL in ASCII (a port below 10000, no "
            'spaces), or "" for none.'
        )
    }


@extend_schema_field({"type": "string", "maxLength": validation.TEXT_MAX, "pattern": r"^[^\x00]*$"})
class TextField(StringField):
    """Any text, newlines allowed."""

    pattern = r"^[^\x00]*$"
    default_error_messages = {"pattern": _("May not contain NUL characters.")}


@extend_schema_field({"type": "string", "minLength": 1, "pattern": _USERNAME})
class UsernameField(StringField):
    """A username as the token endpoint reads it: trimmed, so not all spaces; no NUL."""

    pattern = _USERNAME
    default_error_messages = {"pattern": _("Not a valid username.")}


@extend_schema_field({"type": "string", "minLength": 1, "pattern": r"^[^\x00]*$"})
class PasswordField(StringField):
    """A password: any characters but NUL, kept as sent."""

    pattern = r"^[^\x00]*$"
    default_error_messages = {"pattern": _("Null characters are not allowed.")}


def _group_names(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=GroupNameField(max_length=64, trim_whitespace=False),
        required=False,
        default=list,
        max_length=20,
        **kwargs,
    )
