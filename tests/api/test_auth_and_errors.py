"""Tokens, sessions with CSRF, rate limits, unknown paths and a Redis outage under /api/."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings
from rest_framework.test import APIClient

from articles.models import ApiToken
from articles.store import keys, selectors, services, tokens
from tests.actors import staff_actor
from tests.harness import redis_down, redis_refusing_writes

pytestmark = pytest.mark.django_db


def test_a_token_is_given_for_a_username_and_password(anon, make_user):
    user = make_user("carol", password="pw-Secret-123")
    response = anon.post(
        "/api/auth/token/", {"username": "carol", "password": "pw-Secret-123"}, format="json"
    )
    assert response.status_code == 200
    (key,) = response.json().values()
    assert list(response.json()) == ["token"] and len(key) == 40
    assert ApiToken.objects.get(user=user).digest == tokens.token_digest(key)


def test_a_wrong_password_gets_no_token(anon, make_user):
    make_user("carol")
    response = anon.post(
        "/api/auth/token/", {"username": "carol", "password": "wrong"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "authorization"
    missing = anon.post("/api/auth/token/", {"username": "carol"}, format="json")
    assert missing.status_code == 400 and missing.json()["field"] == "password"


def test_a_bad_token_is_401(anon):
    anon.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = anon.get("/api/articles/")
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_a_session_login_works_with_csrf_and_fails_without(make_user):
    user = make_user("dave")
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    data = {"title": "By session", "link": "https://example.org/session"}
    refused = client.post("/api/articles/", data, format="json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    page = client.get("/api/articles/", HTTP_ACCEPT="text/html")  # the browsable API
    assert page.status_code == 200 and b"<html" in page.content
    token = client.cookies["csrftoken"].value
    accepted = client.post("/api/articles/", data, format="json", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 201 and accepted.json()["poster"] == "dave"


@pytest.mark.parametrize(
    "path",
    ["/api/", "/api/articles/", "/api/articles/1/", "/api/groups/", "/api/modlog/"],
)
def test_the_browsable_api_stays_on(anon, post, path):
    post()
    page = anon.get(path, HTTP_ACCEPT="text/html")
    assert page.status_code == 200 and b"<html" in page.content, path


def test_an_unknown_path_under_api_is_a_json_404(anon):
    paths = ("/api/nope/", "/api/articles/1/nope/", "/api/groups/A/", "/api/groups/x%0A/articles/")
    for path in paths:
        response = anon.get(path)
        assert response.status_code == 404, path
        assert response.json() == {"detail": "Not found.", "code": "not_found"}


def test_a_body_that_is_not_json_is_a_json_415(as_user, anon):
    response = as_user.post("/api/articles/", "title=T", content_type="text/plain")
    assert response.status_code == 415 and response.json()["code"] == "unsupported_media_type"
    broken = anon.post(
        "/api/auth/token/", b"--x\r\nB--x--\r\n", content_type="multipart/form-data; boundary=x"
    )
    assert broken.status_code == 415


def test_a_token_can_be_asked_for_with_a_form_too(anon, make_user):
    make_user("carol", password="pw-Secret-123")
    response = anon.post(
        "/api/auth/token/",
        "username=carol&password=pw-Secret-123",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 200 and len(response.json()["token"]) == 40


def test_a_method_not_allowed_is_json(anon):
    response = anon.delete("/api/articles/")
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"


def test_every_response_carries_its_rate_limit_headers(anon, settings, clock):
    settings.ARTICLES_RATE_LIMITS = {"api": (5, 60)}
    clock.advance(15)
    response = anon.get("/api/articles/")
    assert response["RateLimit-Limit"] == "5"
    assert response["RateLimit-Remaining"] == "4"
    assert response["RateLimit-Reset"] == "45"


def test_an_address_over_its_limit_gets_429_with_retry_after(anon, settings, clock):
    settings.ARTICLES_RATE_LIMITS = {"api": (3, 60)}
    statuses = [anon.get("/api/articles/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    clock.advance(59.5)
    response = anon.get("/api/groups/")
    assert response.status_code == 429
    assert response.json()["code"] == "rate_limited"
    assert response["Retry-After"] == "1"  # never 0, even in the window's last second
    assert response["RateLimit-Limit"] == "3" and response["RateLimit-Remaining"] == "0"
    other = APIClient(REMOTE_ADDR="10.0.0.9")
    assert other.get("/api/articles/").status_code == 200
    clock.advance(0.5)  # the next window
    assert anon.get("/api/articles/").status_code == 200


@pytest.mark.usefixtures("clock")
def test_a_user_over_its_limit_gets_429_from_any_address(as_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"api": (100, 60), "api_user": (2, 60)}
    assert as_user.get("/api/articles/", REMOTE_ADDR="10.0.0.1").status_code == 200
    assert as_user.get("/api/articles/", REMOTE_ADDR="10.0.0.2").status_code == 200
    response = as_user.get("/api/articles/", REMOTE_ADDR="10.0.0.3")
    assert response.status_code == 429 and response["RateLimit-Limit"] == "2"


@pytest.mark.usefixtures("clock")
def test_writes_have_a_tighter_limit_of_their_own(as_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"api_write": (1, 60)}
    data = {"title": "T", "link": "https://example.org/1"}
    assert as_user.post("/api/articles/", data, format="json").status_code == 201
    data["link"] = "https://example.org/2"
    assert as_user.post("/api/articles/", data, format="json").status_code == 429
    assert as_user.get("/api/articles/").status_code == 200
    assert selectors.article_list().count == 1


def test_posting_counts_against_the_post_limit_the_web_pages_share(as_user, conn, settings, clock):
    settings.ARTICLES_RATE_LIMITS = {"post": (2, 3600)}
    statuses = [
        as_user.post(
            "/api/articles/", {"title": "T", "link": f"https://example.org/{n}"}, format="json"
        ).status_code
        for n in range(3)
    ]
    assert statuses == [201, 201, 429]
    assert selectors.article_list().count == 2
    window = int(clock.now() // 3600)
    assert conn.get(keys.rate_limit("post", f"u{as_user.user.pk}", window)) == b"3"


@pytest.mark.usefixtures("clock")
def test_voting_counts_against_the_vote_limit(as_user, post, settings):
    settings.ARTICLES_RATE_LIMITS = {"vote": (1, 60)}
    article = post()
    url = f"/api/articles/{article.id}/vote/"
    assert as_user.put(url, {"value": "up"}, format="json").status_code == 200
    refused = as_user.put(url, {"value": "down"}, format="json")
    assert refused.status_code == 429
    assert "Too many votes" in refused.json()["detail"]
    assert refused["RateLimit-Limit"] == "1" and refused["RateLimit-Remaining"] == "0"
    assert refused["Retry-After"] == "60"
    assert selectors.article_get(article_id=article.id).votes == 2


@pytest.mark.usefixtures("clock")
def test_password_guessing_is_rate_limited_per_address(anon, make_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"api_write": (2, 60)}
    make_user("carol")
    guess = {"username": "carol", "password": "guess"}
    statuses = [anon.post("/api/auth/token/", guess, format="json").status_code for _ in range(3)]
    assert statuses == [400, 400, 429]


@pytest.mark.usefixtures("clock")
def test_x_forwarded_for_is_ignored_without_trusted_proxies(settings):
    settings.ARTICLES_RATE_LIMITS = {"api": (1, 60)}
    client = APIClient()
    assert client.get("/api/articles/", HTTP_X_FORWARDED_FOR="1.1.1.1").status_code == 200
    spoofed = client.get("/api/articles/", HTTP_X_FORWARDED_FOR="2.2.2.2")
    assert spoofed.status_code == 429


@pytest.mark.usefixtures("clock")
def test_with_one_proxy_the_client_is_the_address_it_saw(settings):
    """Ensure a client cannot pick its address by prepending to X-Forwarded-For."""
    settings.ARTICLES_RATE_LIMITS = {"api": (1, 60)}
    settings.ARTICLES_NUM_PROXIES = 1
    client = APIClient(REMOTE_ADDR="10.0.0.1")  # the proxy
    assert client.get("/api/articles/", HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 200
    again = client.get("/api/articles/", HTTP_X_FORWARDED_FOR="9.9.9.9, 203.0.113.5")
    assert again.status_code == 429
    other = client.get("/api/articles/", HTTP_X_FORWARDED_FOR="203.0.113.6")
    assert other.status_code == 200


def test_a_redis_outage_is_a_json_503_and_recovers(anon, as_user):
    with redis_down():
        for response in (
            anon.get("/api/articles/"),
            as_user.put("/api/articles/1/vote/", {"value": "up"}, format="json"),
        ):
            assert response.status_code == 503
            assert response.json()["code"] == "store_unavailable"
            assert response["Retry-After"] == "5"
    assert anon.get("/api/articles/").status_code == 200


@pytest.mark.parametrize("option", ["maxmemory", "min-replicas-to-write"])
def test_a_redis_refusing_writes_is_a_json_503_too(as_user, redis_server, option):
    """Ensure OOM and NOREPLICAS replies (like READONLY) read as an outage, not a 500."""
    with redis_refusing_writes(redis_server, option):
        response = as_user.post(
            "/api/articles/", {"title": "T", "link": "https://example.org/"}, format="json"
        )
    assert response.status_code == 503
    # Out of memory is its own answer (storage full, tests/reliability/test_memory_pressure.py).
    code, wait = ("store_full", "60") if option == "maxmemory" else ("store_unavailable", "5")
    assert response.json()["code"] == code
    assert response["Retry-After"] == wait


def test_an_unexpected_error_is_a_logged_json_500_not_an_html_page(anon, monkeypatch, caplog):
    """Ensure a bug answers JSON. (Bad data is no longer one: a `score:` of the wrong
    type is a 503 naming it, tests/web/test_bad_data_reads.py.)"""

    def broken(**kwargs: object) -> None:
        raise RuntimeError("a bug in a selector")

    monkeypatch.setattr("articles.store.selectors.article_list", broken)
    response = anon.get("/api/articles/")
    assert response.status_code == 500
    assert response.json() == {
        "detail": "Internal error; it has been logged.",
        "code": "server_error",
    }
    assert "a bug in a selector" in caplog.text


@pytest.mark.parametrize(
    "path",
    [
        "/api/articles.json",
        "/api/articles/1.json",
        "/api/articles/top.json",
        "/api/articles/good.json",
        "/api/groups.json",
        "/api/groups/redis.json",
        "/api/groups/redis/articles.json",
        "/api/modlog.json",
        "/api/stats.json",
        "/api/users/ann/articles.json",
        "/api/.json",
    ],
)
def test_a_format_suffix_is_a_json_404_never_a_500(anon, post, path):
    """Ensure DRF's format suffixes (which the views never took) are not routed at all."""
    post()
    response = anon.get(path)
    assert response.status_code == 404, path
    assert response.json() == {"detail": "Not found.", "code": "not_found"}


