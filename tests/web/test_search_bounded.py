"""A search that stops after its bounded work (search.lua's walk) says so: the page gives
an estimated count as "About N" and, while the page may lack results, a link that goes
on searching; the API says the same in `count_exact` and `complete`."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from articles.store.selectors import searching
from tests import factories


def found(html: str) -> list[int]:
    return list(dict.fromkeys(int(n) for n in re.findall(r'href="/a/(\d+)/"', html)))


@pytest.fixture
def sparse(now, monkeypatch):  # type: ignore[no-untyped-def]
    """600 articles: `east` in the oldest 300, `west` in the newest 300 and in the oldest
    one: searching both walks 100 ranks a call, 2 calls a request (600 ranks to read)."""
    monkeypatch.setattr(searching, "SEARCH_BUILD_MAX", 10)
    monkeypatch.setattr(searching, "SEARCH_STEP", 100)
    monkeypatch.setattr(searching, "SEARCH_STEPS", 2)
    first = factories.article(1, "east west", "", text="x", now=now - 600, poster_name="u").id
    dense = []
    for n in range(1, 600):
        title = "east filler" if n < 300 else "west filler"
        dense.append(
            factories.article(1, title, "", text="x", now=now - 600 + n, poster_name="u").id
        )
    return first, dense


def test_the_page_says_when_it_stopped_early_and_goes_on(client, sparse):  # type: ignore[no-untyped-def]
    first, _ = sparse
    address = "/search/?q=east+west&order=newest"
    html = client.get(address).content.decode()
    assert "No article found yet." in html and "Search further" in html
    assert f'href="{address}"' in html.replace("&amp;", "&")
    assert "No article has all these words." not in html
    client.get(address)
    html = client.get(address).content.decode()  # the third request reads the last ranks
    assert found(html) == [first] and "1 article found." in html
    assert "Search further" not in html


def test_an_estimated_count_says_about(client, sparse):  # type: ignore[no-untyped-def]
    _, dense = sparse
    html = client.get("/search/?q=filler+west&order=newest").content.decode()
    assert re.search(r"About [\d,]+ articles found\.", html)
    assert found(html)[:25] == dense[::-1][:25]
    assert "Search further" not in html  # the page itself is whole


def test_the_api_says_whether_count_and_page_are_whole(sparse):  # type: ignore[no-untyped-def]
    _, dense = sparse
    api = APIClient()
    body = api.get("/api/articles/search/", {"q": "east west", "order": "newest"}).json()
    assert body["results"] == [] and body["complete"] is False and body["count_exact"] is False
    body = api.get("/api/articles/search/", {"q": "filler west", "order": "newest"}).json()
    assert [a["id"] for a in body["results"]] == dense[::-1][:25]
    assert body["complete"] is True and body["count_exact"] is False
    body = api.get("/api/articles/search/", {"q": "filler"}).json()
    assert body["count"] == 599 and body["count_exact"] is True and body["complete"] is True
