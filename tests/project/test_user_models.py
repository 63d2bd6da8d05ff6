"""The app in a project with its own user model: Django's, a subclass of AbstractUser, and
an AbstractBaseUser that logs in with an e-mail address (no username, no date_joined).
Each project also has its own login (django.contrib.auth.urls), an override of
`articles/base.html` that extends the app's, and German beside English (LocaleMiddleware).
Each is driven over HTTP as a browser and an API client would: sign-up, the app's log-in
page and the host's, a post, a vote, a comment, search and the user pages, in both
languages; then the API; then load_demo."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.project.adopter import Host, adopter_project, csrf_token

pytestmark = pytest.mark.slow

PASSWORD = "pw-Secret-123"


# What an adopter's project adds of its own: a login page, a language, a brand.
HOST_SETTINGS = """
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.contrib.sessions.middleware.SessionMiddleware") + 1,
    "django.middleware.locale.LocaleMiddleware",
)
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
TEMPLATES[0]["DIRS"] = [BASE_DIR / "templates"]
"""
HOST_URLS = """
urlpatterns += [path("accounts/", include("django.contrib.auth.urls"))]
"""
HOST_FILES = {
    # The host's own login page, a Django template as Django's LoginView wants it.
    "templates/registration/login.html": (
        '<!doctype html><html lang="en"><title>Sign in</title>'
        '<h1 id="host-login">Sign in to Otter News</h1>'
        '<form method="post">{% csrf_token %}{{ form.as_p }}'
        '<input type="hidden" name="next" value="{{ next }}">'
        "<button>Sign in</button></form></html>"
    ),
    # The app's frame, extended rather than copied: the host's brand beside the app's.
    "templates/articles/base.html": (
        '{% extends "articles/base.html" %}'
        '{% block brand %}<span id="host-brand">Otter News</span> {{ super() }}{% endblock %}'
    ),
}


@pytest.fixture(scope="module", params=["default", "abstractuser", "email"])
def host(request: pytest.FixtureRequest, wheel: Path) -> Iterator[Host]:
    with adopter_project(
        wheel, users=request.param, settings=HOST_SETTINGS, urls=HOST_URLS, files=HOST_FILES
    ) as made:
        yield made


def _login_name(host: Host, name: str) -> str:
    """What the account logs in with: its e-mail address for the e-mail user model."""
    return f"{name}@example.org" if host.users == "email" else name


def _form(session: requests.Session, url: str, data: dict[str, str]) -> requests.Response:
    """GET a page and POST its form, with the page's CSRF token, as a browser does."""
    page = session.get(url, timeout=10)
    assert page.status_code == 200, (url, page.status_code, page.text[:500])
    fields = {"csrfmiddlewaretoken": csrf_token(page.text), **data}
    found = re.search(r'name="idempotency_key" value="([^"]*)"', page.text)
    if found:
        fields.setdefault("idempotency_key", found.group(1))
    return session.post(url, data=fields, headers={"Referer": url}, allow_redirects=False)


def _signed_up(host: Host, name: str) -> requests.Session:
    session = requests.Session()
    login = _login_name(host, name)
    field = "email" if host.users == "email" else "username"
    sent = {field: login, "password1": PASSWORD, "password2": PASSWORD}
    answer = _form(session, f"{host.base}/news/signup/", sent)
    assert answer.status_code == 302, (answer.status_code, answer.text[:2000])
    home = session.get(host.base + "/news/", timeout=10)
    assert home.status_code == 200 and login in home.text
    return session


