"""/api/domains/<domain>/articles/, each article's `domain`, and /api/users/<name>/ with
karma and comment karma."""

from __future__ import annotations

from articles.store import services
from articles.types import Vote
from tests.factories import article, comment


def test_a_sites_articles_newest_first_with_each_articles_site(client, make_user):
    ann = make_user("ann")
    old = article(ann, title="Old", link="https://www.example.org/old")
    article(ann, title="Other", link="https://other.org/")
    new = article(ann, title="New", link="https://example.org/new")
    text = article(ann, title="Text", link="", text="Words.")
    body = client.get("/api/domains/example.org/articles/").json()
    assert body["count"] == 2 and [a["id"] for a in body["results"]] == [new.id, old.id]
    assert {a["domain"] for a in body["results"]} == {"example.org"}
    assert client.get(f"/api/articles/{text.id}/").json()["domain"] == ""
    same = client.get("/api/domains/WWW.EXAMPLE.org/articles/").json()
    assert [a["id"] for a in same["results"]] == [new.id, old.id]
    assert client.get("/api/domains/nothing.example/articles/").json()["count"] == 0


def test_a_name_no_site_has_is_a_404_and_a_bad_page_a_400(client, db):
    response = client.get("/api/domains/a*b/articles/")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    response = client.get("/api/domains/example.org/articles/?page=0")
    assert response.status_code == 400 and response.json()["field"] == "page"


def test_a_user_with_karma_and_comment_karma(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    services.article_vote(article_id=a.id, user_id=bob.pk, direction=Vote.UP)
    c = comment(ann, a.id)
    services.comment_vote(comment_id=c.id, user_id=bob.pk, vote=Vote.DOWN)
    body = client.get("/api/users/ann/").json()
    assert body["username"] == "ann"
    assert (body["karma"], body["comment_karma"]) == (2, -1)
    assert body["articles"].endswith("/api/users/ann/articles/")
    assert body["comments"].endswith("/api/users/ann/comments/")
    assert body["html_url"].endswith("/u/ann/") and body["date_joined"].endswith("Z")
    assert client.get("/api/users/nobody/").status_code == 404
