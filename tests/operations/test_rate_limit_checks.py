"""The rate-limit settings are checked at start: a misspelt rule limits nothing, and the old
setting's deprecation is said once by `check`, not on every request."""

from __future__ import annotations

import warnings

import pytest

from articles.operations.checks import check_configuration
from articles.store import ratelimits


def _ids() -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the check itself must not warn
        return [m.id for m in check_configuration() if m.id]


def test_the_projects_own_rate_limits_pass(settings):
    assert "articles.E005" not in _ids() and "articles.W006" not in _ids()
    settings.ARTICLES_RATE_LIMITS = {"post": (0, 3600), "vote": None, "signup": [3, 60]}
    assert "articles.E005" not in _ids()


@pytest.mark.parametrize(
    "limits",
    [{"votes": (5, 60)}, {"vote": (5,)}, {"vote": (5, 0)}, {"vote": ("5", 60)}, {"vote": 5}],
)
def test_a_rule_no_one_has_or_a_window_that_is_not_one_is_an_error(settings, limits):
    settings.ARTICLES_RATE_LIMITS = limits
    messages = [m for m in check_configuration() if m.id == "articles.E005"]
    assert len(messages) == 1
    assert "vote" in messages[0].msg


def test_the_deprecated_setting_is_a_warning_naming_its_replacement(settings):
    settings.ARTICLES_API_RATE_LIMITS = {"write": (7, 60)}
    (message,) = [m for m in check_configuration() if m.id == "articles.W006"]
    assert "ARTICLES_RATE_LIMITS = {'api_write': (7, 60)}" in str(message.hint)
    assert "api_write" in ratelimits.DEFAULT_RULES
