"""A write the store refuses as bad data reaches the API as a named 503, never a 500, and
changes nothing (the store's side: tests/store/test_whole_writes.py)."""

from __future__ import annotations

from rest_framework.test import APIClient

from articles.store import keys
from tests import factories
from tests.harness import snapshot


def test_the_api_answers_a_vote_on_bad_data_with_a_named_503_not_a_500(conn, db):
    article_id = factories.article(1, title="T", link="https://e.org/a", poster_name="a").id
    conn.hset(keys.article(article_id), "votes", "1.0")
    user = factories.user("bob")
    api = APIClient()
    api.force_authenticate(user)
    before = snapshot(conn)
    response = api.put(f"/api/articles/{article_id}/vote/", {"value": "up"}, format="json")
    assert response.status_code == 503
    assert response.json()["code"] == "store_corrupt"
    assert "article:1" in response.json()["detail"]
    counters = lambda keys: {k: v for k, v in keys.items() if not k.startswith(b"ratelimit:")}  # noqa: E731
    assert counters(snapshot(conn)) == counters(before)  # the request was counted, no more
