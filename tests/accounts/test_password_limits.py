"""Every password check counts against the failed-login limits (login_account and
login_address), wherever it is made: the login page, the token endpoint, the admin's login,
the password change page and account deletion. Each attempt is counted before its password
is checked, so a limiter that cannot count (Redis full or down) refuses the attempt."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from articles.errors import RateLimited
from articles.operations.embedded import EmbeddedRedis
from articles.store import logins
from articles.store.connection import get_connection
from tests.harness import redis_refusing_writes

pytestmark = pytest.mark.django_db
PASSWORD = "pw-Secret-123"
LOCKED = "Too many failed logins for this account: at most 5 every 15 minutes."


def _change(client: Client, old: str, new: str = "A-new-pass-456"):  # type: ignore[no-untyped-def]
    data = {"old_password": old, "new_password1": new, "new_password2": new}
    return client.post("/accounts/password/", data)


def _login(client: Client, username: str, password: str):  # type: ignore[no-untyped-def]
    return client.post("/accounts/login/", {"username": username, "password": password})


def _account_counts() -> list[int]:
    conn = get_connection()
    return [int(v) for v in conn.mget(conn.keys("ratelimit:login_account:*"))]


# --- the password change page and account deletion ----------------------------------------


@pytest.mark.usefixtures("clock")
def test_wrong_old_passwords_lock_the_password_change_even_for_the_right_one(make_user):
    dave = make_user("dave")
    client = Client()
    client.force_login(dave)
    for i in range(5):
        wrong = _change(client, f"wrong{i}")
        assert wrong.status_code == 400
    for i in range(20):  # past the limit: refused without a check, however many
        assert _change(client, f"again{i}").status_code == 429
    locked = _change(client, PASSWORD)
    assert locked.status_code == 429 and locked["Retry-After"] == "900"
    assert LOCKED in locked.text and "Try again in" in locked.text
    dave.refresh_from_db()
    assert dave.check_password(PASSWORD)  # unchanged
    # One lock for the account, whichever page counted it: the login page waits too.
    assert _login(Client(), "dave", PASSWORD).status_code == 429


@pytest.mark.usefixtures("clock")
def test_a_right_old_password_is_not_counted_as_a_failure(make_user):
    dave = make_user("dave")
    client = Client()
    client.force_login(dave)
    for i in range(4):
        assert _change(client, f"wrong{i}").status_code == 400
    assert _change(client, PASSWORD).status_code == 302
    assert _account_counts() == [4]


@pytest.mark.usefixtures("clock")
def test_wrong_delete_passwords_lock_the_deletion_even_for_the_right_one(make_user):
    dave = make_user("dave")
    client = Client()
    client.force_login(dave)
    for _ in range(5):
        wrong = client.post("/accounts/delete/", {"password": "wrong"})
        assert wrong.status_code == 400 and "That is not your password." in wrong.text
    locked = client.post("/accounts/delete/", {"password": PASSWORD})
    assert locked.status_code == 429 and locked["Retry-After"] == "900"
    assert LOCKED in locked.text
    assert get_user_model().objects.filter(pk=dave.pk).exists()


@pytest.mark.usefixtures("clock")
def test_failed_logins_lock_the_password_change_and_deletion(make_user):
    dave = make_user("dave")
    for i in range(5):
        assert _login(Client(), "dave", f"wrong{i}").status_code == 400
    client = Client()
    client.force_login(dave)
    assert _change(client, PASSWORD).status_code == 429
    assert client.post("/accounts/delete/", {"password": PASSWORD}).status_code == 429
    assert get_user_model().objects.filter(pk=dave.pk).exists()


@pytest.mark.usefixtures("clock")
def test_the_address_limit_covers_password_checks_of_every_account(make_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"login_address": (3, 900)}
    users = [make_user(f"user{i}") for i in range(3)]
    for user in users:  # one wrong password for each of three accounts, from one address
        client = Client(REMOTE_ADDR="203.0.113.5")
        client.force_login(user)
        assert _change(client, "wrong").status_code == 400
    client = Client(REMOTE_ADDR="203.0.113.5")
    client.force_login(make_user("erin"))
    refused = _change(client, PASSWORD)
    assert refused.status_code == 429 and "failed logins from your address" in refused.text


@pytest.mark.usefixtures("clock")
def test_a_name_typed_with_spaces_or_capitals_is_the_same_account(make_user):
    make_user("dave")
    for i in range(5):
        _login(Client(), "dave", f"wrong{i}")
    client = Client()
    locked = _login(client, " DAVE ", PASSWORD)
    assert locked.status_code == 429 and LOCKED in locked.text
    assert _account_counts() == [5]  # the refused attempt took nothing


# --- counted before the check ----------------------------------------------------------


@pytest.mark.usefixtures("clock")
def test_checks_in_flight_count_before_their_passwords_are_checked(make_user, rf):
    """Concurrent guesses cannot slip past the limit between check and count: an attempt
    is counted when it starts. Five checks still running hold the account's five tries,
    so a sixth is refused before its password is looked at."""
    make_user("dave")
    ran: list[int] = []

    def nested(depth: int) -> bool:  # each a request of its own, still checking
        ran.append(depth)
        if depth < 6:
            logins.password_check(rf.post("/anywhere/"), "dave", lambda: nested(depth + 1))
        return False

    with pytest.raises(RateLimited):
        logins.password_check(rf.post("/anywhere/"), "dave", lambda: nested(1))
    assert ran == [1, 2, 3, 4, 5]


# --- a limiter that cannot count refuses ---------------------------------------------------


@pytest.fixture
def full_redis(redis_server: EmbeddedRedis) -> Iterator[EmbeddedRedis]:
    """The session's Redis at maxmemory (noeviction): it refuses every write."""
    with redis_refusing_writes(redis_server):
        yield redis_server


