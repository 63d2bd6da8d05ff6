"""Sign-ups racing for one new name, on real threads against the real database."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from tests.harness import threads_together

pytestmark = pytest.mark.slow


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("clock")
def test_eight_simultaneous_sign_ups_of_one_name_make_one_user_and_seven_form_errors(settings):
    """Ensure the sign-ups that lose the race for a name get the form's error (400), not a
    500 from the UNIQUE constraint the form's own check could not see coming."""
    settings.ARTICLES_RATE_LIMITS = {"signup": None}
    data = {"username": "racer", "password1": "pw-Secret-123", "password2": "pw-Secret-123"}

    def sign_up(n: int) -> tuple[int, str]:
        client = Client(raise_request_exception=False)
        try:
            response = client.post("/signup/", data, REMOTE_ADDR=f"10.0.0.{n + 1}")
            return response.status_code, response.content.decode()
        finally:
            connection.close()

    results = threads_together(sign_up, 8)
    statuses = sorted(status for status, _ in results)
    assert 500 not in statuses, [b[-600:] for s, b in results if s == 500]
    assert statuses.count(302) <= 1, statuses
    for status, body in results:
        if status == 400:
            assert "A user with that username already exists." in body
    # The test database is SQLite in shared-cache memory: a racer may also meet its table
    # lock, which is the clear 503 database_unavailable, never a 500.
    assert set(statuses) <= {302, 400, 503}, statuses
    assert get_user_model().objects.filter(username="racer").count() == 1


@pytest.mark.django_db
def test_a_sign_up_committed_between_the_forms_two_name_checks_is_named_as_taken(monkeypatch):
    """Ensure the refusal names the true cause when the very name is signed up between the
    form's exact-name query and its look-alike query: "already exists", not "looks like"."""
    from articles.store import people

    looked = people.name_taken

    def name_taken_after_a_racer(name: str) -> bool:
        if not get_user_model().objects.filter(username="racer").exists():
            get_user_model().objects.create_user("racer", password="pw-Secret-123")
        return looked(name)

    monkeypatch.setattr(people, "name_taken", name_taken_after_a_racer)
    data = {"username": "racer", "password1": "pw-Secret-123", "password2": "pw-Secret-123"}
    response = Client().post("/signup/", data)
    assert response.status_code == 400
    assert "A user with that username already exists." in response.content.decode()
    assert get_user_model().objects.filter(username="racer").count() == 1
