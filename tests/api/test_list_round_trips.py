"""An API listing counts its rate limits in the read of its page's rows: two round trips,
not three, with the same windows, the same 429 and the same RateLimit-* headers; a page
that reads no rows, a bad query or a missing group is counted all the same."""

from __future__ import annotations

import time

import pytest

from articles.store import ratelimits, services
from articles.store.connection import get_connection
from tests import factories
from tests.actors import staff_actor

pytestmark = pytest.mark.django_db

LISTINGS = ["/api/articles/", "/api/articles/top/?period=week", "/api/groups/redis/articles/"]


@pytest.fixture
def articles() -> None:
    services.group_create(name="redis", actor=staff_actor())
    for n in range(3):
        factories.article(
            1, f"T{n}", f"https://e.org/{n}", groups=["redis"], poster_name="p", now=time.time()
        )


@pytest.mark.usefixtures("articles", "clock")  # both requests in one rate-limit window
@pytest.mark.parametrize("path", LISTINGS)
def test_an_anonymous_listing_is_two_round_trips_with_its_count(anon, round_trips, path):
    assert anon.get(path).status_code == 200  # a group's ranking kept, a period's filled
    trips, response = round_trips(lambda: anon.get(path))
    assert response.status_code == 200 and len(response.json()["results"]) == 3
    assert trips == 2, trips
    assert response["RateLimit-Limit"] == "600" and response["RateLimit-Remaining"] == "598"


@pytest.mark.usefixtures("articles", "clock")
@pytest.mark.parametrize("path", LISTINGS)
def test_a_listing_past_its_limit_is_the_same_429(anon, settings, path):
    settings.ARTICLES_RATE_LIMITS = {"api": (2, 60)}
    answers = [anon.get(path) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    refused = answers[2]
    assert refused.json()["code"] == "rate_limited"
    assert refused.json()["detail"].startswith("Too many requests: at most 2 every minute.")
    assert refused["RateLimit-Limit"] == "2" and refused["RateLimit-Remaining"] == "0"
    assert refused["Retry-After"] == refused["RateLimit-Reset"] == "60"
    assert [a["RateLimit-Remaining"] for a in answers[:2]] == ["1", "0"]


@pytest.mark.usefixtures("articles", "clock")
@pytest.mark.parametrize(
    "path",
    [
        "/api/articles/?page=99",  # past the end: no rows read
        "/api/articles/?page=0",  # a 400
        "/api/articles/?order=sideways",
        "/api/groups/nosuch/articles/",  # a 404
        "/api/articles/top/?period=week&page=99",
    ],
)
def test_a_listing_that_reads_no_rows_is_counted_all_the_same(anon, settings, path):
    settings.ARTICLES_RATE_LIMITS = {"api": (1, 60)}
    first = anon.get(path)
    assert first.status_code in (200, 400, 404) and first["RateLimit-Remaining"] == "0"
    assert anon.get("/api/articles/").status_code == 429


@pytest.mark.usefixtures("articles", "clock")
def test_a_logged_in_listing_counts_the_very_windows_check_counts(as_user, rf):
    """Ensure the one registry rules: the rows' read counts the keys, with the expiries,
    that ratelimits.check() counts for the same request (the address's and the user's)."""
    conn = get_connection()
    assert as_user.get("/api/articles/").status_code == 200
    counted = {key: (conn.get(key), conn.ttl(key)) for key in conn.scan_iter("ratelimit:*")}
    conn.delete(*counted)
    request = rf.get("/api/articles/", REMOTE_ADDR="127.0.0.1")
    request.user = as_user.user
    ratelimits.check(request, "api", "api_user")
    checked = {key: (conn.get(key), conn.ttl(key)) for key in conn.scan_iter("ratelimit:*")}
    assert len(counted) == 2 and counted.keys() == checked.keys()
    for key, (count, ttl) in counted.items():
        assert count == checked[key][0] == b"1" and abs(ttl - checked[key][1]) <= 2, key
