"""Hostile request headers: client addresses, X-Forwarded-For, Idempotency-Key, Host,
Accept and Content-Type never give a 500 and never form a key outside keys.py."""

from __future__ import annotations

import logging

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.reliability.test_hostile_urls import _keys, _namespaced

log = logging.getLogger("reliability")
pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"
ADDRESSES = [
    "",
    "unknown",
    "fe80::1%eth0",
    "unix:/run/votesite.sock",
    "1.2.3.4, 5.6.7.8",
    "::ffff:1.2.3.4",
    "a" * 200,
    "*",
    "../../x",
    "ratelimit:signup:1.2.3.4:1",
    "1.2.3.4\x00",
]
KEYS_OF_IDEMPOTENCY = ["*", "../x", "a b", "ü", "a" * 129, "x" * 10_000]


def _assert_namespaced(what: str) -> None:
    assert sorted(k for k in _keys() if not _namespaced(k)) == [], what


def test_any_client_address_or_forwarded_for_is_counted_without_a_500(make_user, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_NUM_PROXIES = 1  # trust the last X-Forwarded-For hop: the client's say
    tried = 0
    for i, address in enumerate(ADDRESSES):
        form = {"username": f"n{i}", "password1": PASSWORD, "password2": PASSWORD}
        response = Client(REMOTE_ADDR=address).post("/signup/", form)
        assert response.status_code == 302, (address, response.status_code)
        api = APIClient(REMOTE_ADDR=address, HTTP_X_FORWARDED_FOR=address)
        assert api.get("/api/articles/").status_code == 200, address
        token = api.post(
            "/api/auth/token/", {"username": f"n{i}", "password": PASSWORD}, format="json"
        )
        assert token.status_code == 200, address
        tried += 3
        _assert_namespaced(address)
    log.info(f"headers: {tried} requests from {len(ADDRESSES)} hostile client addresses")


def test_a_hostile_idempotency_key_is_a_400_that_posts_nothing(make_user):  # type: ignore[no-untyped-def]
    api = APIClient()
    api.force_login(make_user("poster"))
    before = _keys()
    for value in KEYS_OF_IDEMPOTENCY:
        response = api.post(
            "/api/articles/", {"title": "t", "text": "x"}, format="json", HTTP_IDEMPOTENCY_KEY=value
        )
        assert response.status_code == 400, (value[:20], response.status_code)
        assert {k for k in _keys() - before if not k.startswith(b"ratelimit:")} <= {b"article:"}
    _assert_namespaced("idempotency keys")


def test_hostile_host_accept_and_content_type_headers_are_never_a_500(make_user):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(make_user("poster"))
    tried = 0
    for host in ("evil.example", "evil.example:80", "a" * 300, "[::1", "testserver\\@evil", ""):
        for url in ("/", "/api/articles/", "/a/1/vote/"):
            response = client.get(url, HTTP_HOST=host)
            assert response.status_code in (400, 405), (host, url, response.status_code)
            tried += 1
    accepts = [
        "*/*;q=x",
        "application/json;q=2",
        "text/html;" * 500,
        "\x00",
        "application/*",
        "x/y",
    ]
    for accept in accepts:
        for url in (
            "/",
            "/new/",
            "/api/articles/",
            "/api/articles/top/",
            "/feeds/new/",
            "/healthz",
        ):
            response = client.get(url, HTTP_ACCEPT=accept)
            assert response.status_code in (200, 406), (accept[:20], url, response.status_code)
            tried += 1
    for kind in ("", "application/json; charset=klingon", "multipart/form-data", "text/plain;;;"):
        # generic(): the client's post() would encode the body in the named charset itself
        response = client.generic("POST", "/a/1/vote/", b"direction=up", content_type=kind)
        assert response.status_code in (400, 404, 415), (kind, response.status_code)
        body = b'{"value": "up"}'
        response = client.generic("PUT", "/api/articles/1/vote/", body, content_type=kind)
        assert response.status_code in (400, 404, 415), (kind, response.status_code)
        tried += 2
    _assert_namespaced("hosts, accepts and content types")
    log.info(f"headers: {tried} requests with hostile Host, Accept and Content-Type")
