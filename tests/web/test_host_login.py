"""The app in a host project with its own login (Django's LoginView, mounted as hosts do
with include("django.contrib.auth.urls")): one login page for the whole site, the vote
asked for while logged out kept across it, and a locked login said with its wait on the
host's form, the admin's and DRF's.

This module is also the host's URLconf of its tests: the app at /news/, its API at /api/."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings as django_settings
from django.contrib.admin import AdminSite
from django.contrib.auth import authenticate
from django.test import Client
from django.urls import include, path
from rest_framework.authentication import BasicAuthentication
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from articles.store import selectors
from tests.factories import PASSWORD, article, comment
from tests.web.forms import text_of

pytestmark = pytest.mark.django_db
HERE = "tests.web.test_host_login"
LOCKED = "Too many failed logins for this account: at most 5 every 15 minutes."


class BasicView(APIView):
    """A view of the host's own API, on HTTP Basic auth and DRF's own error handler."""

    authentication_classes = [BasicAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request: Request) -> Response:
        return Response({"user": request.user.get_username()})


host_admin = AdminSite(name="hostadmin")  # Django's admin login form, as a host has it

urlpatterns = [
    path("accounts/", include("django.contrib.auth.urls")),
    path("hostadmin/", host_admin.urls),
    path("basic/", BasicView.as_view()),
    path("token/", obtain_auth_token),
    path("api/", include("articles.api.urls")),
    path("news/", include("articles.urls")),
]


@pytest.fixture
def host(settings):  # type: ignore[no-untyped-def]
    """The host's URLconf and templates (its registration/login.html), LOGIN_URL as
    Django's default: the host's login page is /accounts/login/."""
    settings.ROOT_URLCONF = HERE
    settings.LOGIN_URL = "/accounts/login/"
    settings.TEMPLATES = [
        {**django_settings.TEMPLATES[0], "DIRS": [Path(__file__).parent / "host_templates"]}
    ]
    return settings


def _query(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def _lock(client: Client, username: str, url: str = "/accounts/login/") -> None:
    for i in range(5):
        client.post(url, {"username": username, "password": f"wrong{i}"})


# --- one login page -------------------------------------------------------------------------


@pytest.mark.parametrize("login_url", ["/accounts/login/", "login"])
def test_the_hosts_login_is_where_the_app_sends_people(host, make_user, login_url):
    """Django's default LOGIN_URL that the host serves, or a LOGIN_URL the host set (here
    the name of Django's own view): every login address of the app goes there with next."""
    host.LOGIN_URL = login_url
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id)
    client = Client()
    assert client.get("/news/submit/")["Location"] == "/accounts/login/?next=/news/submit/"
    assert client.get("/news/staff/")["Location"] == "/accounts/login/?next=/news/staff/"
    to_comment = client.post(f"/news/a/{a.id}/comment/", {"text": "hi"})
    assert to_comment["Location"] == f"/accounts/login/?next=/news/a/{a.id}/%23comments"
    listing = text_of(client.get("/news/new/"))
    assert 'href="/accounts/login/?next=/news/new/">Log in</a>' in listing
    # A vote arrow leads to the vote's offer, which sends a visitor to log in and back.
    offer = f"/news/a/{a.id}/vote/offer/?direction=up&amp;next=/news/new/"
    assert f'href="{offer}"' in listing
    assert "vote_on=" not in listing and "/news/accounts/login/" not in listing
    thread = text_of(client.get(f"/news/a/{a.id}/"))
    assert f'href="/accounts/login/?next=/news/a/{a.id}/"' in thread  # a comment's arrows
    assert f'href="/accounts/login/?next=/news/a/{a.id}/%23comments">Log in to' in thread
    # A vote posted while logged out (a page open across a logout), by form or by script.
    voted = client.post(f"/news/a/{a.id}/vote/", {"direction": "down", "next": "/news/top/"})
    assert urlsplit(voted["Location"]).path == "/accounts/login/"
    back = f"/news/a/{a.id}/vote/offer/?direction=down&next=%2Fnews%2Ftop%2F"
    assert _query(voted["Location"]) == {"next": back}
    script = client.post(
        f"/news/c/{c.id}/vote/", {"direction": "up"}, HTTP_ACCEPT="application/json"
    )
    assert script.status_code == 401 and script.json()["login"].startswith("/accounts/login/?")
    # The browsable API's log-in link.
    api = text_of(client.get("/api/articles/", HTTP_ACCEPT="text/html"))
    assert 'href="/accounts/login/?next=/api/articles/">Log in</a>' in api


