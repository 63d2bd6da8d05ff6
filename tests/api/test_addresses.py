"""One convention for the addresses the API answers (GitHub's): `url` is the item in the API,
`html_url` its web page, and a 201's `Location` is the new item's `url`. The served schema
follows wherever the host mounts the API."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import include, path

pytestmark = pytest.mark.django_db

# A host that mounts the app elsewhere (the URLconf of the tests marked with it).
urlpatterns = [
    path("news-api/", include("articles.api.urls")),
    path("news/", include("articles.urls")),
]


def test_a_new_article_is_located_in_the_api_and_links_its_page(as_user, anon):
    response = as_user.post(
        "/api/articles/", {"title": "T", "link": "https://example.org/t"}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["url"] == f"http://testserver/api/articles/{body['id']}/"
    assert response["Location"] == body["url"]
    assert body["html_url"] == f"http://testserver/a/{body['id']}/"
    assert anon.get(response["Location"]).json()["id"] == body["id"]
    assert anon.get(body["html_url"]).status_code == 200  # the page itself, no redirect
    for listed in anon.get("/api/articles/").json()["results"]:
        assert (listed["url"], listed["html_url"]) == (body["url"], body["html_url"])


def test_a_new_comment_is_located_in_the_api_and_links_its_permalink(as_user, anon, post):
    article = post()
    response = as_user.post(f"/api/articles/{article.id}/comments/", {"text": "Hi"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert response["Location"] == body["url"] == f"http://testserver/api/comments/{body['id']}/"
    assert body["html_url"] == f"http://testserver/a/{article.id}/c/{body['id']}/"
    assert anon.get(body["html_url"]).status_code == 200
    assert anon.get("/api/comments/").json()["results"][0]["html_url"] == body["html_url"]


@pytest.mark.urls(__name__)
def test_the_served_schema_follows_the_hosts_mount_point(anon):
    """Ensure a client generated from a host's own schema URL calls that host's paths, and
    the schema's words name them too (not the project's `/api/`)."""
    response = anon.get("/news-api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["paths"] and all(p.startswith("/news-api/") for p in schema["paths"])
    text = json.dumps(schema)
    assert re.findall(r"(?<![\w-])/api/", text) == []
    assert "POST /news-api/auth/token/" in schema["info"]["description"]
    # the addresses it answers are the host's too
    assert anon.get("/news-api/articles/").status_code == 200
