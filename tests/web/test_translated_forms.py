"""The pages' words from Python (form errors and labels, the messages after an action,
error pages, the login lock) in the visitor's language (Accept-Language: de, through
LocaleMiddleware), with the same statuses; English as before."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import PASSWORD
from tests.harness import redis_down

GERMAN = {"HTTP_ACCEPT_LANGUAGE": "de"}


def _signup(client: Client, username: str, **extra: str):  # type: ignore[no-untyped-def]
    data = {"username": username, "email": "", "password1": PASSWORD, "password2": PASSWORD}
    return client.post("/signup/", data, **extra)


def test_sign_up_form_errors_are_in_german(make_user):
    make_user("alice")
    german = _signup(Client(), "a1ice", **GERMAN)
    english = _signup(Client(), "a1ice")
    assert german.status_code == english.status_code == 400
    assert "looks like another account" in english.content.decode()
    page = german.content.decode()
    assert "Dieser Name sieht aus wie der Name eines anderen Kontos" in page
    assert "looks like another account" not in page


def test_a_bad_name_is_explained_in_german(db):
    page = _signup(Client(), "al ice", **GERMAN).content.decode()
    assert "Ein Name hat 1-30 Zeichen: Buchstaben a-z und A-Z" in page


def test_the_welcome_after_signing_up_is_in_german(db):
    client = Client()
    response = _signup(client, "newcomer", **GERMAN)
    assert response.status_code == 302
    page = client.get("/", **GERMAN).content.decode()
    assert "Willkommen, newcomer! Ihr Konto ist angelegt." in page


def test_the_submit_form_explains_a_missing_link_in_german(client, make_user):
    client.force_login(make_user("ann"))
    data = {"title": "Only a title", "link": "", "text": ""}
    german = client.post("/submit/", data, **GERMAN)
    english = client.post("/submit/", data)
    assert german.status_code == english.status_code == 400
    assert "Give a link, a text, or both." in english.content.decode()
    assert "Geben Sie einen Link, einen Text oder beides an." in german.content.decode()


def test_a_missing_article_page_says_so_in_german(db):
    german = Client().get("/a/999999/", **GERMAN)
    english = Client().get("/a/999999/")
    assert german.status_code == english.status_code == 404
    assert "No such article." in english.content.decode()
    assert "Diesen Artikel gibt es nicht." in german.content.decode()


def test_a_bad_query_page_says_so_in_german(db):
    german = Client().get("/", {"page": "0"}, **GERMAN)
    assert german.status_code == 400
    assert "Eine Seite ist eine ganze Zahl von 1 bis" in german.content.decode()


def test_a_redis_outage_page_says_so_in_german(db):
    with redis_down():
        german = Client().get("/", **GERMAN)
    assert german.status_code == 503
    assert "Der Artikelspeicher (Redis) ist nicht erreichbar" in german.content.decode()


@pytest.mark.usefixtures("clock")
def test_a_locked_login_says_in_german_when_to_try_again(make_user):
    make_user("dave")
    client = Client()
    for i in range(5):
        client.post("/accounts/login/", {"username": "dave", "password": f"wrong{i}"}, **GERMAN)
    locked = client.post("/accounts/login/", {"username": "dave", "password": PASSWORD}, **GERMAN)
    assert locked.status_code == 429 and locked["Retry-After"] == "900"
    page = locked.content.decode()
    assert (
        "Zu viele fehlgeschlagene Anmeldungen für dieses Konto: höchstens 5 alle 15 Minuten. "
        "Versuchen Sie es in 15 Minuten erneut, oder " in page
    )
    assert ">setzen Sie Ihr Passwort zurück</a>." in page  # the way out, still a link