def test_a_login_page_on_another_site_gets_a_full_next(host, make_user):
    host.LOGIN_URL = "https://sso.example.com/login?app=news"
    client = Client()
    for page in ("/news/submit/", "/news/staff/"):
        location = client.get(page)["Location"]
        assert location.startswith("https://sso.example.com/login?")
        assert _query(location) == {"app": "news", "next": f"http://testserver{page}"}


def test_without_a_host_login_the_apps_own_page_is_used(host, make_user, settings):
    """Django's default LOGIN_URL that leads nowhere in the host: the app's own page, which
    takes the vote itself (vote_on), as in a host with no login of its own."""
    host.ROOT_URLCONF = "tests.web.host_without_login_urls"
    a = article(make_user("ann"))
    client = Client()
    assert client.get("/news/submit/")["Location"] == "/news/accounts/login/?next=/news/submit/"
    listing = text_of(client.get("/news/new/"))
    assert 'href="/news/accounts/login/?next=/news/new/">Log in</a>' in listing
    up = f"/news/accounts/login/?next=/news/new/&amp;vote_on={a.id}&amp;direction=up"
    assert f'href="{up}"' in listing


def test_articles_login_url_chooses_the_page_whatever_login_url_says(host, make_user):
    host.ARTICLES_LOGIN_URL = "articles:login"
    client = Client()
    assert client.get("/news/submit/")["Location"] == "/news/accounts/login/?next=/news/submit/"


# --- the vote asked for while logged out ---------------------------------------------------


