"""Groups, users, the moderation log and statistics: reading for everyone, changes and
statistics for staff only."""

from __future__ import annotations

import pytest

from articles.store import selectors, services
from tests.actors import staff_actor

pytestmark = pytest.mark.django_db


def test_groups_list_names_descriptions_and_sizes(anon, post):
    services.group_create(
        name="redis", description="The data structure server.", actor=staff_actor()
    )
    services.group_create(name="python", actor=staff_actor())
    post(groups=["redis"])
    response = anon.get("/api/groups/")
    assert response.status_code == 200
    assert response.json() == [
        {"name": "python", "description": "", "size": 0},
        {"name": "redis", "description": "The data structure server.", "size": 1},
    ]


def test_one_group_and_an_unknown_group(anon):
    services.group_create(name="redis", actor=staff_actor())
    assert anon.get("/api/groups/redis/").json() == {"name": "redis", "description": "", "size": 0}
    missing = anon.get("/api/groups/nosuch/")
    assert missing.status_code == 404 and missing.json()["code"] == "group_not_found"


def test_a_group_lists_its_articles_by_score_or_time(anon, post):
    services.group_create(name="redis", actor=staff_actor())
    older = post("Older", age=600, groups=["redis"])
    newer = post("Newer", groups=["redis"])
    post("Elsewhere")
    by_time = anon.get("/api/groups/redis/articles/?order=time").json()
    assert [a["id"] for a in by_time["results"]] == [newer.id, older.id]
    assert by_time["count"] == 2
    by_score = anon.get("/api/groups/redis/articles/").json()
    assert [a["id"] for a in by_score["results"]] == [newer.id, older.id]


def test_a_group_listing_refuses_bad_pages_and_unknown_groups(anon):
    services.group_create(name="redis", actor=staff_actor())
    assert anon.get("/api/groups/redis/articles/?page=0").json()["field"] == "page"
    assert anon.get("/api/groups/nosuch/articles/").status_code == 404
    assert anon.get("/api/groups/Not_A_Slug/articles/").status_code == 404


def test_staff_create_a_group(as_staff):
    response = as_staff.post(
        "/api/groups/", {"name": "cute-animals", "description": "Otters."}, format="json"
    )
    assert response.status_code == 201
    assert response.json() == {"name": "cute-animals", "description": "Otters.", "size": 0}
    assert selectors.group_get(name="cute-animals").description == "Otters."


def test_creating_an_existing_group_is_409(as_staff):
    services.group_create(name="redis", actor=staff_actor())
    response = as_staff.post("/api/groups/", {"name": "redis"}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "group_exists"


@pytest.mark.parametrize("name", ["Redis", "a b", "", "x" * 65, "grüße", "group:x"])
def test_a_bad_group_name_is_400_naming_the_name_field(as_staff, name):
    response = as_staff.post("/api/groups/", {"name": name}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "name"
    assert selectors.group_list() == []


def test_only_staff_create_groups(as_user, anon):
    assert as_user.post("/api/groups/", {"name": "redis"}, format="json").status_code == 403
    assert anon.post("/api/groups/", {"name": "redis"}, format="json").status_code == 401
    assert selectors.group_list() == []


def test_staff_change_a_group_description(as_staff, as_user):
    services.group_create(name="redis", description="old", actor=staff_actor())
    denied = as_user.patch("/api/groups/redis/", {"description": "mine"}, format="json")
    assert denied.status_code == 403
    response = as_staff.patch("/api/groups/redis/", {"description": "new"}, format="json")
    assert response.status_code == 200 and response.json()["description"] == "new"
    missing = as_staff.patch("/api/groups/nosuch/", {"description": "x"}, format="json")
    assert missing.status_code == 404


def test_staff_delete_a_group_and_its_articles_stay(as_staff, as_user, anon, post):
    services.group_create(name="redis", actor=staff_actor())
    article = post(groups=["redis"])
    assert as_user.delete("/api/groups/redis/").status_code == 403
    assert anon.delete("/api/groups/redis/").status_code == 401
    assert as_staff.delete("/api/groups/redis/?reason=merged").status_code == 204
    assert selectors.group_list() == []
    assert selectors.article_get(article_id=article.id).groups == ()
    assert as_staff.delete("/api/groups/redis/").status_code == 404


def test_a_users_articles_newest_first(anon, post, as_poster):
    first, second = post("First", age=60), post("Second")
    response = anon.get("/api/users/ann/articles/")
    assert response.status_code == 200
    assert [a["id"] for a in response.json()["results"]] == [second.id, first.id]


def test_a_user_without_articles_has_an_empty_list_and_an_unknown_user_is_404(anon, as_user):
    assert anon.get("/api/users/bob/articles/").json()["results"] == []
    missing = anon.get("/api/users/nobody/articles/")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    assert anon.get("/api/users/bob/articles/?page=-1").status_code == 400


def test_the_moderation_log_lists_staff_actions_newest_first(anon, as_staff, post):
    services.group_create(name="redis", actor=staff_actor())
    article = post()
    as_staff.post(f"/api/articles/{article.id}/groups/", {"add": ["redis"]}, format="json")
    as_staff.delete(f"/api/articles/{article.id}/?reason=spam")
    body = anon.get("/api/modlog/").json()
    assert body["count"] == 2 and body["next"] is None
    latest = body["results"][0]
    assert latest["action"] == "delete" and latest["actor"] == "mod"
    assert latest["target"] == f"article:{article.id}" and latest["reason"] == "spam"
    assert latest["at"].endswith("Z")
    assert body["results"][1]["details"] == {"add": ["redis"], "remove": []}
    assert anon.get("/api/modlog/?page=0").status_code == 400


def test_staff_see_daily_post_and_vote_counts(as_staff, as_user, anon, post):
    post()
    post("Another")
    response = as_staff.get("/api/stats/?days=7")
    assert response.status_code == 200
    body = response.json()
    assert len(body["days"]) == 7 and body["total_posts"] == 2
    assert body["days"][-1]["posts"] == 2
    assert as_user.get("/api/stats/").status_code == 403
    assert anon.get("/api/stats/").status_code == 401
    assert as_staff.get("/api/stats/?days=0").json()["field"] == "days"
