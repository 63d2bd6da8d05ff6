"""ratelimits.check(), the one way anything counts against a rate limit, on the app's
stopped clock (the `clock` fixture) and a real Redis."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django.test import RequestFactory

from articles.errors import RateLimited
from articles.store import keys, ratelimits
from articles.store.connection import get_connection


def caller(address: str = "198.51.100.7") -> HttpRequest:
    """A new request from `address`, logged out."""
    request = RequestFactory().post("/", REMOTE_ADDR=address)
    request.user = AnonymousUser()
    return request


def test_a_window_allows_its_limit_then_refuses_until_it_ends(clock, settings):
    settings.ARTICLES_RATE_LIMITS = {"vote": (3, 60)}
    results = [ratelimits.check(caller(), "vote").tightest for _ in range(3)]
    assert [r.allowed for r in results] == [True, True, True]
    assert [r.remaining for r in results] == [2, 1, 0]
    refused_request = caller()
    clock.advance(20)
    with pytest.raises(RateLimited) as refused:
        ratelimits.check(refused_request, "vote")
    assert refused.value.retry_after == 40
    assert ratelimits.headers(refused_request) == {
        "RateLimit-Limit": "3",
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": "40",
    }
    clock.advance(40)
    later = ratelimits.check(caller(), "vote").tightest
    assert later is not None and later.allowed


def test_the_window_is_the_app_clocks(clock, settings):
    """The counter's key is the window of clock.now(), not of the wall clock."""
    settings.ARTICLES_RATE_LIMITS = {"vote": (3, 60)}
    clock.set(1_800_000_000)
    ratelimits.check(caller(), "vote")
    key = keys.rate_limit("vote", "198.51.100.7", 1_800_000_000 // 60)
    assert get_connection().get(key) == b"1"


def test_an_action_is_counted_once_a_request(clock):
    request = caller()
    ratelimits.check(request, "vote")
    ratelimits.check(request, "vote", "post")
    conn = get_connection()
    assert conn.get(keys.rate_limit("vote", "198.51.100.7", int(clock.now() // 60))) == b"1"
    assert conn.get(keys.rate_limit("post", "198.51.100.7", int(clock.now() // 3600))) == b"1"


def test_failures_are_counted_on_every_check_and_given_back_by_refund(clock):
    """The login path: one request may check a password twice, and each is counted; a
    success is given back; once spent, the window refuses, counting nothing more."""
    request = caller()
    right = ratelimits.check(request, *ratelimits.LOGIN_RULES, account="Dave")
    assert right.is_for(" dave") and not right.is_for("erin")
    ratelimits.refund(right)
    for _ in range(5):
        ratelimits.check(request, *ratelimits.LOGIN_RULES, account="dave")
    clock.advance(300)
    with pytest.raises(RateLimited) as locked:
        ratelimits.check(caller("203.0.113.1"), *ratelimits.LOGIN_RULES, account="dave")
    assert locked.value.retry_after == 600
    assert locked.value.message.endswith("Try again in 10 minutes, or reset your password.")
    conn = get_connection()
    assert [int(n) for n in conn.mget(conn.keys("ratelimit:login_account:*"))] == [5]
    clock.advance(600)
    ratelimits.check(caller("203.0.113.1"), *ratelimits.LOGIN_RULES, account="dave")


def test_one_vocabulary_names_every_rule(settings):
    settings.ARTICLES_RATE_LIMITS = {"api": (7, 60), "api_write": None}
    table = ratelimits.rules()
    assert table["api"] == ratelimits.Rule(7, 60, "address", "requests")
    assert table["api_write"] is None


def test_the_old_api_setting_still_applies_with_a_deprecation_warning(settings):
    """ARTICLES_API_RATE_LIMITS (scopes "address", "user", "write") is read as the rules it
    named, winning over ARTICLES_RATE_LIMITS as it did, until hosts move."""
    settings.ARTICLES_RATE_LIMITS = {"api": (1, 60), "vote": (2, 60)}
    settings.ARTICLES_API_RATE_LIMITS = {"address": (7, 60), "user": None}
    with pytest.warns(DeprecationWarning, match="ARTICLES_API_RATE_LIMITS is deprecated"):
        table = ratelimits.rules()
    assert table["api"] is not None and (table["api"].limit, table["api"].period) == (7, 60)
    assert table["api_user"] is None
    assert table["vote"] is not None and table["vote"].limit == 2


def test_waiting_the_retry_after_given_is_enough(clock, settings):
    """Retry-After is rounded up: 39.5 s left in the window is 40, not 39 (after which the
    same window would refuse again)."""
    settings.ARTICLES_RATE_LIMITS = {"vote": (1, 60)}
    ratelimits.check(caller(), "vote")
    clock.advance(20.5)
    with pytest.raises(RateLimited) as refused:
        ratelimits.check(caller(), "vote")
    assert refused.value.retry_after == 40
    clock.advance(refused.value.retry_after)
    ratelimits.check(caller(), "vote")  # a new window: allowed
