"""PUT and PATCH /api/articles/<id>/: staff at any time, the poster while voting is open."""

from __future__ import annotations

import pytest

from articles.store import selectors
from tests.api.conftest import WEEK

pytestmark = pytest.mark.django_db


def test_the_poster_patches_title_and_text_while_voting_is_open(as_poster, post):
    article = post(text="Old text")
    url = f"/api/articles/{article.id}/"
    response = as_poster.patch(url, {"text": "New text"}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["title"], body["text"]) == ("Hello", "New text")
    assert body["edited_at"] and body["edited_at"].endswith("Z")
    response = as_poster.patch(url, {"title": "Better"}, format="json")
    assert response.json()["title"] == "Better" and response.json()["text"] == "New text"
    assert selectors.modlog_page().count == 0  # a poster's edit is not moderation


def test_a_poster_may_put_with_the_link_unchanged_but_not_change_it(as_poster, post):
    article = post()
    url = f"/api/articles/{article.id}/"
    same = as_poster.put(url, {"title": "Same link", "link": article.link}, format="json")
    assert same.status_code == 200 and same.json()["title"] == "Same link"
    moved = as_poster.patch(url, {"link": "https://example.org/elsewhere"}, format="json")
    assert moved.status_code == 403 and moved.json()["code"] == "not_allowed"
    assert selectors.article_get(article_id=article.id).link == article.link


def test_after_voting_closes_only_staff_may_edit_and_staff_edits_are_logged(
    as_poster, as_user, as_staff, post
):
    article = post(age=WEEK + 5)
    url = f"/api/articles/{article.id}/"
    late = as_poster.patch(url, {"title": "Too late"}, format="json")
    assert late.status_code == 403 and "closed" in late.json()["detail"]
    assert as_user.patch(url, {"title": "Not mine"}, format="json").status_code == 403
    staff = as_staff.patch(url, {"title": "Fixed", "reason": "typo"}, format="json")
    assert staff.status_code == 200 and staff.json()["title"] == "Fixed"
    entry = selectors.modlog_page().items[0]
    assert (entry.actor, entry.action, entry.reason) == ("mod", "edit", "typo")


def test_an_edit_names_its_bad_field_and_changes_nothing(as_poster, anon, post):
    article = post()
    url = f"/api/articles/{article.id}/"
    blank = as_poster.patch(url, {"title": "   "}, format="json")
    assert blank.status_code == 400 and blank.json()["field"] == "title"
    no_body = as_poster.patch(url, {"text": ""}, format="json")
    assert no_body.status_code == 200  # the link remains, so an empty text is fine
    assert anon.patch(url, {"title": "x"}, format="json").status_code == 401
    assert as_poster.patch("/api/articles/999/", {"title": "x"}, format="json").status_code == 404
    assert selectors.article_get(article_id=article.id).title == "Hello"