def test_the_format_query_parameter_still_picks_json(anon, post):
    post()
    response = anon.get("/api/articles/?format=json")
    assert response.status_code == 200 and response.json()["count"] == 1


@pytest.mark.parametrize(
    "path",
    [
        "/api/articles/?order=",
        "/api/articles/?page=",
        "/api/articles/top/?period=",
        "/api/articles/good/?date=",
        "/api/groups/g/articles/?order=score&page=",
        "/api/modlog/?page=",
    ],
)
def test_an_empty_query_parameter_is_a_400_naming_it_as_the_schema_says(anon, path):
    """Ensure `?order=` is refused (the schema allows no empty value), not taken as absent."""
    services.group_create(name="g", actor=staff_actor())
    response = anon.get(path)
    assert response.status_code == 400, path
    name = path.rsplit("&", 1)[-1].split("?")[-1].rstrip("=")
    assert response.json()["field"] == name and response.json()["code"] == "blank"


def test_a_number_for_a_string_field_is_a_400_as_the_schema_says(as_staff, post):
    article = post()
    refusals = [
        as_staff.post("/api/groups/", {"name": "g", "description": 5}, format="json"),
        as_staff.post(
            "/api/articles/", {"title": "T", "link": "https://e.org/", "groups": [5]}, format="json"
        ),
        as_staff.put(
            f"/api/articles/{article.id}/",
            {"title": "T", "link": "https://e.org/x", "reason": 7},
            format="json",
        ),
        as_staff.post(f"/api/articles/{article.id}/groups/", {"reason": True}, format="json"),
        as_staff.post("/api/articles/", {"title": 12, "link": "https://e.org/"}, format="json"),
    ]
    for response in refusals:
        assert response.status_code == 400, response.content
        assert response.json()["code"] == "invalid"
    assert selectors.group_list() == [] and selectors.article_list().count == 1