def test_sign_up_log_in_post_vote_comment_search_and_user_pages(host: Host) -> None:
    base = host.base
    _signed_up(host, "writer")
    browser = requests.Session()
    login = _login_name(host, "writer")
    answer = _form(
        browser, f"{base}/news/accounts/login/", {"username": login, "password": PASSWORD}
    )
    assert answer.status_code == 302, answer.text[:2000]

    answer = _form(
        browser,
        f"{base}/news/submit/",
        {"title": f"Otters of the {host.users} kind", "link": f"https://example.org/{host.users}"},
    )
    assert answer.status_code == 302, answer.text[:2000]
    found = re.search(r"/news/a/(\d+)/", answer.headers["Location"])
    assert found, answer.headers["Location"]
    article = found.group(1)
    page_url = f"{base}/news/a/{article}/"

    page = browser.get(page_url, timeout=10)
    answer = browser.post(
        f"{base}/news/a/{article}/vote/",
        data={"csrfmiddlewaretoken": csrf_token(page.text), "direction": "down"},
        headers={"Referer": page_url, "Accept": "application/json"},
    )
    assert answer.status_code == 200, answer.text[:2000]
    assert answer.json()["my_vote"] == "down"

    answer = browser.post(
        f"{base}/news/a/{article}/comment/",
        data={"csrfmiddlewaretoken": csrf_token(page.text), "text": "Seen from a kayak."},
        headers={"Referer": page_url},
        allow_redirects=False,
    )
    assert answer.status_code == 302, answer.text[:2000]
    assert "Seen from a kayak." in browser.get(page_url, timeout=10).text

    # The account page edits an e-mail address only where the model keeps one apart from
    # the login (Django's user, the AbstractUser subclass), and "about" everywhere.
    settings_url = f"{base}/news/accounts/settings/"
    edits_email = 'name="email"' in browser.get(settings_url, timeout=10).text
    assert edits_email is (host.users != "email")
    sent = {"about": "Paddles.", **({"email": "w@example.net"} if edits_email else {})}
    answer = _form(browser, settings_url, sent)
    assert answer.status_code == 302, answer.text[:2000]

    found_page = requests.get(f"{base}/news/search/", params={"q": "otters"}, timeout=10)
    assert found_page.status_code == 200 and f"of the {host.users} kind" in found_page.text

    quoted = urllib.parse.quote(login)
    for path in (f"/news/u/{quoted}/", f"/news/u/{quoted}/comments/"):
        shown = requests.get(base + path, timeout=10)
        assert shown.status_code == 200, (path, shown.status_code, shown.text[:2000])
        assert login in shown.text
    user_page = requests.get(f"{base}/news/u/{quoted}/", timeout=10).text
    assert f"Otters of the {host.users} kind" in user_page and "Paddles." in user_page
    assert ("member since" in user_page) is (host.users != "email")  # no date_joined there
    assert (
        "Seen from a kayak." in requests.get(f"{base}/news/u/{quoted}/comments/", timeout=10).text
    )


def _api(
    method: str, url: str, token: str | None = None, data: dict[str, Any] | None = None
) -> requests.Response:
    headers = {"Authorization": f"Token {token}"} if token else {}
    return requests.request(method, url, json=data, headers=headers, timeout=10)


