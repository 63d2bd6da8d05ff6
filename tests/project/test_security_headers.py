"""Security headers with DEBUG off, on real requests: a strict Content-Security-Policy on
the pages (which run no inline script), the looser one the browsable API and the docs pages
state for themselves, and Referrer-Policy, X-Content-Type-Options, X-Frame-Options,
Cross-Origin-Opener-Policy and Permissions-Policy everywhere."""

from __future__ import annotations

import re

import pytest

from articles.store import services
from articles.types import NewPost


def _policy(response) -> dict[str, str]:  # type: ignore[no-untyped-def]
    header = response["Content-Security-Policy"]
    return {d.split()[0]: d.strip() for d in header.split(";") if d.strip()}


def _common_headers(response) -> None:  # type: ignore[no-untyped-def]
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert "camera=()" in response["Permissions-Policy"]


@pytest.mark.django_db
def test_the_pages_send_a_strict_policy_and_hold_no_inline_script_or_style(
    client, make_user, settings
):
    assert settings.DEBUG is False
    ann = make_user("ann")
    article = services.article_post(NewPost(user_id=ann.pk, poster_name="ann", title="t", text="b"))
    anonymous = ["/", "/new/", "/top/", "/groups/", f"/a/{article.id}/", "/accounts/login/"]
    anonymous += ["/signup/", "/modlog/"]
    pages = [(path, None) for path in anonymous]
    pages += [("/submit/", ann), ("/staff/groups/", make_user("mod", staff=True))]
    for path, user in pages:
        if user is not None:
            client.force_login(user)
        response = client.get(path)
        assert response.status_code == 200, path
        _common_headers(response)
        policy = _policy(response)
        assert policy["default-src"] == "default-src 'self'"
        assert policy["script-src"] == "script-src 'self'", path
        assert policy["style-src"] == "style-src 'self'", path
        assert policy["object-src"] == "object-src 'none'"
        assert policy["frame-ancestors"] == "frame-ancestors 'none'"
        html = response.content.decode()
        scripts = re.findall(r"<script\b[^>]*>", html)
        assert all("src=" in tag for tag in scripts), (path, scripts)
        assert not re.search(r"\sstyle=|<style\b|\son[a-z]+=", html), path


@pytest.mark.django_db
def test_the_browsable_api_and_the_docs_pages_state_what_they_need_and_work(client):
    response = client.get("/api/articles/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200 and b"<html" in response.content
    _common_headers(response)
    policy = _policy(response)
    assert "'unsafe-inline'" in policy["style-src"]
    assert policy["script-src"] == "script-src 'self'"  # its scripts are files

    for path in ("/api/docs/", "/api/redoc/"):
        response = client.get(path)
        assert response.status_code == 200, path
        _common_headers(response)
        policy = _policy(response)
        assert "'unsafe-inline'" in policy["script-src"] and "'self'" in policy["script-src"]
        assert "blob:" in policy["worker-src"]
        # every script file the page loads comes from this site
        for src in re.findall(r'<script src="([^"]+)"', response.content.decode()):
            assert src.startswith("/static/"), (path, src)

    # JSON answers carry the strict policy too (nothing in them runs)
    response = client.get("/api/articles/")
    assert _policy(response)["script-src"] == "script-src 'self'"
