"""Group names, orders, periods, days, page numbers and ids from the URLs and query strings
of the pages and the API: 400 or 404, never 500, and no key outside keys.py's namespaces."""

from __future__ import annotations

import logging
import re
from datetime import date
from urllib.parse import quote, urlencode

import pytest
from django.test import Client
from rest_framework.test import APIClient

from articles.store import services
from articles.store.connection import get_connection
from articles.types import NewPost
from tests.actors import staff_actor
from tests.reliability.hostile import db_state
from tests.reliability.test_hostile_input import KEY

log = logging.getLogger("reliability")
pytestmark = pytest.mark.django_db

VALUES = [
    "",
    " ",
    ":",
    "*",
    "?",
    "[a-z]*",
    "../",
    "../../etc/passwd",
    "..",
    "%00",
    "\x00",
    "a\x00b",
    "\n",
    "red\r\nSet-Cookie: x=1",
    "score:",
    "top:day",
    "group:red",
    "red:*",
    "RED",
    "ünïcode",
    "红",
    "\U0001f600",
    "\uff11",  # a full-width digit one
    "a" * 65,
    "a" * 5000,
    "0",
    "-1",
    "+1",
    " 1",
    "1.5",
    "1e3",
    "0x10",
    "NaN",
    "inf",
    "9" * 19,
    "9" * 400,
    "-" + "9" * 30,
    "2026-02-30",
    "9999-12-31",
    "0001-01-01",
    "0000-00-00",
]

# (template, kind): {v} in a path is percent-encoded as a segment, in a query as a value;
# the kind says which values are valid there (see _acceptable).
PAGES = [
    ("/g/{v}/", "slug"),
    ("/g/red/?order={v}", "order"),
    ("/g/red/?page={v}", "page"),
    ("/top/?period={v}", "period"),
    ("/top/?period=day&page={v}", "page"),
    ("/new/?page={v}", "page"),
    ("/?page={v}", "page"),
    ("/modlog/?page={v}", "page"),
    ("/good/{v}/", "date"),
    ("/good/2026-01-01/?page={v}", "page"),
    ("/a/{v}/", "id"),
    ("/u/{v}/", "username"),
    ("/u/poster/?page={v}", "page"),
    ("/u/{v}/comments/", "username"),
    ("/u/poster/comments/?page={v}", "page"),
    ("/feeds/g/{v}/", "slug"),
    ("/staff/groups/{v}/", "slug"),
    ("/staff/a/{v}/", "id"),
]
API = [
    ("/api/articles/{v}/", "id"),
    ("/api/articles/?order={v}", "order"),
    ("/api/articles/?page={v}", "page"),
    ("/api/articles/top/?period={v}", "period"),
    ("/api/articles/top/?page={v}", "page"),
    ("/api/articles/good/?date={v}", "date"),
    ("/api/articles/good/?page={v}", "page"),
    ("/api/groups/{v}/", "slug"),
    ("/api/groups/{v}/articles/", "slug"),
    ("/api/groups/red/articles/?order={v}&page={v}", "order"),
    ("/api/users/{v}/articles/", "username"),
    ("/api/users/poster/articles/?page={v}", "page"),
    ("/api/modlog/?page={v}", "page"),
    ("/api/stats/?days={v}", "days"),
]
# Writes naming something by URL or body: refused before any key is formed.
WRITES = [
    ("post", "/a/{v}/vote/", {"direction": "up"}, "id"),
    ("post", "/staff/groups/{v}/", {"description": "d"}, "slug"),
    ("post", "/staff/groups/{v}/delete/", {"reason": "r"}, "slug"),
    ("post", "/staff/a/{v}/delete/", {"reason": "r"}, "id"),
    ("post", "/staff/a/{v}/groups/", {"add": "red"}, "id"),
    ("post", "/staff/groups/", {"name": "{v}"}, "slug"),
]
API_WRITES = [
    ("put", "/api/articles/{v}/vote/", {"value": "up"}, "id"),
    ("delete", "/api/articles/{v}/", None, "id"),
    ("post", "/api/articles/{v}/groups/", {"add": ["red"]}, "id"),
    ("post", "/api/articles/1/groups/", {"add": ["{v}"]}, "slug"),
    ("patch", "/api/groups/{v}/", {"description": "d"}, "slug"),
    ("delete", "/api/groups/{v}/", None, "slug"),
    ("post", "/api/groups/", {"name": "{v}"}, "slug"),
    ("post", "/api/articles/", {"title": "t", "text": "x", "groups": ["{v}"]}, "slug"),
]