def test_the_api_token_list_post_vote_comment_and_user_lists(host: Host) -> None:
    _signed_up(host, "caller")
    login = _login_name(host, "caller")
    api = host.base + "/news-api"
    answer = _api("POST", f"{api}/auth/token/", data={"username": login, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    token = answer.json()["token"]
    sent = {"title": "Sorted sets, again", "link": f"https://example.org/api-{host.users}"}
    answer = _api("POST", f"{api}/articles/", token, sent)
    assert answer.status_code == 201, answer.text
    article = answer.json()
    assert article["poster"] == login
    answer = _api("PUT", f"{api}/articles/{article['id']}/vote/", token, {"value": "none"})
    assert (answer.status_code, answer.json()["votes"]) == (200, 0), answer.text
    answer = _api("POST", f"{api}/articles/{article['id']}/comments/", token, {"text": "First!"})
    assert answer.status_code == 201, answer.text
    listed = _api("GET", f"{api}/articles/?order=time").json()["results"]
    assert listed[0]["id"] == article["id"]
    quoted = urllib.parse.quote(login)
    answer = _api("GET", f"{api}/users/{quoted}/articles/")
    assert answer.status_code == 200, answer.text
    assert [a["id"] for a in answer.json()["results"]] == [article["id"]]
    answer = _api("GET", f"{api}/users/{quoted}/comments/")
    assert answer.status_code == 200, answer.text
    assert [c["text"] for c in answer.json()["results"]] == ["First!"]


def test_load_demo_fills_the_store_and_says_so_when_run_again(host: Host) -> None:
    """With each user model; run again, it says what to do instead of a DuplicateLink
    traceback, and writes nothing."""
    done = host.manage("load_demo", "--articles", "30", check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Generated 30 articles" in done.stdout, done.stdout
    listed = requests.get(host.base + "/news-api/articles/?order=time", timeout=10).json()
    assert listed["count"] >= 60, json.dumps(listed)[:500]

    again = host.manage("load_demo", "--articles", "30", check=False)
    assert again.returncode != 0
    assert "Traceback" not in again.stderr, again.stderr[-3000:]
    # One line saying what to do instead, before anything is written.
    said = again.stderr.strip().splitlines()
    assert said[-1].startswith("CommandError: ") and "Error" not in "".join(said[:-1]), said
    assert "--if-empty" in again.stderr, again.stderr
    after = requests.get(host.base + "/news-api/articles/?order=time", timeout=10).json()
    assert after["count"] == listed["count"]  # nothing half-written


def test_the_hosts_login_brand_and_language(host: Host) -> None:
    """A logged-out vote goes through the host's login page and comes back as the vote's
    offer; the pages wear the host's brand around the app's frame; German is picked by
    Accept-Language, English stays as it was."""
    base = host.base
    _signed_up(host, "poster")
    login = _login_name(host, "poster")
    api = base + "/news-api"
    token = _api("POST", f"{api}/auth/token/", data={"username": login, "password": PASSWORD})
    sent = {"title": "Rafts of otters", "link": f"https://example.org/rafts-{host.users}"}
    article = _api("POST", f"{api}/articles/", token.json()["token"], sent).json()

    english = requests.get(f"{base}/news/", timeout=10)
    assert 'id="host-brand"' in english.text and "Rafts of otters" in english.text
    assert '<html lang="en' in english.text and ">Log in<" in english.text
    german = requests.get(f"{base}/news/", headers={"Accept-Language": "de"}, timeout=10)
    assert 'id="host-brand"' in german.text and "Rafts of otters" in german.text
    assert '<html lang="de"' in german.text and ">Anmelden<" in german.text
    assert ">Log in<" not in german.text

    voter_login = _login_name(host, "voter")
    host.create_user(voter_login, PASSWORD)
    visitor = requests.Session()
    page = visitor.get(f"{base}/news/a/{article['id']}/", timeout=10).text
    arrow = re.search(r'<a class="arrow up" href="([^"]+)"', page)
    assert arrow, page[:3000]
    answer = visitor.get(base + arrow.group(1).replace("&amp;", "&"), timeout=10)
    assert answer.status_code == 200 and 'id="host-login"' in answer.text, answer.url
    # The host's own form, with the `next` the app gave it.
    fields = {
        "csrfmiddlewaretoken": csrf_token(answer.text),
        "username": voter_login,
        "password": PASSWORD,
        "next": re.search(r'name="next" value="([^"]*)"', answer.text).group(1),  # type: ignore[union-attr]
    }
    signed_in = visitor.post(answer.url, data=fields, headers={"Referer": answer.url})
    assert signed_in.status_code == 200 and "vote/offer" in signed_in.url, signed_in.url
    assert f'action="/news/a/{article["id"]}/vote/"' in signed_in.text, signed_in.text[:3000]
    cast = visitor.post(
        f"{base}/news/a/{article['id']}/vote/",
        data={"csrfmiddlewaretoken": csrf_token(signed_in.text), "direction": "up"},
        headers={"Referer": signed_in.url, "Accept": "application/json"},
    )
    assert cast.status_code == 200 and cast.json()["my_vote"] == "up", cast.text[:2000]
