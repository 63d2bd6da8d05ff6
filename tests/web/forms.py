"""The pages through Django's test client as a browser uses them: logged in, and a form
posted with the CSRF token its page set."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.test import Client


def login(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


def token(client: Client, url: str) -> str:
    """GET a page with a form, and return the CSRF token its cookie carries."""
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    return client.cookies["csrftoken"].value


def post(
    client: Client, url: str, data: dict[str, Any], *, form_page: str | None = None, **extra: Any
) -> Any:
    """POST `data` with the CSRF token of `form_page`'s cookie (`url`'s by default)."""
    data = {**data, "csrfmiddlewaretoken": token(client, form_page or url)}
    return client.post(url, data, **extra)


def text_of(response: HttpResponse) -> str:
    return response.content.decode()