def _acceptable(kind: str, value: str, api: bool) -> bool:
    """May `value` be taken (2xx) where `kind` is expected? Else it must be 400 or 404.
    An empty value in an API query is that field's default."""
    v = value.strip()  # the store trims names and page numbers too
    if kind == "slug":
        return bool(re.fullmatch(r"[a-z0-9-]{1,64}", v))
    if kind == "page":
        return (api and v == "") or (v.isascii() and v.isdigit() and 1 <= int(v) <= 100_000)
    if kind in ("order", "period"):
        return api and v == ""
    if kind == "date":
        try:
            return (api and v == "") or (bool(date.fromisoformat(v)) and len(v) == 10)
        except ValueError:
            return False
    if kind == "days":  # DRF's IntegerField: int() of the text, so "+1" and "\uff11" are 1
        try:
            return v == "" or 1 <= int(v) <= 366
        except ValueError:
            return False
    return False  # ids and usernames: no hostile value names anything that exists


def _fill(template: str, value: str) -> str:
    path, _, query = template.partition("?")
    path = path.replace("{v}", quote(value, safe=""))
    query = query.replace("{v}", quote(value, safe=""))
    return f"{path}?{query}" if query else path


def _body(body: dict[str, object] | None, value: str) -> dict[str, object] | None:
    if body is None:
        return None
    return {k: [value] if v == ["{v}"] else value if v == "{v}" else v for k, v in body.items()}


def _keys() -> set[bytes]:
    return set(get_connection().scan_iter(count=1000))


def _namespaced(key: bytes) -> bool:
    name = key.decode()
    return bool(KEY.fullmatch(name)) or bool(re.fullmatch(r"ratelimit:[a-z_]+:[\w.:-]+:\d+", name))


