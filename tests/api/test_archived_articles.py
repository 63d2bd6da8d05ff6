"""Archived articles (ARTICLES_ARCHIVE_AFTER) in the API: lists, detail, comments, search
and users answer as before archiving; writes answer 409 with a code saying why; staff
can still delete one."""

from __future__ import annotations

import time

import pytest

from articles.store import archive, clock
from tests.factories import comment, group

pytestmark = pytest.mark.django_db

WEEK = 604_800
LATER = WEEK - 60


@pytest.fixture
def archived(settings, post, as_user):  # type: ignore[no-untyped-def]
    settings.ARTICLES_ARCHIVE_AFTER = WEEK
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 0
    now = int(time.time())
    group("redis")
    articles = [
        post(title=f"Redis note {i}", age=6 * 3600 - i * 60, groups=["redis"] if i % 2 else [])
        for i in range(4)
    ]
    first = articles[0].id
    bob = as_user.user
    c1 = comment(bob, first, "A first comment", now=now - 3600)
    comment(bob, first, "A reply", parent_id=c1.id, now=now - 1800)
    clock.fix(now + LATER + 30)
    yield {"now": now, "first": first, "c1": c1.id}
    clock.fix(None)


PATHS = [
    "/api/articles/",
    "/api/articles/?order=time",
    "/api/articles/top/?period=week",
    "/api/articles/top/",
    "/api/groups/redis/articles/",
    "/api/users/ann/articles/",
    "/api/users/bob/comments/",
    "/api/comments/",
    "/api/articles/search/?q=redis",
    "/api/articles/search/?q=redis&order=newest",
    "/api/articles/search/?q=note&order=votes",
]


def _answers(client, paths):  # type: ignore[no-untyped-def]
    found = {}
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, (path, response.content[:300])
        found[path] = response.json()
    return found


def test_lists_detail_comments_and_search_answer_as_before(anon, archived):
    first = archived["first"]
    paths = [
        *PATHS,
        f"/api/articles/{first}/",
        f"/api/articles/{first}/comments/",
        f"/api/articles/{first}/comments/?sort=new",
        f"/api/comments/{archived['c1']}/",
    ]
    before = _answers(anon, paths)
    assert archive.archive(now=archived["now"] + LATER).archived == 4
    after = _answers(anon, paths)
    for path in paths:
        assert after[path] == before[path], path
    assert "A first comment" in str(after[f"/api/articles/{first}/comments/"])


def test_writes_answer_409_saying_why(as_user, as_staff, archived):
    archive.archive(now=archived["now"] + LATER)
    first, c1 = archived["first"], archived["c1"]
    response = as_user.post(f"/api/articles/{first}/comments/", {"text": "Late"}, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "article_archived")
    response = as_user.put(f"/api/articles/{first}/vote/", {"value": "up"}, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "voting_closed")
    response = as_staff.patch(
        f"/api/articles/{first}/", {"title": "New", "reason": "typo"}, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (409, "article_archived")
    response = as_staff.post(f"/api/comments/{c1}/remove/", {"reason": "spam"}, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "article_archived")
    response = as_user.delete(f"/api/comments/{c1}/")
    assert (response.status_code, response.json()["code"]) == (409, "article_archived")
    for path in (f"/api/articles/{first}/flag/", f"/api/comments/{c1}/flag/"):
        response = as_user.post(path, {"reason": "spam"}, format="json")
        assert (response.status_code, response.json()["code"]) == (409, "article_archived"), path
    response = as_staff.post(
        f"/api/articles/{first}/groups/", {"add": ["redis"], "reason": "x"}, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (409, "article_archived")


def test_staff_still_delete_an_archived_article(anon, as_staff, archived):
    archive.archive(now=archived["now"] + LATER)
    first = archived["first"]
    response = as_staff.delete(f"/api/articles/{first}/?reason=spam")
    assert response.status_code == 204
    assert anon.get(f"/api/articles/{first}/").status_code == 410
    assert first not in [a["id"] for a in anon.get("/api/articles/").json()["results"]]
