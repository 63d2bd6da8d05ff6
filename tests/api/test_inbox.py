"""/api/inbox/: the replies inbox through the API: list, unread count, mark read, errors."""

from __future__ import annotations

import pytest

from tests.factories import article, comment
from tests.harness import redis_down

pytestmark = pytest.mark.django_db


@pytest.fixture
def replies(make_user):  # type: ignore[no-untyped-def]
    """user1 posted an article; user2 commented on it, user3 replied to that comment."""
    poster, second, third = make_user(), make_user(), make_user()
    a = article(poster, title="Sorted sets")
    top = comment(second, a.id, "on the article")
    reply = comment(third, a.id, "on the comment", top.id)
    return poster, second, top, reply


def client_of(user):  # type: ignore[no-untyped-def]
    from tests.api.conftest import _client_for

    return _client_for(user)


def test_the_journey_list_unread_then_mark_read(replies):
    poster, second, top, reply = replies
    api = client_of(second)
    assert api.get("/api/inbox/unread/").json() == {"unread": 1}
    page = api.get("/api/inbox/").json()
    assert page["count"] == 1 and page["unread"] == 1 and page["next"] is None
    [entry] = page["results"]
    assert entry["unread"] is True and entry["number"] == page["newest"] == 1
    assert entry["comment"]["id"] == reply.id and entry["comment"]["parent_id"] == top.id
    assert entry["comment"]["article_title"] == "Sorted sets"
    assert list(page) == ["count", "next", "previous", "unread", "newest", "results"]
    assert api.get("/api/inbox/unread/").json() == {"unread": 1}  # listing marks nothing
    marked = api.post("/api/inbox/read/", {"up_to": page["newest"]}, format="json")
    assert marked.status_code == 200 and marked.json() == {"unread": 0}
    assert api.get("/api/inbox/").json()["results"][0]["unread"] is False
    assert client_of(poster).post("/api/inbox/read/", {}, format="json").json() == {"unread": 0}


def test_each_user_sees_only_their_own_inbox(replies):
    poster, _, top, _ = replies
    ids = [r["comment"]["id"] for r in client_of(poster).get("/api/inbox/").json()["results"]]
    assert ids == [top.id]


def test_no_login_is_a_401(anon):  # type: ignore[no-untyped-def]
    for response in (
        anon.get("/api/inbox/"),
        anon.get("/api/inbox/unread/"),
        anon.post("/api/inbox/read/", {}, format="json"),
    ):
        assert response.status_code == 401


@pytest.mark.parametrize("bad", [-1, "x", 1.5, True, 10**18])
def test_a_bad_up_to_is_a_400_naming_it_and_marks_nothing(replies, bad):
    _, second, _, _ = replies
    api = client_of(second)
    response = api.post("/api/inbox/read/", {"up_to": bad}, format="json")
    assert response.status_code == 400 and "up_to" in str(response.json())
    assert api.get("/api/inbox/unread/").json() == {"unread": 1}


def test_a_bad_page_is_a_400(replies):
    assert client_of(replies[1]).get("/api/inbox/?page=0").status_code == 400


def test_redis_down_is_a_503(replies):
    api = client_of(replies[1])
    with redis_down():
        assert api.get("/api/inbox/unread/").status_code == 503
        assert api.post("/api/inbox/read/", {}, format="json").status_code == 503
