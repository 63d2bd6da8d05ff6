"""The vote endpoint's warm path: authentication, rate limits and the vote in at most two
Redis round trips and no database query; a removed token or user stops working at once."""

from __future__ import annotations

import time

import pytest
import redis
from django.db import connection
from django.test.utils import CaptureQueriesContext

from articles.models import ApiToken
from articles.store import ratelimits, selectors
from tests import factories
from tests.harness import store_modules
from tests.store.test_selectors import CountingConnection

pytestmark = pytest.mark.django_db


@pytest.fixture
def counted(redis_server, monkeypatch):  # type: ignore[no-untyped-def]
    client = redis.Redis(
        connection_pool=redis.ConnectionPool(
            connection_class=CountingConnection, path=str(redis_server.socket)
        )
    )
    for module in store_modules(ratelimits):
        monkeypatch.setattr(module, "get_connection", lambda: client)
    client.ping()

    def trips(call):  # type: ignore[no-untyped-def]
        CountingConnection.sent = 0
        result = call()
        return CountingConnection.sent, result

    return trips


def _post() -> int:
    return factories.article(999, "T", "https://e.org/", poster_name="p", now=time.time()).id


def test_a_token_vote_takes_two_round_trips_and_no_query_when_warm(as_user, counted):
    article_id = _post()
    vote = lambda value: as_user.put(  # noqa: E731
        f"/api/articles/{article_id}/vote/", {"value": value}, format="json"
    )
    assert vote("down").status_code == 200  # warms the token's user
    with CaptureQueriesContext(connection) as queries:
        trips, response = counted(lambda: vote("up"))
    assert response.status_code == 200 and response.json()["my_vote"] == "up"
    assert trips <= 2, trips
    assert len(queries) == 0, [q["sql"] for q in queries]
    assert selectors.article_get(article_id=article_id, user_id=as_user.user.pk).votes == 2


@pytest.mark.usefixtures("clock")
def test_the_vote_limit_still_holds_when_counted_with_the_apis(as_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"vote": (2, 60)}
    article_id = _post()
    path = f"/api/articles/{article_id}/vote/"
    answers = [
        as_user.put(path, {"value": value}, format="json").status_code
        for value in ("up", "down", "up")
    ]
    assert answers == [200, 200, 429]


def test_a_deleted_token_is_refused_at_once(as_user):
    article_id = _post()
    path = f"/api/articles/{article_id}/vote/"
    assert as_user.put(path, {"value": "up"}, format="json").status_code == 200
    ApiToken.objects.filter(user=as_user.user).get().delete()
    assert as_user.put(path, {"value": "down"}, format="json").status_code == 401


@pytest.mark.parametrize("change", ["delete", "deactivate"])
def test_a_deleted_or_deactivated_user_is_refused_at_once(as_user, change):
    article_id = _post()
    path = f"/api/articles/{article_id}/vote/"
    assert as_user.put(path, {"value": "up"}, format="json").status_code == 200
    user = type(as_user.user).objects.get(pk=as_user.user.pk)
    if change == "delete":
        user.delete()
    else:
        user.is_active = False
        user.save()
    assert as_user.put(path, {"value": "down"}, format="json").status_code in (401, 403)
