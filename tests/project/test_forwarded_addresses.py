"""A client cannot name its own address: X-Forwarded-For never opens /metrics or /healthz's
figures, and never moves a client out of its rate-limit window unless a proxy we trust put it
there (ARTICLES_NUM_PROXIES, 0 by default)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db  # /healthz probes the database, the limits count users

OUTSIDE = "203.0.113.7"
PROXY = "172.18.0.5"  # the compose network's proxy container
TOKEN = "scrape-token-4Xq9Lm2Vb7Rt1Kp8Zs3Nw6Hd0Gf5Jc"


def _figures_shown(client, **headers: str) -> bool:
    body = client.get("/healthz", **headers).json()
    return "details" in body["redis"]


def test_defaults_trust_no_forwarding_header(settings):
    from votesite import settings as project

    assert project.ARTICLES_NUM_PROXIES == 0
    assert not hasattr(project, "SECURE_PROXY_SSL_HEADER")
    assert project.ARTICLES_METRICS_TOKEN is None


@pytest.mark.parametrize("header", ["HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP", "HTTP_FORWARDED"])
def test_a_direct_client_claiming_loopback_gets_no_metrics_nor_figures(client, header):
    claim = {"REMOTE_ADDR": OUTSIDE, header: "127.0.0.1"}
    if header == "HTTP_FORWARDED":
        claim[header] = "for=127.0.0.1"
    response = client.get("/metrics", **claim)
    assert response.status_code == 403
    assert b"articles_" not in response.content
    assert not _figures_shown(client, **claim)


def test_behind_a_trusted_proxy_a_forwarded_loopback_still_gets_no_metrics(client, settings):
    """Ensure the proxy's own address, even on an allowed network, opens nothing to what it
    relays: DJANGO_NUM_PROXIES=1 is for rate limits, not for /metrics."""
    settings.ARTICLES_NUM_PROXIES = 1
    settings.ARTICLES_HEALTH_DETAIL_NETWORKS = ["127.0.0.0/8", "::1/128", "172.16.0.0/12"]
    for claimed in ("127.0.0.1", "172.18.0.9", f"{OUTSIDE}, 127.0.0.1"):
        relayed = {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": claimed}
        assert client.get("/metrics", **relayed).status_code == 403, claimed
        assert not _figures_shown(client, **relayed), claimed
    # A peer on that network reaching the site itself (Prometheus on the compose network).
    assert client.get("/metrics", REMOTE_ADDR="172.18.0.9").status_code == 200
    assert _figures_shown(client, REMOTE_ADDR="172.18.0.9")


def test_a_configured_bearer_token_opens_metrics_and_figures_from_anywhere(client, settings):
    outside = {"REMOTE_ADDR": OUTSIDE, "HTTP_X_FORWARDED_FOR": "198.51.100.1"}
    bearer = {**outside, "HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}
    assert client.get("/metrics", **bearer).status_code == 403  # no token configured
    settings.ARTICLES_METRICS_TOKEN = TOKEN
    response = client.get("/metrics", **bearer)
    assert response.status_code == 200 and b"django_http_requests" in response.content
    assert _figures_shown(client, **bearer)
    for wrong in (f"Bearer {TOKEN[:-1]}", "Bearer ", TOKEN, f"Basic {TOKEN}"):
        assert client.get("/metrics", **outside, HTTP_AUTHORIZATION=wrong).status_code == 403


@pytest.mark.usefixtures("clock")
def test_rotating_the_header_does_not_escape_the_sign_up_and_login_limits(client, settings):
    settings.ARTICLES_RATE_LIMITS = {
        **settings.ARTICLES_RATE_LIMITS,
        "signup": (1, 3600),
        "login_address": (2, 900),
    }

    def sign_up(name: str, claimed: str) -> int:
        data = {"username": name, "password1": "pw-Secret-123", "password2": "pw-Secret-123"}
        response = client.post("/signup/", data, REMOTE_ADDR=OUTSIDE, HTTP_X_FORWARDED_FOR=claimed)
        client.logout()
        return response.status_code

    assert sign_up("first", "198.51.100.1") == 302
    assert sign_up("second", "198.51.100.2") == 429

    def log_in(claimed: str) -> int:
        data = {"username": "first", "password": "wrong-password-1"}
        response = client.post(
            "/accounts/login/", data, REMOTE_ADDR=OUTSIDE, HTTP_X_FORWARDED_FOR=claimed
        )
        return response.status_code

    statuses = [log_in(f"198.51.100.{n}") for n in range(10, 14)]
    assert statuses[-1] == 429, statuses
