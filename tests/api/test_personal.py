"""The API of a reader's own lists: hide, save (articles and comments), and the lists of
what the caller hid, saved and voted up, private to the caller."""

from __future__ import annotations

import pytest

from articles.store import services
from tests.harness import redis_down

pytestmark = pytest.mark.django_db


def ids(response) -> list[int]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200, response.content
    return [a["id"] for a in response.json()["results"]]


def test_hiding_leaves_an_article_out_of_my_lists_and_unhiding_brings_it_back(as_user, anon, post):
    kept, gone = post("Kept"), post("Gone")
    assert as_user.put(f"/api/articles/{gone.id}/hide/").status_code == 204
    assert as_user.put(f"/api/articles/{gone.id}/hide/").status_code == 204  # again: the same
    for path in (
        "/api/articles/",
        "/api/articles/?order=time",
        "/api/articles/top/",
        "/api/articles/top/?period=week",
        "/api/users/ann/articles/",
    ):
        assert ids(as_user.get(path)) == [kept.id], path
        assert ids(anon.get(path)) == [gone.id, kept.id], path
    assert as_user.get("/api/articles/").json()["count"] == 1
    assert ids(as_user.get("/api/articles/hidden/")) == [gone.id]
    assert as_user.delete(f"/api/articles/{gone.id}/hide/").status_code == 204
    assert ids(as_user.get("/api/articles/")) == [gone.id, kept.id]
    assert ids(as_user.get("/api/articles/hidden/")) == []


def test_saving_articles_and_comments_and_unsaving(as_user, post):
    a = post("Keep me")
    c = services.comment_post(article_id=a.id, user_id=99, author_name="x", text="Keep this")
    assert as_user.put(f"/api/articles/{a.id}/save/").status_code == 204
    assert as_user.put(f"/api/comments/{c.id}/save/").status_code == 204
    assert ids(as_user.get("/api/articles/saved/")) == [a.id]
    saved = as_user.get("/api/comments/saved/").json()
    assert [(x["id"], x["text"]) for x in saved["results"]] == [(c.id, "Keep this")]
    assert as_user.delete(f"/api/articles/{a.id}/save/").status_code == 204
    assert as_user.delete(f"/api/comments/{c.id}/save/").status_code == 204
    assert ids(as_user.get("/api/articles/saved/")) == []
    assert as_user.get("/api/comments/saved/").json()["results"] == []


def test_the_upvoted_list_follows_my_votes(as_user, post):
    a = post("Liked")
    assert (
        as_user.put(f"/api/articles/{a.id}/vote/", {"value": "up"}, format="json").status_code
        == 200
    )
    assert ids(as_user.get("/api/articles/upvoted/")) == [a.id]
    as_user.put(f"/api/articles/{a.id}/vote/", {"value": "none"}, format="json")
    assert ids(as_user.get("/api/articles/upvoted/")) == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("put", "/api/articles/1/hide/"),
        ("delete", "/api/articles/1/hide/"),
        ("put", "/api/articles/1/save/"),
        ("delete", "/api/articles/1/save/"),
        ("put", "/api/comments/1/save/"),
        ("delete", "/api/comments/1/save/"),
        ("get", "/api/articles/saved/"),
        ("get", "/api/articles/hidden/"),
        ("get", "/api/articles/upvoted/"),
        ("get", "/api/comments/saved/"),
    ],
)
def test_each_needs_a_login(anon, post, method, path):
    post()
    response = getattr(anon, method)(path)
    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"


def test_what_is_not_there_is_a_404_and_a_bad_page_a_400(as_user):
    response = as_user.put("/api/articles/99/hide/")
    assert response.status_code == 404 and response.json()["code"] == "article_not_found"
    response = as_user.put("/api/comments/99/save/")
    assert response.status_code == 404 and response.json()["code"] == "comment_not_found"
    response = as_user.get("/api/articles/saved/?page=0")
    assert response.status_code == 400 and response.json()["field"] == "page"
    assert as_user.post("/api/articles/1/hide/").status_code == 405


def test_my_lists_are_mine_alone(as_user, as_poster, post):
    a = post()
    as_poster.put(f"/api/articles/{a.id}/save/")
    assert ids(as_poster.get("/api/articles/saved/")) == [a.id]
    assert ids(as_user.get("/api/articles/saved/")) == []


def test_with_redis_down_a_hide_is_a_503(as_user):
    with redis_down():
        response = as_user.put("/api/articles/1/hide/")
    assert response.status_code == 503
