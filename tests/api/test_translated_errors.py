"""The API's own messages in the caller's language (Accept-Language: de, through
LocaleMiddleware): only `detail` and the messages under `errors` are translated; the
status, `code`, `field` and the fields named stay the same in every language."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.harness import redis_down

GERMAN = {"HTTP_ACCEPT_LANGUAGE": "de"}


def _shape(body: dict) -> dict:
    """What a program reads in an error body: everything but the words for people."""
    return {
        "code": body["code"],
        "field": body.get("field"),
        "errors": sorted(body.get("errors", {})),
    }


def _both(send) -> tuple:  # type: ignore[no-untyped-def]
    english, german = send({}), send(GERMAN)
    assert german.status_code == english.status_code
    assert _shape(german.json()) == _shape(english.json())
    return english, german


def test_a_bad_post_is_refused_in_german_with_the_same_code_and_field(as_poster):
    english, german = _both(
        lambda extra: as_poster.post("/api/articles/", {"title": "Hi"}, format="json", **extra)
    )
    assert english.status_code == 400
    assert english.json()["detail"] == "link: Give a link, a text, or both."
    assert german.json()["detail"] == "link: Geben Sie einen Link, einen Text oder beides an."
    assert german.json()["errors"] == {"link": ["Geben Sie einen Link, einen Text oder beides an."]}


def test_a_field_rule_of_the_api_is_said_in_german(as_poster):
    english, german = _both(
        lambda extra: as_poster.post(
            "/api/articles/", {"title": "Hi", "link": "ftp://example.org/"}, format="json", **extra
        )
    )
    assert english.json()["errors"]["link"][0].startswith("A link is an http:// or https:// URL")
    assert german.json()["errors"]["link"][0].startswith("Ein Link ist eine http://- oder")


def test_a_bad_query_names_the_same_field_in_german(anon):
    english, german = _both(lambda extra: anon.get("/api/articles/", {"page": "0"}, **extra))
    assert english.json()["field"] == "page"
    assert "A page is a whole number from 1 to" in english.json()["detail"]
    assert "Eine Seite ist eine ganze Zahl von 1 bis" in german.json()["detail"]


def test_a_missing_article_is_a_german_404(anon):
    english, german = _both(lambda extra: anon.get("/api/articles/999999/", **extra))
    assert english.status_code == 404
    assert english.json() == {"detail": "No such article.", "code": "article_not_found"}
    assert german.json() == {"detail": "Diesen Artikel gibt es nicht.", "code": "article_not_found"}


def test_a_duplicate_link_keeps_its_fields_and_says_so_in_german(as_poster):
    body = {"title": "Hi", "link": "https://example.org/a"}
    assert as_poster.post("/api/articles/", body, format="json").status_code == 201
    german = as_poster.post("/api/articles/", body, format="json", **GERMAN)
    assert german.status_code == 409 and german.json()["code"] == "duplicate_link"
    article_id = german.json()["article_id"]
    assert (
        german.json()["detail"]
        == f"Dieser Link wurde bereits als Artikel {article_id} eingereicht."
    )


def test_a_redis_outage_is_a_german_503(anon):
    with redis_down():
        english, german = _both(lambda extra: anon.get("/api/articles/", **extra))
    assert german.status_code == 503 and german["Retry-After"] == "5"
    assert english.json()["detail"] == (
        "The article store (Redis) is unreachable; please try again in a moment."
    )
    assert german.json()["detail"] == (
        "Der Artikelspeicher (Redis) ist nicht erreichbar; bitte versuchen Sie es gleich "
        "noch einmal."
    )


@pytest.mark.usefixtures("clock")
def test_a_rate_limit_refusal_is_said_in_german(settings):
    settings.ARTICLES_RATE_LIMITS = {"api": (1, 60)}
    english, german = APIClient(REMOTE_ADDR="10.0.0.1"), APIClient(REMOTE_ADDR="10.0.0.2")
    assert english.get("/api/articles/").status_code == 200
    assert german.get("/api/articles/", **GERMAN).status_code == 200
    refused_en = english.get("/api/articles/")
    refused_de = german.get("/api/articles/", **GERMAN)
    assert refused_en.status_code == refused_de.status_code == 429
    assert refused_de.json()["code"] == "rate_limited"
    assert refused_en.json()["detail"] == (
        "Too many requests: at most 1 every minute. Try again in 60 seconds."
    )
    assert refused_de.json()["detail"] == (
        "Zu viele Anfragen: höchstens 1 pro Minute. Versuchen Sie es in 60 Sekunden erneut."
    )


def test_drf_own_messages_follow_the_same_language(anon):
    english, german = _both(
        lambda extra: anon.post("/api/articles/", {"title": "Hi"}, format="json", **extra)
    )
    assert english.status_code == 401
    assert german.json()["detail"] != english.json()["detail"]