def test_options_on_the_docs_pages_answers_their_methods(anon):
    for path in ("/api/docs/", "/api/redoc/"):
        response = anon.options(path)
        assert response.status_code == 200, path
        assert "GET" in response["Allow"]


@override_settings(ALLOWED_HOSTS=["testserver"])
def test_a_disallowed_host_under_the_api_is_a_json_400_and_a_page_elsewhere(anon, client):
    response = anon.get("/api/articles/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response.json() == {"detail": "This host is not served here.", "code": "bad_request"}
    page = client.get("/new/", HTTP_HOST="evil.example")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")


# --- revoking tokens ---------------------------------------------------------------------


def _token_client(user) -> tuple[APIClient, str]:  # type: ignore[no-untyped-def]
    key = tokens.token_create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client, key


def test_delete_auth_token_revokes_it_at_once_in_this_process(make_user):
    """Ensure a user can revoke their token from the API, and the token cache of the
    process that answered forgets it at once (not ARTICLES_TOKEN_CACHE_SECONDS later)."""
    client, _ = _token_client(make_user("erin"))
    assert client.get("/api/articles/").status_code == 200  # now kept in the token cache
    assert client.delete("/api/auth/token/").status_code == 204
    assert not ApiToken.objects.exists()
    assert client.get("/api/articles/").status_code == 401
    assert APIClient().delete("/api/auth/token/").status_code == 401


@pytest.mark.parametrize("route", ["page", "set_password"])
def test_a_password_change_or_reset_revokes_the_users_api_tokens(make_user, route):
    """Ensure a token made with the old password stops working: by the password page, or
    any other route that saves a new password (a reset, the admin, changepassword)."""
    user = make_user("fran", password="pw-Secret-123")
    client, _ = _token_client(user)
    other, _ = _token_client(make_user("gus"))
    assert client.get("/api/articles/").status_code == 200
    if route == "page":
        browser = Client()
        browser.force_login(user)
        response = browser.post(
            "/accounts/password/",
            {
                "old_password": "pw-Secret-123",
                "new_password1": "new-Secret-456",
                "new_password2": "new-Secret-456",
            },
        )
        assert response.status_code == 302, response.content
    else:
        user.set_password("new-Secret-456")
        user.save()
    assert client.get("/api/articles/").status_code == 401
    assert other.get("/api/articles/").status_code == 200  # another user's token stays
    user.save()  # a save without a new password revokes nothing more
    assert ApiToken.objects.filter(user__username="gus").exists()


def test_the_token_page_shows_and_revokes_the_users_token(make_user):
    user = make_user("hal")
    client, _ = _token_client(user)
    assert client.get("/api/articles/").status_code == 200
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    page = browser.get("/accounts/tokens/")
    assert page.status_code == 200 and "Revoke my API token" in page.content.decode()
    csrf = browser.cookies["csrftoken"].value
    response = browser.post("/accounts/tokens/", {"csrfmiddlewaretoken": csrf})
    assert response.status_code == 302
    assert client.get("/api/articles/").status_code == 401
    assert "You have no API token" in browser.get("/accounts/tokens/").content.decode()


@pytest.mark.usefixtures("clock")
def test_requests_with_bad_tokens_count_against_the_address_limit(anon, settings):
    """Ensure guessing tokens meets the per-address limit (a 429), not endless 401s."""
    settings.ARTICLES_RATE_LIMITS = {"api": (5, 60)}
    anon.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    statuses = [anon.get("/api/articles/").status_code for _ in range(7)]
    assert statuses == [401] * 5 + [429, 429]
    assert APIClient().get("/api/articles/").status_code == 429  # same address


# --- tokens at rest ------------------------------------------------------------------------


def test_the_database_keeps_no_usable_token(anon, make_user):
    """Ensure a copy of the database (a backup, a leak) gives no token: no column of any
    row holds the key, and what is stored there does not authenticate."""
    from django.db import connection

    make_user("ivy", password="pw-Secret-123")
    body = {"username": "ivy", "password": "pw-Secret-123"}
    key = anon.post("/api/auth/token/", body, format="json").json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/articles/").status_code == 200
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f'SELECT * FROM "{table}"')  # noqa: S608 names from the schema
            for row in cursor.fetchall():
                assert not any(key in str(value) for value in row), table
    for stored in ApiToken.objects.values_list("digest", "prefix").get():
        copied = APIClient()
        copied.credentials(HTTP_AUTHORIZATION=f"Token {stored}")
        assert copied.get("/api/articles/").status_code == 401


