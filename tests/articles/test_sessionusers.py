"""A session's user kept in the process for the app's views: no database query on a warm
vote, and dropped on logout, password change, deactivation and after its few seconds."""

from __future__ import annotations

import pytest
from django.contrib.sessions.models import Session
from django.test import Client

from articles.store import services
from articles.types import NewPost
from articles.web import sessionusers

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_passwords(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def article(user):  # type: ignore[no-untyped-def]
    return services.article_post(
        NewPost(
            user_id=user.pk, poster_name=user.username, title="Hello", link="https://example.org/a"
        )
    )


def vote(client: Client, article_id: int, direction: str = "up") -> int:
    response = client.post(
        f"/a/{article_id}/vote/", {"direction": direction}, HTTP_ACCEPT="application/json"
    )
    return response.status_code


def logged_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_a_warm_session_vote_asks_the_database_nothing(make_user, django_assert_num_queries):
    a = article(make_user())
    client = logged_in(make_user())
    assert vote(client, a.id) == 200  # Django's own check, then kept
    with django_assert_num_queries(0):
        assert vote(client, a.id, "down") == 200
    with django_assert_num_queries(0):
        assert client.get("/new/").status_code == 200


def test_an_anonymous_or_unknown_session_is_never_kept(make_user):
    a = article(make_user())
    client = Client()
    client.cookies["sessionid"] = "no-such-session-key"
    assert vote(client, a.id) == 401
    assert client.get("/new/").status_code == 200
    assert sessionusers._kept == {}


def test_logging_out_drops_the_kept_user(make_user):
    a = article(make_user())
    client = logged_in(make_user())
    old_cookie = client.cookies["sessionid"].value
    assert vote(client, a.id) == 200
    assert old_cookie in sessionusers._kept
    client.post("/accounts/logout/")
    replay = Client()
    replay.cookies["sessionid"] = old_cookie
    assert vote(replay, a.id) == 401


def test_a_password_change_logs_out_the_other_sessions_at_once(make_user):
    ann = make_user()
    a = article(make_user())
    other = logged_in(ann)
    assert vote(other, a.id) == 200
    here = logged_in(ann)
    data = {
        "old_password": "pw-Secret-123",
        "new_password1": "Brand-new-99",
        "new_password2": "Brand-new-99",
    }
    here.get("/accounts/password/")
    response = here.post("/accounts/password/", data)
    assert response.status_code == 302
    assert vote(other, a.id, "down") == 401
    assert vote(here, a.id, "down") == 200  # the session that changed it stays logged in


def test_a_deactivated_user_is_dropped_at_once(make_user):
    bob = make_user()
    a = article(make_user())
    client = logged_in(bob)
    assert vote(client, a.id) == 200
    bob.is_active = False
    bob.save()
    assert vote(client, a.id, "down") == 401


def test_a_session_deleted_elsewhere_is_refused_once_its_few_seconds_pass(make_user, monkeypatch):
    """Ensure the staleness is bounded: another process' logout deletes only the row."""
    a = article(make_user())
    client = logged_in(make_user())
    assert vote(client, a.id) == 200
    Session.objects.all().delete()  # what another process' logout does to this one
    assert vote(client, a.id, "down") == 200  # kept: at most ARTICLES_SESSION_CACHE_SECONDS
    later = sessionusers.time.monotonic() + 6
    monkeypatch.setattr(sessionusers.time, "monotonic", lambda: later)
    assert vote(client, a.id, "none") == 401


def test_zero_seconds_turns_it_off(make_user, settings):
    settings.ARTICLES_SESSION_CACHE_SECONDS = 0
    a = article(make_user())
    client = logged_in(make_user())
    assert vote(client, a.id) == 200
    assert sessionusers._kept == {}
