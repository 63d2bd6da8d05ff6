"""A warm token vote is one Redis round trip (its rate limits, the check of its kept token
and the vote, in one script) and no database query; a revoked token still acts on
nothing, in this process or in one whose kept entry no signal reached."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from articles.api import tokens as api_tokens
from articles.store import keys, people, ratelimits, tokens
from articles.store.connection import get_connection
from tests import factories
from tests.harness import redis_down

pytestmark = pytest.mark.django_db


def _article() -> int:
    return factories.article(999, "T", "https://e.org/", poster_name="p", now=time.time()).id


def _vote(client, article_id: int, value: str = "up"):  # type: ignore[no-untyped-def]
    return client.put(f"/api/articles/{article_id}/vote/", {"value": value}, format="json")


def _vote_of(article_id: int, user: Any) -> str:
    conn, member = get_connection(), keys.user(user.pk)
    if conn.sismember(keys.voted(article_id), member):
        return "up"
    return "down" if conn.sismember(keys.voted_down(article_id), member) else "none"


def test_a_warm_token_vote_is_one_round_trip_and_no_query(as_user, round_trips):
    article_id = _article()
    assert _vote(as_user, article_id, "down").status_code == 200  # keeps the token's user
    with CaptureQueriesContext(connection) as queries:
        trips, response = round_trips(lambda: _vote(as_user, article_id, "up"))
    assert response.status_code == 200 and response.json()["my_vote"] == "up"
    assert response["RateLimit-Limit"] and response["RateLimit-Remaining"]
    assert trips == 1, trips
    assert len(queries) == 0, [q["sql"] for q in queries]


def test_a_kept_token_lives_minutes_not_seconds(as_user):
    """Ensure a token is read from the database once in minutes, not every 5 s (60 % of
    the votes of 2,000 users asked it): every use is checked against the credential
    epoch, so an entry may live long."""
    article_id = _article()
    assert _vote(as_user, article_id).status_code == 200
    [(_, _, expires)] = api_tokens._kept._items.values()
    assert expires is not None and expires - time.monotonic() > 120


def _revoke(user: Any, how: str) -> None:
    if how == "tokens":
        tokens.user_tokens_revoke(user=user)
    elif how == "password":
        user.set_password("a-new-Secret-456")
        user.save()
    else:
        user.is_active = False
        user.save()


@pytest.mark.parametrize("how", ["tokens", "password", "deactivated"])
def test_a_revoked_token_is_refused_at_its_next_vote_in_this_process(as_user, how):
    article_id = _article()
    assert _vote(as_user, article_id).status_code == 200
    _revoke(type(as_user.user).objects.get(pk=as_user.user.pk), how)
    response = _vote(as_user, article_id, "down")
    assert response.status_code == 401, response.content
    assert _vote_of(article_id, as_user.user) == "up"  # the down-vote was not cast


@pytest.mark.parametrize("how", ["tokens", "password", "deactivated"])
def test_a_revoked_token_kept_in_another_process_is_refused_at_its_next_vote(
    as_user, how, round_trips
):
    """Another process keeps its entry (no signal of this one reaches it): put back here
    as it was, only the credential epoch in Redis tells it the token was revoked."""
    article_id = _article()
    assert _vote(as_user, article_id).status_code == 200
    elsewhere = dict(api_tokens._kept._items)
    _revoke(type(as_user.user).objects.get(pk=as_user.user.pk), how)
    api_tokens._kept._items.update(elsewhere)  # what the other process still holds
    with CaptureQueriesContext(connection) as queries:
        trips, response = round_trips(lambda: _vote(as_user, article_id, "down"))
    assert response.status_code == 401, response.content
    assert len(queries) == 1  # the kept entry refused, the token read again: gone
    assert trips == 1  # the script counted the request and refused the vote; no retry
    assert _vote_of(article_id, as_user.user) == "up"


def test_an_epoch_stamped_for_another_credential_reads_the_token_again_and_votes_once(
    as_user, round_trips
):
    """A logout of the user's web session stamps the same epoch: the kept token is read
    again from the database, found good, and the vote cast; the request counted once."""
    article_id = _article()
    first = _vote(as_user, article_id, "down")
    people.credentials_revoked(as_user.user.pk)  # another process' logout
    with CaptureQueriesContext(connection) as queries:
        trips, response = round_trips(lambda: _vote(as_user, article_id, "up"))
    assert response.status_code == 200 and response.json()["my_vote"] == "up"
    assert len(queries) == 1 and trips == 2
    remaining = int(first["RateLimit-Remaining"]) - int(response["RateLimit-Remaining"])
    assert remaining == 1


@pytest.mark.usefixtures("clock")
def test_the_vote_limit_refuses_with_the_same_429_and_headers(as_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"vote": (2, 60)}
    article_id = _article()
    answers = [_vote(as_user, article_id, value) for value in ("up", "down", "none")]
    assert [a.status_code for a in answers] == [200, 200, 429]
    refused = answers[2]
    assert refused.json()["code"] == "rate_limited"
    assert refused.json()["detail"].startswith("Too many votes: at most 2 every minute. Try again")
    assert refused["RateLimit-Limit"] == "2" and refused["RateLimit-Remaining"] == "0"
    assert 1 <= int(refused["RateLimit-Reset"]) <= 60
    assert refused["Retry-After"] == refused["RateLimit-Reset"]
    assert [a["RateLimit-Remaining"] for a in answers[:2]] == ["1", "0"]
    assert _vote_of(article_id, as_user.user) == "down"


@pytest.mark.usefixtures("clock")
def test_a_bad_vote_body_is_counted_too(as_user, settings):
    """Ensure a 400 counts against the limits, as when they were counted before the body
    was read: bad requests cannot be sent without end."""
    settings.ARTICLES_RATE_LIMITS = {"vote": (1, 60)}
    article_id = _article()
    bad = as_user.put(f"/api/articles/{article_id}/vote/", {"value": "sideways"}, format="json")
    assert bad.status_code == 400 and bad["RateLimit-Remaining"] == "0"
    assert _vote(as_user, article_id).status_code == 429
    assert (
        as_user.put(f"/api/articles/{article_id}/vote/", {"value": "x"}, format="json").status_code
        == 429
    )
    assert _vote_of(article_id, as_user.user) == "none"


def test_a_warm_token_vote_with_redis_down_is_a_503(as_user):
    article_id = _article()
    assert _vote(as_user, article_id).status_code == 200
    with redis_down():
        response = _vote(as_user, article_id, "down")
    assert response.status_code == 503
    assert response.json()["code"] == "store_unavailable" and response["Retry-After"] == "5"
    assert _vote(as_user, article_id, "down").status_code == 200


@pytest.mark.usefixtures("clock")
def test_the_script_counts_the_very_windows_check_counts(as_user, rf):
    """Ensure the one registry rules: a vote's script counts the keys, with the expiries,
    that ratelimits.check() counts for the same request."""
    article_id = _article()
    conn = get_connection()
    assert _vote(as_user, article_id).status_code == 200
    counted = {key: (conn.get(key), conn.ttl(key)) for key in conn.scan_iter("ratelimit:*")}
    conn.delete(*counted)
    request = rf.put(f"/api/articles/{article_id}/vote/", REMOTE_ADDR="127.0.0.1")
    request.user = as_user.user
    ratelimits.check(request, "api", "api_user", "api_write", "vote")
    checked = {key: (conn.get(key), conn.ttl(key)) for key in conn.scan_iter("ratelimit:*")}
    assert len(counted) == 4 and counted.keys() == checked.keys()
    for key, (count, ttl) in counted.items():
        assert count == checked[key][0] == b"1" and abs(ttl - checked[key][1]) <= 2, key
