"""CSRF on every form and on session-authenticated API writes; votes only by POST (pages)
and PUT (API). A refused request changes nothing in the store or the accounts."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from tests.reliability.hostile import (
    API_WRITES,
    PAGE_WRITES,
    build_world,
    db_state,
    snapshot,
    without_volatile,
)

log = logging.getLogger("reliability")
pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"
WRONG = "x" * 32  # a well-formed token of no session


@pytest.fixture
def users(make_user):  # type: ignore[no-untyped-def]
    return {
        "poster": make_user("poster"),
        "other": make_user("other"),
        "staff": make_user("staff", staff=True),
    }


def _csrf_client(user=None) -> Client:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    if user is not None:
        client.force_login(user)
    client.get("/accounts/password/reset/")  # a form for anyone: sets the csrftoken cookie
    return client


def _state() -> tuple[object, object]:
    return without_volatile(snapshot()), db_state()


def test_every_page_form_refuses_a_post_without_its_csrf_token(users):  # type: ignore[no-untyped-def]
    tried = 0
    for action, (path, data) in PAGE_WRITES.items():
        article_id = build_world(users)
        client = _csrf_client(users["staff"])
        url = path.format(a=article_id)
        before = _state()
        for token in (None, "", WRONG):
            sent = data if token is None else {**data, "csrfmiddlewaretoken": token}
            response = client.post(url, sent)
            assert response.status_code == 403, (action, token)
            assert b"CSRF" in response.content
            assert _state() == before, (action, token)
            tried += 1
        # The same request with the token goes through: it was the token that was missing.
        good = {**data, "csrfmiddlewaretoken": client.cookies["csrftoken"].value}
        response = client.post(url, good)
        assert response.status_code == 302, action
        assert _state() != before, action
        tried += 1
    log.info(f"csrf: {tried} page form posts")


def test_the_account_forms_refuse_a_post_without_its_csrf_token(users):  # type: ignore[no-untyped-def]
    poster = users["poster"]
    new_password = {
        "old_password": PASSWORD,
        "new_password1": "an-Other-pw-987",
        "new_password2": "an-Other-pw-987",
    }
    forms = [
        (
            "/signup/",
            None,
            {"username": "eve", "password1": "pw-Eve-1234x", "password2": "pw-Eve-1234x"},
        ),
        ("/accounts/login/", None, {"username": "poster", "password": PASSWORD}),
        ("/accounts/logout/", poster, {}),
        ("/accounts/password/", poster, new_password),
        ("/admin/login/", None, {"username": "staff", "password": PASSWORD}),
    ]
    for url, user, data in forms:
        client = _csrf_client(user)
        before = _state()
        response = client.post(url, data)
        assert response.status_code == 403, url
        assert _state() == before, url
        assert ("_auth_user_id" in client.session) == (user is not None), url
        data = {**data, "csrfmiddlewaretoken": client.cookies["csrftoken"].value}
        assert client.post(url, data).status_code == 302, url
    assert get_user_model().objects.filter(username="eve").exists()
    poster.refresh_from_db()
    assert poster.check_password("an-Other-pw-987")


def test_session_authenticated_api_writes_need_the_csrf_header(users):  # type: ignore[no-untyped-def]
    tried = 0
    for action, (method, path, body) in API_WRITES.items():
        article_id = build_world(users)
        client = APIClient(enforce_csrf_checks=True)
        client.force_login(users["staff"])
        client.get("/accounts/password/reset/")
        url = path.format(a=article_id)
        before = _state()
        for header in ({}, {"HTTP_X_CSRFTOKEN": WRONG}):
            response = getattr(client, method)(url, body, format="json", **header)
            assert response.status_code == 403, (action, response.content)
            assert "CSRF" in response.json()["detail"], action
            assert _state() == before, action
            tried += 1
        token = client.cookies["csrftoken"].value
        response = getattr(client, method)(url, body, format="json", HTTP_X_CSRFTOKEN=token)
        assert response.status_code < 300, (action, response.content)
        assert _state() != before, action
        tried += 1
    log.info(f"csrf: {tried} session-authenticated API writes")


def test_a_get_or_other_method_on_a_vote_url_never_votes(users):  # type: ignore[no-untyped-def]
    article_id = build_world(users)
    page = Client()
    page.force_login(users["other"])
    api = APIClient()
    api.force_login(users["other"])
    before = _state()
    vote_page, vote_api = f"/a/{article_id}/vote/", f"/api/articles/{article_id}/vote/"
    tries = [
        (page.get(vote_page, {"direction": "down"}), 405),
        (page.head(vote_page, {"direction": "down"}), 405),
        (page.put(vote_page, "direction=down"), 405),
        (page.get(f"/a/{article_id}/", {"direction": "down"}), 200),
        (api.get(vote_api, {"value": "down"}), 405),
        (api.get(f"{vote_api}?value=down", HTTP_ACCEPT="text/html"), 405),
        (api.post(vote_api, {"value": "down"}, format="json"), 405),
        (api.patch(vote_api, {"value": "down"}, format="json"), 405),
        (api.delete(vote_api), 405),
        (api.options(vote_api), 200),
    ]
    for response, status in tries:
        assert response.status_code == status, response.request["PATH_INFO"]
    assert _state() == before
    # Other writes by GET: refused too, and a GET does not log out.
    staff = Client()
    staff.force_login(users["staff"])
    assert staff.get(f"/staff/a/{article_id}/groups/", {"add": "green"}).status_code == 405
    # The delete URL's GET is its confirmation page: it asks, and deletes nothing.
    asked = staff.get(f"/staff/a/{article_id}/delete/", {"reason": "r"})
    assert asked.status_code == 200 and b'method="post"' in asked.content.lower()
    assert staff.get("/staff/groups/red/delete/").status_code == 405
    assert staff.get("/accounts/logout/").status_code == 405
    assert "_auth_user_id" in staff.session
    assert _state()[0] == before[0]
    log.info(f"csrf: {len(tries) + 4} GET/other-method tries on write URLs")