def _csrf(page: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match, "the page has no form"
    return match.group(1)


def test_a_vote_asked_for_survives_the_hosts_login_and_is_cast(host, make_user):
    a = article(make_user("ann"), title="Sorted sets")
    make_user("bob")
    browser = Client(enforce_csrf_checks=True)
    listing = text_of(browser.get("/news/new/"))
    arrow = re.search(r'class="arrow down" href="([^"]+)"', listing)
    assert arrow is not None
    to_login = browser.get(arrow.group(1).replace("&amp;", "&"))
    assert urlsplit(to_login["Location"]).path == "/accounts/login/"
    # The host's own page and form, nothing of the app's.
    form = browser.get(to_login["Location"])
    assert "The host's own login page" in text_of(form)
    logged_in = browser.post(
        "/accounts/login/",
        {
            "username": "bob",
            "password": PASSWORD,
            "next": _query(to_login["Location"])["next"],
            "csrfmiddlewaretoken": _csrf(text_of(form)),
        },
    )
    assert logged_in.status_code == 302
    offer = browser.get(logged_in["Location"])
    page = text_of(offer)
    assert offer.status_code == 200 and "You asked to vote down" in page and "Sorted sets" in page
    assert selectors.article_get(article_id=a.id).downvotes == 0  # a GET casts nothing
    cast = browser.post(
        f"/news/a/{a.id}/vote/",
        {"direction": "down", "next": "/news/new/", "csrfmiddlewaretoken": _csrf(page)},
    )
    assert cast.status_code == 302 and cast["Location"] == f"/news/new/#a{a.id}"
    assert selectors.article_get(article_id=a.id).downvotes == 1


def test_the_vote_offer_casts_nothing_and_refuses_a_bad_direction(host, make_user):
    a = article(make_user("ann"))
    client = Client()
    client.force_login(make_user("bob"))
    assert client.get(f"/news/a/{a.id}/vote/offer/?direction=sideways").status_code == 400
    assert client.get(f"/news/a/{a.id}/vote/offer/?direction=up").status_code == 200
    assert client.post(f"/news/a/{a.id}/vote/offer/?direction=up").status_code == 405
    assert client.get("/news/a/999/vote/offer/?direction=up").status_code == 404
    assert selectors.article_get(article_id=a.id).votes == 1


# --- a locked login, on every form ------------------------------------------------------------


@pytest.mark.usefixtures("clock")
def test_a_locked_login_on_the_hosts_form_says_when_to_try_again(host, make_user):
    make_user("dave")
    client = Client()
    _lock(client, "dave")
    locked = client.post("/accounts/login/", {"username": "dave", "password": PASSWORD})
    page = text_of(locked)
    assert LOCKED in page and "Try again in 15 minutes" in page
    assert "correct username and password" not in page
    assert "_auth_user_id" not in client.session


@pytest.mark.usefixtures("clock")
def test_the_admin_login_and_the_apis_auth_do_not_fail_when_locked(host, make_user):
    boss = make_user("boss", staff=True)
    _lock(Client(), "boss")
    admin = Client().post(
        "/hostadmin/login/?next=/hostadmin/", {"username": "boss", "password": PASSWORD}
    )
    assert admin.status_code == 200 and LOCKED in text_of(admin)
    basic = APIClient()
    basic.credentials(HTTP_AUTHORIZATION="Basic Ym9zczpwdy1TZWNyZXQtMTIz")  # boss:pw-Secret-123
    refused = basic.get("/basic/")
    assert refused.status_code == 429 and refused["Retry-After"] == "900"
    assert LOCKED in refused.json()["detail"]
    token = APIClient().post("/token/", {"username": "boss", "password": PASSWORD})
    assert token.status_code == 400 and LOCKED in str(token.json())
    # The app's API: its token endpoint says the wait; a session opened before is unaffected.
    ours = APIClient().post(
        "/api/auth/token/", {"username": "boss", "password": PASSWORD}, format="json"
    )
    assert ours.status_code == 429
    session = APIClient()
    session.force_login(boss)
    assert session.get("/api/articles/").status_code == 200


def test_http_basic_auth_of_the_hosts_api_logs_in(host, make_user):
    """DRF's BasicAuthentication calls authenticate() while DRF reads request.user: the
    backend counts on Django's request, so it does not ask DRF's again (a RecursionError)."""
    make_user("boss")
    basic = APIClient()
    basic.credentials(HTTP_AUTHORIZATION="Basic Ym9zczpwdy1TZWNyZXQtMTIz")  # boss:pw-Secret-123
    answer = basic.get("/basic/")
    assert answer.status_code == 200 and answer.json() == {"user": "boss"}
    basic.credentials(HTTP_AUTHORIZATION="Basic Ym9zczp3cm9uZw==")  # boss:wrong
    assert basic.get("/basic/").status_code == 401


@pytest.mark.usefixtures("clock")
def test_the_apps_own_login_page_says_the_lock_once_with_a_link(host, make_user):
    make_user("dave")
    client = Client()
    _lock(client, "dave", "/news/accounts/login/")
    locked = client.post("/news/accounts/login/", {"username": "dave", "password": PASSWORD})
    page = text_of(locked)
    assert locked.status_code == 429 and page.count("Too many failed logins") == 1
    assert "correct username and password" not in page
    assert '<a href="/news/accounts/password/reset/">reset your password</a>' in page


@pytest.mark.usefixtures("clock")
def test_a_login_without_a_password_is_neither_counted_nor_refused(make_user, rf, settings):
    """SSO and remote-user backends authenticate without a password: nothing to guess, so
    the lock neither counts nor refuses them."""
    settings.AUTHENTICATION_BACKENDS = [
        "articles.store.logins.LoginLimitBackend",
        "django.contrib.auth.backends.RemoteUserBackend",
    ]
    settings.ARTICLES_RATE_LIMITS = {"login_address": (1, 900)}
    make_user("dave")
    request = rf.get("/sso/callback/")
    assert authenticate(request, remote_user="dave") is not None
    assert authenticate(request, remote_user="dave") is not None
