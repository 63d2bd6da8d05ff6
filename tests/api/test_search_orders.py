"""The API's search takes its documented orders, `time` among them (the word the article
lists use), and answers 400 naming `order` for any other word (issue 24)."""

from __future__ import annotations

from rest_framework.test import APIClient

from articles.store import services
from articles.types import Vote
from tests import factories


def test_the_api_takes_its_documented_orders_and_time_and_refuses_the_rest(now):
    old, voted, new = (
        factories.article(1, f"redis {n}", "", text="x", now=now + n, poster_name="u").id
        for n in range(3)
    )
    services.article_vote(article_id=voted, user_id=2, direction=Vote.UP)
    api = APIClient()
    by_time = api.get("/api/articles/search/", {"q": "redis", "order": "time"})
    assert by_time.status_code == 200
    assert [a["id"] for a in by_time.json()["results"]] == [new, voted, old]
    newest = api.get("/api/articles/search/", {"q": "redis", "order": "newest"}).json()
    assert newest["results"] == by_time.json()["results"]
    for word in ("new", "top", "TIME", "bogus"):
        response = api.get("/api/articles/search/", {"q": "redis", "order": word})
        assert response.status_code == 400, word
        assert response.json()["field"] == "order"