def test_each_token_request_makes_a_new_token_and_the_old_ones_keep_working(anon, make_user):
    make_user("jon", password="pw-Secret-123")
    body = {"username": "jon", "password": "pw-Secret-123"}
    keys = [anon.post("/api/auth/token/", body, format="json").json()["token"] for _ in range(2)]
    assert keys[0] != keys[1]
    for key in keys:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert client.get("/api/articles/").status_code == 200
    for _ in range(tokens.TOKENS_PER_USER):
        tokens.token_create(user=ApiToken.objects.first().user)  # type: ignore[union-attr]
    assert ApiToken.objects.count() == tokens.TOKENS_PER_USER  # the oldest went


@pytest.mark.django_db(transaction=True)
def test_the_migration_turns_plain_drf_tokens_into_digests_that_still_work(make_user):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    user = make_user("kim")
    executor = MigrationExecutor(connection)
    executor.migrate([("articles", "0001_profile")])
    before = [("articles", "0001_profile"), ("authtoken", "0004_alter_tokenproxy_options")]
    old = executor.loader.project_state(before).apps
    key = "0123456789abcdef0123456789abcdef01234567"
    old.get_model("authtoken", "Token").objects.create(key=key, user_id=user.pk)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    from rest_framework.authtoken.models import Token

    assert not Token.objects.exists()
    assert ApiToken.objects.get(user=user).digest == tokens.token_digest(key)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/articles/").status_code == 200
