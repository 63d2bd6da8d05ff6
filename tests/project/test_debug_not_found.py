"""Under DEBUG (the quick start), an unknown URL shows the site's own 404 page, not Django's
technical one listing every URL pattern of the project."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

SITE_404 = "There is no such page here."


@pytest.fixture
def debug_client(settings) -> Client:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    return Client()  # its middleware is loaded at its first request, with DEBUG on


@pytest.mark.parametrize(
    "path",
    [
        "/no-such-page/",  # resolves to no view
        "/u/no-such-user-anywhere/comments/",  # a view's Http404
    ],
)
def test_an_unknown_url_under_debug_is_the_sites_own_404_page(debug_client, path):
    response = debug_client.get(path)
    assert response.status_code == 404
    html = response.content.decode()
    assert SITE_404 in html
    for technical in ("URLconf", "votesite.urls", "Raised by", "DEBUG = True"):
        assert technical not in html, technical


def test_under_debug_a_missing_slash_still_redirects_and_the_api_answers_json(debug_client):
    response = debug_client.get("/top")
    assert response.status_code == 301 and response["Location"] == "/top/"
    api = debug_client.get("/api/no-such-thing/")
    assert api.status_code == 404 and api.json()["code"] == "not_found"


def test_without_debug_the_page_is_the_same(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and SITE_404 in response.content.decode()
