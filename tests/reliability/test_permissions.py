"""The permission matrix: anonymous, user, poster, other user and staff, times every write
of the pages and the API. Each cell gets its expected status; where a write is refused,
no key or value of the store and no account or token changed."""

from __future__ import annotations

import logging

import pytest
from django.test import Client
from rest_framework.test import APIClient

from articles.models import ApiToken
from articles.store import tokens
from tests.reliability.hostile import (
    API_WRITES,
    PAGE_WRITES,
    ROLES,
    build_world,
    db_state,
    snapshot,
    without_volatile,
)

log = logging.getLogger("reliability")
pytestmark = pytest.mark.django_db

# "login": a redirect to log in; "ok": done, then a redirect; 403: refused.
PAGE_MATRIX: dict[str, tuple[object, ...]] = {
    #               anonymous user  poster other staff
    "vote": ("login", "ok", "ok", "ok", "ok"),
    "submit": ("login", "ok", "ok", "ok", "ok"),
    "edit": ("login", 403, 403, 403, "ok"),
    "group move": ("login", 403, 403, 403, "ok"),
    "delete": ("login", 403, 403, 403, "ok"),  # the pages let only staff delete
    "group create": ("login", 403, 403, 403, "ok"),
    "group update": ("login", 403, 403, 403, "ok"),
    "group delete": ("login", 403, 403, 403, "ok"),
}

API_MATRIX: dict[str, tuple[int, ...]] = {
    #               anonymous user poster other staff
    "submit": (401, 201, 201, 201, 201),
    "vote": (401, 200, 200, 200, 200),
    "edit": (401, 403, 403, 403, 200),
    "group move": (401, 403, 403, 403, 200),
    "delete": (401, 403, 204, 403, 204),  # its poster may delete it while voting is open
    "group create": (401, 403, 403, 403, 201),
    "group update": (401, 403, 403, 403, 200),
    "group delete": (401, 403, 403, 403, 204),
    "token": (400, 200, 200, 200, 200),  # anonymous: a wrong password
}

PASSWORD = "pw-Secret-123"


@pytest.fixture
def users(make_user):  # type: ignore[no-untyped-def]
    return {
        "anonymous": None,
        "user": make_user("user"),
        "poster": make_user("poster"),
        "other": make_user("other"),
        "staff": make_user("staff", staff=True),
    }


def _check(cell: str, before, after, allowed: bool) -> None:  # type: ignore[no-untyped-def]
    if allowed:
        assert after != before, f"{cell}: allowed, but nothing changed"
    else:
        assert after == before, f"{cell}: refused, but something changed"


def test_every_page_write_by_every_role_answers_as_the_matrix_says(users):  # type: ignore[no-untyped-def]
    assert set(PAGE_MATRIX) == set(PAGE_WRITES)
    cells = 0
    for action, (path, data) in PAGE_WRITES.items():
        for role, expected in zip(ROLES, PAGE_MATRIX[action], strict=True):
            article_id = build_world(users)
            client = Client()
            if users[role] is not None:
                client.force_login(users[role])
            url = path.format(a=article_id)
            before, db_before = without_volatile(snapshot()), db_state()
            response = client.post(url, data)
            cell = f"{action} by {role}: POST {url} -> {response.status_code}"
            after = without_volatile(snapshot())
            if expected == 403:
                assert response.status_code == 403, cell
            else:
                assert response.status_code == 302, cell
                to_login = response["Location"].startswith("/accounts/login/")
                assert to_login == (expected == "login"), (cell, response["Location"])
            _check(cell, before, after, allowed=expected == "ok")
            assert db_state() == db_before, cell
            cells += 1
    log.info(f"permissions: {cells} page cells ({len(PAGE_WRITES)} writes x {len(ROLES)} roles)")


# Each user's token key: the database keeps only digests, and a new token would change it.
_KEYS: dict[int, str] = {}


def _key_for(user) -> str:  # type: ignore[no-untyped-def]
    key = _KEYS.get(user.pk)
    if key is None or not ApiToken.objects.filter(digest=tokens.token_digest(key)).exists():
        key = _KEYS[user.pk] = tokens.token_create(user=user)
    return key


def _api_client(user) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {_key_for(user)}")
    return client


def test_every_api_write_by_every_role_answers_as_the_matrix_says(users):  # type: ignore[no-untyped-def]
    assert set(API_MATRIX) == {*API_WRITES, "token"}
    for user in users.values():
        if user is not None:
            _key_for(user)
    cells = 0
    for action, statuses in API_MATRIX.items():
        for role, expected in zip(ROLES, statuses, strict=True):
            article_id = build_world(users)
            before, db_before = without_volatile(snapshot()), db_state()
            if action == "token":
                if users[role] is not None:
                    ApiToken.objects.filter(user=users[role]).delete()
                # Both taken after the deletion (which stamps the user's credential epoch).
                before, db_before = without_volatile(snapshot()), db_state()
                name = users[role].username if users[role] else "staff"
                password = PASSWORD if users[role] else "not-the-password"
                response = APIClient().post(
                    "/api/auth/token/", {"username": name, "password": password}, format="json"
                )
                cell = f"token for {role} -> {response.status_code}"
                assert response.status_code == expected, cell
                assert (db_state() != db_before) == (expected == 200), cell
                assert without_volatile(snapshot()) == before, cell
                if response.status_code == 200:
                    _KEYS[users[role].pk] = response.json()["token"]
                cells += 1
                continue
            method, path, body = API_WRITES[action]
            url = path.format(a=article_id)
            response = getattr(_api_client(users[role]), method)(url, body, format="json")
            cell = f"{action} by {role}: {method.upper()} {url} -> {response.status_code}"
            assert response.status_code == expected, (cell, response.content[:200])
            if expected != 204:
                assert response["Content-Type"] == "application/json", cell
            _check(cell, before, without_volatile(snapshot()), allowed=expected < 300)
            assert db_state() == db_before, cell
            cells += 1
    log.info(f"permissions: {cells} API cells ({len(API_MATRIX)} writes x {len(ROLES)} roles)")
