"""The API's short cuts through DRF's per-request work answer as DRF's own: the renderer a
plain Accept gets, a query string's checked values (kept per serializer), a vote body's
value, and every error still the serializer's."""

from __future__ import annotations

import time

import pytest
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from articles.api import base
from articles.api.queries import ListQuerySerializer, TopQuerySerializer
from articles.api.serializers import VoteSerializer, vote_value
from articles.api.views import ArticleViewSet
from articles.types import Order, Period, Vote
from tests import factories

pytestmark = pytest.mark.django_db

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "text/html",
    "application/json; indent=4",
    "text/html, application/json;q=0.9",
    "",
]


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=api", "?page=2"])
def test_the_renderer_chosen_is_drfs_choice(accept, query):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get(f"/api/articles/{query}", **headers))
    view = ArticleViewSet(action_map={"get": "list"}, format_kwarg=None)
    view.format_kwarg = None
    renderers = view.get_renderers()
    try:
        expected = DefaultContentNegotiation().select_renderer(request, renderers, None)
    except Exception as exc:  # the same refusal either way
        with pytest.raises(type(exc)):
            view.perform_content_negotiation(request)
        return
    chosen = view.perform_content_negotiation(request)
    assert (type(chosen[0]), chosen[1]) == (type(expected[0]), expected[1])


@pytest.mark.parametrize(
    ("serializer", "query"),
    [
        (ListQuerySerializer, ""),
        (ListQuerySerializer, "order=time&page=3"),
        (ListQuerySerializer, "page=2&page=3"),
        (TopQuerySerializer, "period=week"),
    ],
)
def test_a_kept_query_is_what_its_serializer_gives(serializer, query):
    params = Request(APIRequestFactory().get(f"/?{query}")).query_params
    fresh = serializer(data=params)
    assert fresh.is_valid()
    assert base._valid(serializer, params) == dict(fresh.validated_data)
    assert base._valid(serializer, params) == dict(fresh.validated_data)  # kept this time


def test_kept_queries_are_only_those_that_validate_and_keep_their_types():
    params = Request(APIRequestFactory().get("/?order=time&page=2")).query_params
    assert base._valid(ListQuerySerializer, params) == {"order": Order.TIME, "page": 2}
    assert base._valid(TopQuerySerializer, params) == {"period": Period.ALL, "page": 2}
    bad = Request(APIRequestFactory().get("/?page=0")).query_params
    for _ in range(2):
        with pytest.raises(Exception, match="page"):
            base._valid(ListQuerySerializer, bad)
    assert not any(key[1:] == (("page", "0"),) for key in base._queries)


@pytest.mark.parametrize(
    "body",
    [
        {"value": "up"},
        {"value": "down", "other": 1},
        {"value": "none"},
        {"value": "UP"},
        {"value": 1},
        {"value": True},
        {"value": None},
        {"value": ["up"]},
        {},
        [],
        "up",
    ],
)
def test_a_vote_value_is_what_the_vote_serializer_reads(body):
    serializer = VoteSerializer(data=body)
    if serializer.is_valid():
        assert vote_value(body) is serializer.validated_data["value"]
        return
    with pytest.raises(Exception) as caught:
        vote_value(body)
    assert caught.value.detail == serializer.errors  # type: ignore[attr-defined]


def test_a_bad_vote_body_answers_as_before(as_user):
    article = factories.article(9, "T", "https://e.org/", poster_name="p", now=time.time())
    response = as_user.put(f"/api/articles/{article.id}/vote/", {"value": 1}, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == "value" and response.json()["code"] == "invalid_choice"
    ok = as_user.put(f"/api/articles/{article.id}/vote/", {"value": "down"}, format="json")
    assert ok.status_code == 200 and ok.json()["my_vote"] == Vote.DOWN.label


@pytest.mark.parametrize(
    "header",
    ["Token", "Token a b", "token   ", "Token \xe9\xff", "Bearer x", "Basic eDp5", "Token nosuch"],
)
def test_a_token_header_is_read_as_drf_reads_it(anon, header):
    """CachedTokenAuthentication reads the header from META: the same refusals, in DRF's
    words, and a header for another scheme left to the next authenticator."""
    response = anon.get("/api/articles/", HTTP_AUTHORIZATION=header)
    if header.split()[0].lower() != "token":
        assert response.status_code == 200
        return
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    expected = {
        "Token": "Invalid token header. No credentials provided.",
        "Token a b": "Invalid token header. Token string should not contain spaces.",
        "token   ": "Invalid token header. No credentials provided.",
        "Token \xe9\xff": "Invalid token header. Token string should not contain invalid "
        "characters.",
        "Token nosuch": "Invalid token.",
    }[header]
    assert response.json()["detail"] == expected


def test_a_page_of_kept_article_fields_is_what_article_data_gives(anon, rf, settings):
    from dataclasses import replace

    from articles.api.serializers import article_data, page_data
    from articles.store import selectors

    factories.article(9, "First", "https://e.org/1", poster_name="p", now=time.time())
    page = selectors.article_list()
    request = rf.get("/api/articles/", HTTP_HOST="testserver")
    fresh = [article_data(a, request) for a in page.items]
    assert page_data(page, request)["results"] == fresh
    assert page_data(page, request)["results"] == fresh  # kept this time
    voted = replace(page, items=[replace(page.items[0], votes=5)])
    assert page_data(voted, request)["results"][0]["votes"] == 5
    settings.ALLOWED_HOSTS = ["testserver", "other.test"]
    elsewhere = rf.get("/api/articles/", HTTP_HOST="other.test")
    assert page_data(page, elsewhere)["results"][0]["url"].startswith("http://other.test/")
    page_data(page, request)["results"][0]["groups"].append("x")
    assert page_data(page, request)["results"] == fresh


def test_a_kept_origin_still_refuses_a_host_not_allowed(rf, settings):
    from django.core.exceptions import DisallowedHost

    from articles.api.serializers import article_url

    settings.ALLOWED_HOSTS = ["testserver", "other.test"]
    allowed = rf.get("/", HTTP_HOST="other.test")
    assert article_url(3, allowed) == "http://other.test/api/articles/3/"
    assert article_url(3, rf.get("/", HTTP_HOST="other.test")).startswith("http://other.test/")
    with pytest.raises(DisallowedHost):
        article_url(3, rf.get("/", HTTP_HOST="evil.test"))
    secure = rf.get("/", HTTP_HOST="other.test", secure=True)
    assert article_url(3, secure).startswith("https://other.test/")
    settings.ALLOWED_HOSTS = ["testserver"]
    with pytest.raises(DisallowedHost):
        article_url(3, rf.get("/", HTTP_HOST="other.test"))
