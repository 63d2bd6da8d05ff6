"""The session's save at the end of a request, against the real (SQLite) test database: a
database that cannot take it is a 503, a session deleted meanwhile still Django's 400."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path

pytestmark = pytest.mark.urls(__name__)

_held: list[sqlite3.Connection] = []


def remember(request: HttpRequest, then: str) -> HttpResponse:
    """Changes the session, then (`then`) has another connection take the database's write
    lock until the test lets go, or deletes this session's row (a log-out elsewhere)."""
    request.session["seen"] = request.session.get("seen", 0) + 1
    if then == "locked":
        other = sqlite3.connect(connection.settings_dict["NAME"], uri=True, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        _held.append(other)
    elif then == "deleted":
        Session.objects.filter(session_key=request.session.session_key).delete()
    return HttpResponse("changed")


urlpatterns = [path("remember/<str:then>", remember)]


@pytest.fixture
def member() -> Iterator[Client]:
    if connection.vendor != "sqlite" or "mode=memory" not in connection.settings_dict["NAME"]:
        pytest.skip("takes the lock of SQLite's shared in-memory test database")
    client = Client(raise_request_exception=False)
    client.force_login(get_user_model().objects.create_user("ann", password="pw-Secret-123"))
    yield client
    while _held:
        _held.pop().close()


def _seen(client: Client) -> int | None:
    return Session.objects.get(session_key=client.session.session_key).get_decoded().get("seen")


@pytest.mark.django_db(transaction=True)
def test_a_session_save_the_database_refuses_is_a_503_and_changes_nothing(member):
    """Ensure a database locked (or down) when the changed session is saved gives the clear
    503 database_unavailable, not Django's 400 "session interrupted", and that the next
    request, the lock gone, saves as usual (the site recovers by itself)."""
    response = member.get("/remember/locked", HTTP_ACCEPT="application/json")
    assert response.status_code == 503, response.content[:300]
    assert response.json()["code"] == "database_unavailable"
    assert int(response["Retry-After"]) > 0
    assert "sessionid" not in response.cookies
    _held.pop().execute("ROLLBACK")
    assert _seen(member) is None

    response = member.get("/remember/free")
    assert response.status_code == 200 and response.content == b"changed"
    assert _seen(member) == 1


@pytest.mark.django_db(transaction=True)
def test_a_session_deleted_before_its_save_is_still_djangos_400(member):
    """Ensure only a dependency's failure changes the answer: a session a concurrent log-out
    deleted is still the 400 SessionInterrupted Django gives."""
    response = member.get("/remember/deleted")
    assert response.status_code == 400
    assert not Session.objects.exists()