@pytest.fixture
def world(make_user, settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_RATE_LIMITS = {
        "api": None,
        "api_user": None,
        "api_write": None,
        "vote": (10**6, 60),
        "post": (10**6, 60),
    }
    poster = make_user("poster")
    staff = make_user("staff", staff=True)
    services.group_create(name="red", description="reds", actor=staff_actor())
    services.article_post(
        NewPost(user_id=poster.pk, poster_name="poster", title="A", text="x", groups=["red"])
    )
    return staff


class Sweep:
    """Sends each request, records any answer outside what is expected, and checks that
    no new key falls outside keys.py's namespaces or holds the hostile value."""

    def __init__(self, api: bool) -> None:
        self.api, self.seen, self.tried, self.wrong = api, _keys(), 0, []

    def check(self, response, url: str, kind: str, value: str) -> None:  # type: ignore[no-untyped-def]
        self.tried += 1
        status = response.status_code
        ok = 200 <= status < 400 and _acceptable(kind, value, self.api)
        if status == 500 or not (ok or status in (400, 404)):
            self.wrong.append((url[:80], status))
        if self.api and status != 204:
            assert response["Content-Type"] == "application/json", url
        now = _keys()
        assert sorted(k for k in now - self.seen if not _namespaced(k)) == [], url
        self.seen = now


def test_hostile_values_in_page_urls_are_refused_and_form_no_key(world):  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(world)
    sweep = Sweep(api=False)
    for template, kind in PAGES:
        for value in VALUES:
            url = _fill(template, value)
            sweep.check(client.get(url), url, kind, value)
    for method, template, data, kind in WRITES:
        for value in VALUES:
            url = _fill(template, value)
            response = getattr(client, method)(url, _body(data, value))
            sweep.check(response, url, kind, value)
    assert sweep.wrong == []
    log.info(f"hostile urls: {sweep.tried} page requests, {len(VALUES)} values, none 500")


def test_hostile_values_in_api_urls_are_refused_and_form_no_key(world):  # type: ignore[no-untyped-def]
    client = APIClient()
    client.force_login(world)
    sweep = Sweep(api=True)
    for template, kind in API:
        for value in VALUES:
            url = _fill(template, value)
            sweep.check(client.get(url), url, kind, value)
    for method, template, body, kind in API_WRITES:
        for value in VALUES:
            url = _fill(template, value)
            response = getattr(client, method)(url, _body(body, value), format="json")
            sweep.check(response, url, kind, value)
    assert sweep.wrong == []
    log.info(f"hostile urls: {sweep.tried} API requests, {len(VALUES)} values, none 500")


# A NUL in each kind of value a request carries. PostgreSQL refuses one in any text, which
# SQLite takes, so test_hostile_urls_postgres.py runs this module on PostgreSQL too. A page
# whose address holds a NUL is no page (404); a query or a form holding one is a 400.
NUL_PATHS = [
    "/u/%00/",
    "/u/x%00/",
    "/u/poster%00/",
    "/u/%00/comments/",
    "/u/x%00/comments/",
    "/g/%00/",
    "/a/%00/",
    "/a/1/c/%00/",
    "/c/%00/",
    "/good/%00/",
    "/feeds/top/%00/",
    "/feeds/g/red%00/",
    "/accounts/password/reset/%00/%00/",
    "/accounts/password/reset/MQ/x%00/",
    "/admin/auth/user/%00/change/",
    "/api/users/%00/articles/",
    "/api/users/poster%00/articles/",
    "/api/users/x%00/comments/",
    "/api/groups/%00/",
    "/api/articles/%00/",
    "/api/comments/%00/",
]
NUL_QUERIES = [
    "/search/?q=%00",
    "/search/?q=a%00b",
    "/api/articles/search/?q=a%00b",
    "/?page=%00",
    "/?%00=1",
    "/a/1/?sort=%00",
    "/a/1/?sort=new&page=1%00",
    "/u/poster/?page=%00",
    "/accounts/login/?next=%00",
    "/accounts/login/?next=/u/poster%00/",
    "/signup/?next=%00",
    "/admin/login/?next=%00",
    "/admin/auth/user/?q=%00",
    "/api/articles/?order=score%00",
]
NUL_FORMS = [
    ("/accounts/login/", {"username": "poster\x00", "password": "pw-Secret-123"}),
    ("/accounts/login/", {"username": "poster", "password": "pw\x00"}),
    ("/admin/login/", {"username": "staff\x00", "password": "pw-Secret-123"}),
    (
        "/signup/",
        {"username": "new\x00", "password1": "pw-Secret-123", "password2": "pw-Secret-123"},
    ),
    (
        "/signup/",
        {
            "username": "newer",
            "email": "a\x00@example.org",
            "password1": "pw-Secret-123",
            "password2": "pw-Secret-123",
        },
    ),
    ("/signup/", {"username": "newest", "intent": "\x00"}),
    ("/accounts/password/reset/", {"email": "a\x00@example.org"}),
]
# The API's token takes a form too; in JSON its fields' own rule refuses a NUL.
NUL_TOKEN = {"username": "poster\x00", "password": "pw-Secret-123"}
FORM = "application/x-www-form-urlencoded"
NUL_USER_FORMS = [
    ("/a/1/comment/", {"text": "a\x00b"}),
    ("/a/1/vote/", {"direction": "up\x00"}),
    ("/submit/", {"title": "t\x00", "text": "x", "groups": "red"}),
    ("/accounts/settings/", {"email": "", "about": "a\x00b"}),
    ("/accounts/delete/", {"password": "\x00"}),
    (
        "/accounts/password/",
        {"old_password": "\x00", "new_password1": "x\x00", "new_password2": "x\x00"},
    ),
    ("/staff/groups/", {"name": "blue", "description": "d\x00"}),
    ("/staff/a/1/delete/", {"reason": "r\x00"}),
]


def test_a_nul_in_any_address_query_or_form_is_refused(world):  # type: ignore[no-untyped-def]
    anonymous = Client(raise_request_exception=False)
    staff = Client(raise_request_exception=False)
    staff.force_login(world)
    before = db_state()
    wrong = []
    for client in (anonymous, staff):
        for url in NUL_PATHS:
            status = client.get(url).status_code
            if status != 404:
                wrong.append((url, status))
        for url in NUL_QUERIES:
            status = client.get(url).status_code
            if status != 400:
                wrong.append((url, status))
    for client, forms in ((anonymous, NUL_FORMS), (staff, NUL_FORMS + NUL_USER_FORMS)):
        for url, data in forms:
            response = client.post(url, data)
            if response.status_code != 400:
                wrong.append((url, data, response.status_code))
        for response in (
            client.post("/api/auth/token/", urlencode(NUL_TOKEN), content_type=FORM),
            client.post("/api/auth/token/", NUL_TOKEN, content_type="application/json"),
        ):
            if response.status_code != 400 or response["Content-Type"] != "application/json":
                wrong.append(("/api/auth/token/", response.status_code))
    assert wrong == [], "\n".join(map(repr, wrong))
    assert db_state() == before  # no account, session or token made or changed
    assert staff.get("/u/poster/").status_code == 200  # the session still holds


def test_a_nul_in_a_cookie_is_no_session(world):  # type: ignore[no-untyped-def]
    """Django unquotes a quoted cookie's octal escapes, so `"\\000..."` is a NUL: the
    session store would look it up (PostgreSQL refuses the query). Such a cookie is no
    session: the page answers as for an anonymous visitor."""
    client = Client(raise_request_exception=False)
    client.cookies["sessionid"] = "\x00" * 32
    assert client.get("/u/poster/").status_code == 200
    assert client.get("/accounts/settings/").status_code == 302
