"""A warm page vote (the in-page script's JSON and the plain form) is one Redis round trip,
its rate limit, the check of the session's kept user and the vote in one script, and no
database query (the session itself is not loaded: its user is kept); a session logged
out, a password changed or a user deactivated still casts nothing, in this process or in
one whose kept entry no signal reached.

Sessions are Django's database sessions here (the default engine): a warm vote reads no
session row, so the 0 counts every query of the request."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from articles.store import keys
from articles.store.connection import get_connection
from articles.web import sessionusers
from tests import factories
from tests.harness import redis_down

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


def _vote(client: Client, article_id: int, direction: str, *, json: bool = True) -> Any:
    extra = JSON if json else {}
    return client.post(f"/a/{article_id}/vote/", {"direction": direction, "next": "/top/"}, **extra)


def _vote_of(article_id: int, user: Any) -> str:
    conn, member = get_connection(), keys.user(user.pk)
    if conn.sismember(keys.voted(article_id), member):
        return "up"
    return "down" if conn.sismember(keys.voted_down(article_id), member) else "none"


def _logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _vote_count() -> int:
    """The vote rate-limit counters' sum: how many page votes were counted."""
    conn = get_connection()
    return sum(int(conn.get(key) or 0) for key in conn.scan_iter("ratelimit:vote:*"))


@pytest.mark.parametrize("json", [True, False], ids=["json", "form"])
def test_a_warm_page_vote_is_one_round_trip_and_no_query(make_user, round_trips, json):
    bob = make_user()
    article_id = factories.article(make_user()).id
    client = _logged_in(bob)
    assert _vote(client, article_id, "down", json=json).status_code in (200, 302)  # kept
    with CaptureQueriesContext(connection) as queries:
        trips, response = round_trips(lambda: _vote(client, article_id, "up", json=json))
    if json:
        assert response.status_code == 200 and response.json()["my_vote"] == "up"
    else:
        assert response.status_code == 302 and response["Location"] == f"/top/#a{article_id}"
    assert trips == 1, trips
    assert len(queries) == 0, [q["sql"] for q in queries]
    assert _vote_of(article_id, bob) == "up" and _vote_count() == 2


def _revoke(user: Any, how: str) -> None:
    if how == "logout":
        _logged_in(user).post("/accounts/logout/")  # another session of the user's
    elif how == "password":
        user.set_password("a-new-Secret-456")
        user.save()
    else:
        user.is_active = False
        user.save()


@pytest.mark.parametrize("json", [True, False], ids=["json", "form"])
@pytest.mark.parametrize("how", ["password", "deactivated", "logged-out"])
def test_a_revoked_session_kept_in_another_process_casts_nothing(make_user, round_trips, how, json):
    """Another process keeps its entry (no signal of this one reaches it): put back here
    as it was, only the credential epoch in Redis tells it the session is no good."""
    bob = make_user()
    article_id = factories.article(make_user()).id
    client = _logged_in(bob)
    assert _vote(client, article_id, "up").status_code == 200
    elsewhere = dict(sessionusers._kept._items)
    if how == "logged-out":
        client.post("/accounts/logout/")  # this very session, logged out in process A
        client = Client()
        client.cookies["sessionid"] = next(iter(elsewhere))
    else:
        _revoke(type(bob).objects.get(pk=bob.pk), how)
    sessionusers._kept._items.update(elsewhere)
    trips, response = round_trips(lambda: _vote(client, article_id, "down", json=json))
    if json:
        assert response.status_code == 401 and response.json()["code"] == "login_required"
    else:
        assert response.status_code == 302
        assert response["Location"] == (
            f"/accounts/login/?next=%2Ftop%2F&vote_on={article_id}&direction=down"
        )
    assert trips == 1  # the script counted the request and refused the vote; no retry
    assert _vote_of(article_id, bob) == "up"  # the down-vote was not cast
    assert next(iter(elsewhere)) not in sessionusers._kept  # and the entry dropped


def test_a_logout_of_another_session_reads_this_one_again_and_votes_once(make_user, round_trips):
    """A logout of the user's other session stamps the same epoch: this session is read
    again from the database, found logged in, and the vote cast; counted once."""
    bob = make_user()
    article_id = factories.article(make_user()).id
    client = _logged_in(bob)
    assert _vote(client, article_id, "down").status_code == 200
    elsewhere = dict(sessionusers._kept._items)
    _revoke(bob, "logout")
    sessionusers._kept._items.update(elsewhere)  # as a process the signal missed
    with CaptureQueriesContext(connection) as queries:
        trips, response = round_trips(lambda: _vote(client, article_id, "up"))
    assert response.status_code == 200 and response.json()["my_vote"] == "up"
    assert trips == 2 and len(queries) == 2  # the session and its user, read again
    assert _vote_count() == 2  # one for each vote


@pytest.mark.usefixtures("clock")
@pytest.mark.parametrize("json", [True, False], ids=["json", "form"])
def test_the_vote_limit_refuses_a_warm_page_vote_with_the_same_429(make_user, settings, json):
    settings.ARTICLES_RATE_LIMITS = {"vote": (2, 60)}
    bob = make_user()
    article_id = factories.article(make_user()).id
    client = _logged_in(bob)
    answers = [_vote(client, article_id, d, json=json) for d in ("up", "down", "none")]
    assert [a.status_code for a in answers] == ([200, 200, 429] if json else [302, 302, 429])
    refused = answers[2]
    message = "Too many votes: at most 2 every minute. Try again"
    if json:
        assert refused.json()["code"] == "rate_limited"
        assert refused.json()["detail"].startswith(message)
    else:
        assert message in refused.content.decode()
    assert refused["Retry-After"] == "60"
    assert _vote_of(article_id, bob) == "down"


def test_a_warm_page_vote_with_redis_down_is_a_503(make_user):
    bob = make_user()
    article_id = factories.article(make_user()).id
    client = _logged_in(bob)
    assert _vote(client, article_id, "up").status_code == 200
    with redis_down():
        answer, page = (
            _vote(client, article_id, "down"),
            _vote(client, article_id, "down", json=False),
        )
    assert answer.status_code == 503 and page.status_code == 503
    assert answer.json()["code"] == "store_unavailable" and answer["Retry-After"] == "5"
    assert _vote(client, article_id, "down").status_code == 200