def _assert_store_full(response) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0


def test_logins_wait_while_redis_is_full_even_with_the_right_password(make_user, full_redis):
    make_user("dave")
    for password in ("wrong", PASSWORD):
        client = Client()
        response = _login(client, "dave", password)
        _assert_store_full(response)
        assert "full" in response.text
        assert "_auth_user_id" not in client.session
    token = APIClient().post(
        "/api/auth/token/", {"username": "dave", "password": PASSWORD}, format="json"
    )
    _assert_store_full(token)
    assert token.json()["code"] == "store_full"


def test_the_admins_login_waits_while_redis_is_full(make_user, full_redis):
    staff = make_user("root", staff=True)
    staff.is_superuser = True
    staff.save()
    client = Client()
    data = {"username": "root", "password": PASSWORD, "next": "/admin/"}
    _assert_store_full(client.post("/admin/login/?next=/admin/", data))
    assert "_auth_user_id" not in client.session


def test_password_change_and_deletion_wait_while_redis_is_full(make_user, full_redis):
    dave = make_user("dave")
    client = Client()
    client.force_login(dave)
    _assert_store_full(_change(client, PASSWORD))
    _assert_store_full(client.post("/accounts/delete/", {"password": PASSWORD}))
    dave.refresh_from_db()
    assert dave.check_password(PASSWORD)


def test_password_checks_wait_while_redis_is_down(make_user, redis_server, settings):
    dave = make_user("dave")
    client = Client()
    client.force_login(dave)  # before Redis goes away: a session of the database's
    settings.ARTICLES_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.ARTICLES_REDIS_ALIAS = None
    for response in (
        _login(Client(), "dave", PASSWORD),
        _change(client, PASSWORD),
        client.post("/accounts/delete/", {"password": PASSWORD}),
    ):
        assert response.status_code == 503 and int(response["Retry-After"]) > 0
    dave.refresh_from_db()
    assert dave.check_password(PASSWORD)
    assert get_user_model().objects.filter(pk=dave.pk).exists()


@pytest.mark.usefixtures("clock")
def test_the_admins_password_change_is_the_limited_page(make_user):
    """The admin's "Change password" leads to the site's page, whose old-password check is
    counted: guesses posted to the admin's address change nothing."""
    boss = make_user("boss", staff=True)
    client = Client()
    client.force_login(boss)
    assert client.get("/admin/password_change/")["Location"] == "/accounts/password/"
    for i in range(6):
        data = {
            "old_password": f"wrong{i}",
            "new_password1": "N-ew-9876",
            "new_password2": "N-ew-9876",
        }
        assert client.post("/admin/password_change/", data).status_code == 302
    boss.refresh_from_db()
    assert boss.check_password(PASSWORD)
    # what the admin's page links to is limited like the rest
    for i in range(5):
        assert _change(client, f"wrong{i}").status_code == 400
    assert _change(client, PASSWORD).status_code == 429


@pytest.mark.usefixtures("clock")
def test_a_locked_login_says_only_why_and_links_the_password_reset(make_user):
    """While locked, the right password is refused for the lock alone: the page does not
    also say the name or password is wrong, and its way out is a link."""
    make_user("dave")
    for i in range(5):
        assert _login(Client(), "dave", f"wrong{i}").status_code == 400
    locked = _login(Client(), "dave", PASSWORD)
    assert locked.status_code == 429
    page = locked.content.decode()
    assert LOCKED in page and "Try again in" in page
    assert "correct username and password" not in page
    assert 'or <a href="/accounts/password/reset/">reset your password</a>.' in page
    assert 'value="dave"' in page  # the name typed stays in its field
    # The API says the same in plain words.
    credentials = {"username": "dave", "password": PASSWORD}
    token = APIClient().post("/api/auth/token/", credentials, format="json")
    assert token.status_code == 429 and "or reset your password." in token.json()["detail"]
