"""The warm token vote answered without DRF's machinery (api.lean) answers byte for byte as
DRF's way does, success and every error alike; anything not plainly such a vote goes
DRF's way."""

from __future__ import annotations

import time
from typing import Any

import pytest

from articles.api import tokens as api_tokens
from articles.api.views import ArticleViewSet
from articles.store import people
from tests import factories
from tests.harness import redis_down

pytestmark = pytest.mark.django_db

LEAN = "application/json"
DRF = "application/json; charset=utf-8"  # the same body, read DRF's way
VOLATILE = {"RateLimit-Reset", "Retry-After", "X-Request-ID"}


@pytest.fixture
def drf_requests(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    """How many requests DRF wrapped in its own Request: those it dispatched itself."""
    made: list[int] = []
    original = ArticleViewSet.initialize_request

    def counted(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(1)
        return original(self, request, *args, **kwargs)

    monkeypatch.setattr(ArticleViewSet, "initialize_request", counted)
    return made


_links = iter(range(10**6))


def _article(now: float | None = None) -> int:
    link = f"https://e.org/{next(_links)}"
    return factories.article(999, "T", link, poster_name="p", now=now or time.time()).id


def _vote(client, article_id: int, value: str = "up", content_type: str = LEAN, **extra: Any):  # type: ignore[no-untyped-def]
    body = f'{{"value": "{value}"}}'
    return client.generic(
        "PUT", f"/api/articles/{article_id}/vote/", body, content_type=content_type, **extra
    )


def _seen(response: Any) -> tuple[int, dict[str, str], bytes]:
    headers = {k: v for k, v in response.headers.items() if k not in VOLATILE}
    return response.status_code, headers, response.content


def test_a_warm_vote_goes_the_lean_way_and_answers_as_drf(as_user, drf_requests):
    article_id = _article()
    assert _vote(as_user, article_id, content_type=DRF).status_code == 200  # keeps the token
    assert len(drf_requests) == 1
    lean = _vote(as_user, article_id)
    assert len(drf_requests) == 1  # no DRF Request made
    drf = _vote(as_user, article_id, content_type=DRF)
    assert len(drf_requests) == 2
    assert lean.status_code == 200 and lean.json()["my_vote"] == "up"
    assert _seen(lean)[1].keys() == _seen(drf)[1].keys()
    lean_headers = {k: v for k, v in _seen(lean)[1].items() if k != "RateLimit-Remaining"}
    drf_headers = {k: v for k, v in _seen(drf)[1].items() if k != "RateLimit-Remaining"}
    assert lean_headers == drf_headers
    assert int(lean["RateLimit-Remaining"]) == int(drf["RateLimit-Remaining"]) + 1
    assert lean.content == drf.content
    assert lean["Allow"] == "PUT, OPTIONS" and "Accept" in lean["Vary"]


def test_a_token_not_kept_is_read_once_and_its_vote_goes_the_lean_way(
    as_user, drf_requests, django_assert_num_queries
):
    article_id = _article()
    answers = []
    for content_type in (LEAN, DRF):
        api_tokens.clear()  # the process' first use of the token, or its entry expired
        people.credentials_revoked(as_user.user.pk)  # a logout elsewhere, just before
        with django_assert_num_queries(1):  # the token with its user, read after it
            answers.append(_vote(as_user, article_id, content_type=content_type))
    assert len(drf_requests) == 1  # the DRF way's own
    lean, drf = answers
    assert lean.status_code == 200 and lean.json()["my_vote"] == "up"
    assert _seen(lean)[1].keys() == _seen(drf)[1].keys()
    assert lean.content == drf.content
    assert _vote(as_user, article_id, "down").status_code == 200
    assert len(drf_requests) == 1  # kept by the lean way's read


@pytest.mark.parametrize("header", ["Token " + "0" * 40, "Token "])
def test_a_token_refused_answers_drfs_401(anon, drf_requests, header):
    article_id = _article()
    answers = [
        _vote(anon, article_id, content_type=content_type, HTTP_AUTHORIZATION=header)
        for content_type in (LEAN, DRF)
    ]
    assert len(drf_requests) == 2  # both answered the DRF way
    lean, drf = answers
    assert lean.status_code == drf.status_code == 401
    assert _seen(lean)[1].keys() == _seen(drf)[1].keys()
    assert lean.content == drf.content


@pytest.mark.parametrize(
    "extra",
    [
        {"QUERY_STRING": "format=json"},
        {"HTTP_ACCEPT": "text/html"},
        {"HTTP_ACCEPT": "application/json; indent=2"},
    ],
)
def test_a_vote_that_is_not_plain_goes_drfs_way(as_user, drf_requests, extra):
    article_id = _article()
    assert _vote(as_user, article_id).status_code == 200
    before = len(drf_requests)
    response = _vote(as_user, article_id, "down", **extra)
    assert len(drf_requests) == before + 1
    assert response.status_code == 200


@pytest.mark.parametrize(
    "body", ['{"value": "up", "x": 1}', '{"value": "sideways"}', '{"value": NaN}', "[]", "{"]
)
def test_a_body_not_plainly_a_vote_is_read_drfs_way(as_user, drf_requests, body):
    article_id = _article()
    assert _vote(as_user, article_id).status_code == 200
    path = f"/api/articles/{article_id}/vote/"
    before = len(drf_requests)
    lean_way = as_user.generic("PUT", path, body, content_type=LEAN)
    assert len(drf_requests) == before + 1
    drf_way = as_user.generic("PUT", path, body, content_type=DRF)
    assert lean_way.status_code == drf_way.status_code
    assert lean_way.content == drf_way.content


def _over_limit(settings: Any, as_user: Any, article_id: int) -> None:
    settings.ARTICLES_RATE_LIMITS = {"vote": (1, 60)}  # the vote that kept the token counted


def _revoked(settings: Any, as_user: Any, article_id: int) -> None:
    elsewhere = dict(api_tokens._kept._items)
    user = type(as_user.user).objects.get(pk=as_user.user.pk)
    user.is_active = False
    user.save()
    api_tokens._kept._items.update(elsewhere)  # another process' entry, no signal reached


def _epoch_stamped(settings: Any, as_user: Any, article_id: int) -> None:
    people.credentials_revoked(as_user.user.pk)  # a logout elsewhere: the token still good


@pytest.mark.usefixtures("clock")
@pytest.mark.parametrize("setup", [_over_limit, _revoked, _epoch_stamped])
def test_each_answer_of_the_lean_way_is_drfs(as_user, settings, drf_requests, setup):
    answers = []
    for content_type in (LEAN, DRF):
        article_id = _article()
        assert _vote(as_user, article_id, "down").status_code == 200  # keeps the token
        setup(settings, as_user, article_id)
        answers.append(_vote(as_user, article_id, content_type=content_type))
        if setup is _revoked:  # back as it was for the other way
            type(as_user.user).objects.filter(pk=as_user.user.pk).update(is_active=True)
            api_tokens.clear()
        settings.ARTICLES_RATE_LIMITS = {}
    lean, drf = answers
    assert lean.status_code == drf.status_code in (200, 401, 429)
    assert _seen(lean)[1].keys() == _seen(drf)[1].keys()
    if lean.status_code != 200:  # a 200's body names its own article
        assert lean.content == drf.content


@pytest.mark.parametrize("case", ["missing", "closed"])
def test_a_refused_vote_answers_as_drf(as_user, case):
    answers = []
    for content_type in (LEAN, DRF):
        article_id = 10**9 if case == "missing" else _article(now=time.time() - 8 * 86400)
        _vote(as_user, _article())  # keeps the token
        answers.append(_vote(as_user, article_id, content_type=content_type))
    lean, drf = answers
    assert lean.status_code == drf.status_code == (404 if case == "missing" else 409)
    assert _seen(lean)[1].keys() == _seen(drf)[1].keys()
    assert lean.json()["code"] == drf.json()["code"]


def test_a_lean_vote_with_redis_down_is_drfs_503(as_user):
    article_id = _article()
    assert _vote(as_user, article_id).status_code == 200
    answers = []
    for content_type in (LEAN, DRF):
        with redis_down():
            answers.append(_vote(as_user, article_id, "down", content_type=content_type))
    lean, drf = answers
    assert lean.status_code == drf.status_code == 503
    assert _seen(lean) == _seen(drf)
