"""The benchmark's baseline is plain Django as `django-admin startproject` makes it (default
MIDDLEWARE, settings untouched), and its fixed view answers votesite's fixed body."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import django
import pytest
from django.test import Client

from bench import baseline, servers

TEMPLATE = Path(django.__file__).parent / "conf/project_template/project_name/settings.py-tpl"


def _middleware(settings_source: str) -> list[str]:
    found = re.search(r"^MIDDLEWARE = (\[.*?\])$", settings_source, re.M | re.S)
    assert found, "no MIDDLEWARE in the settings"
    return list(ast.literal_eval(found.group(1)))


def _effective(project: Path, settings: str, code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        env=baseline.environ(project, settings),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return baseline.make(tmp_path_factory.mktemp("baseline"))


def test_the_baseline_settings_are_startprojects_own_with_the_default_middleware(
    project: Path,
) -> None:
    written = (project / baseline.PACKAGE / "settings.py").read_text().splitlines()
    template = TEMPLATE.read_text().splitlines()
    assert len(written) == len(template)
    for ours, theirs in zip(written, template, strict=True):
        if "{{" not in theirs:  # the project's name and secret key are filled in
            assert ours == theirs
    default = _middleware(TEMPLATE.read_text())
    assert "django.middleware.csrf.CsrfViewMiddleware" in default
    assert _middleware("\n".join(written)) == default
    code = "import json; from django.conf import settings; print(json.dumps(settings.MIDDLEWARE))"
    assert json.loads(_effective(project, baseline.DEFAULT, code)) == default
    assert json.loads(_effective(project, baseline.BARE, code)) == []
    assert (
        _effective(
            project, baseline.DEFAULT, "from django.conf import settings; print(settings.DEBUG)"
        )
        == "False"
    )


@pytest.mark.urls("bench.urls")
def test_the_baseline_serves_votesites_fixed_body_through_gunicorn(project: Path) -> None:
    ours = Client(HTTP_HOST="127.0.0.1").get("/bench/fixed/")
    assert ours.status_code == 200
    for settings in (baseline.DEFAULT, baseline.BARE):
        server = servers.Gunicorn(
            servers.free_port(),
            baseline.environ(project, settings),
            workers=1,
            app=f"{baseline.PACKAGE}.wsgi:application",
        )
        server.start()
        try:
            url = f"http://127.0.0.1:{server.port}/bench/fixed/"
            with urllib.request.urlopen(url) as response:
                assert response.status == 200
                assert response.headers["Content-Type"] == ours["Content-Type"]
                assert response.read() == ours.content
        finally:
            server.stop()
    cpu = baseline.measure_in_process(project, baseline.DEFAULT, reps=1, seconds=0.01)
    assert len(cpu) == 1 and 0 < cpu[0] < 1


def test_the_floors_make_their_round_trips_with_plain_django_and_redis_py(
    project: Path, conn
) -> None:
    """The floors read the store as the book's code does: a random article's hash (one
    script call), and page 1 of score: with its hashes through a Django template, escaped."""
    kwargs = conn.connection_pool.connection_kwargs
    url = f"unix://{kwargs['path']}?db={kwargs.get('db', 0)}"
    conn.hset("article:1", mapping={"title": "One <b>", "link": "https://e.org/1", "votes": 3,
                                    "poster": "user:7", "time": 1})  # fmt: skip
    conn.hset("article:2", mapping={"title": "Two", "link": "https://e.org/2", "votes": 1,
                                    "poster": "user:8", "time": 2})  # fmt: skip
    conn.zadd("score:", {"article:1": 20, "article:2": 10})
    server = servers.Gunicorn(
        servers.free_port(),
        {**baseline.environ(project, baseline.DEFAULT), "REDIS_URL": url},
        workers=1,
        app=f"{baseline.PACKAGE}.wsgi:application",
    )
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        with urllib.request.urlopen(f"{base}/bench/floor/one/?n=1") as response:  # noqa: S310
            assert json.loads(response.read())["title"] == "One <b>"
        with urllib.request.urlopen(f"{base}/bench/floor/listing/") as response:  # noqa: S310
            page = response.read().decode()
        assert page.index("One &lt;b&gt;</a> 3 votes, by user:7") < page.index("Two</a> 1 votes")
        with urllib.request.urlopen(f"{base}/bench/floor/listing.json") as response:  # noqa: S310
            listed = json.loads(response.read())["results"]
        assert [a["title"] for a in listed] == ["One <b>", "Two"]
    finally:
        server.stop()
