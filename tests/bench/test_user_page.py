"""The benchmark times the user page itself, not /u/<pk>/'s redirect to it."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest
from django.test import override_settings

from articles.store.connection import get_connection
from bench import data, pages
from bench.http import Endpoint, _probe


@pytest.mark.django_db
@pytest.mark.urls("bench.urls")
def test_the_in_process_cases_time_the_user_page_by_name_and_answer_2xx() -> None:
    spec = data.Spec(articles=60, group_size=10, now=time.time(), votes_per_article=2)
    data.load_redis(get_connection(), spec)
    with override_settings(**pages.LIFTED_LIMITS):
        cases = pages.build(articles=spec.articles, group=spec.groups)
        user_case = next(c for c in cases if c.name == "user page, anonymous")
        response = user_case.fn()
        assert response.status_code == 200
        assert response.wsgi_request.path == "/u/pages-reader/"
        assert pages.check(cases) == []


class _Redirecting(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        target = "/there/" if self.path == "/here/" else None
        self.send_response(302 if target else 200)
        if target:
            self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def base() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_http_probe_sets_aside_a_path_that_redirects(base: str) -> None:
    redirecting = Endpoint("here", "get", "/here/", 0.3)
    page = Endpoint("there", "get", "/there/", 0.3)
    for endpoint in (redirecting, page):
        _probe(base, endpoint, token="t")
    assert not redirecting.available and redirecting.why == "answers 302"
    assert page.available
