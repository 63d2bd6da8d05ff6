"""The comments endpoints through DRF's APIClient, against the real test Redis."""

from __future__ import annotations

import time

import pytest
from rest_framework.renderers import JSONRenderer

from articles.api.comment_serializers import (
    CommentSerializer,
    ListedCommentSerializer,
    comment_data,
)
from articles.api.renderers import FastJSONRenderer
from articles.store import selectors, services
from articles.types import Comment, Vote
from tests.actors import member_actor
from tests.api.conftest import WEEK

pytestmark = pytest.mark.django_db


@pytest.fixture
def say(as_poster):  # type: ignore[no-untyped-def]
    """Comment as `ann` (or `by`) straight through the store; `age` in seconds ago."""

    def make(article_id: int, text: str = "Hi", parent: int | None = None, by=None, age: float = 0):  # type: ignore[no-untyped-def]
        user = by or as_poster.user
        return services.comment_post(
            article_id=article_id,
            user_id=user.pk,
            author_name=user.username,
            text=text,
            parent_id=parent,
            now=time.time() - age,
        )

    return make


def _thread(client, article_id: int, **query):  # type: ignore[no-untyped-def]
    response = client.get(f"/api/articles/{article_id}/comments/", query)
    assert response.status_code == 200, response.content
    return response.json()


# --- posting and replying ------------------------------------------------------------------


def test_posting_a_comment_answers_201_with_the_comment_and_its_location(as_user, post):
    article = post()
    response = as_user.post(
        f"/api/articles/{article.id}/comments/", {"text": "First *comment*"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body == {
        "id": body["id"],
        "article_id": article.id,
        "parent_id": None,
        "author": "bob",
        "text": "First *comment*",
        "text_html": "<p>First <em>comment</em></p>",
        "posted_at": body["posted_at"],
        "time": body["time"],
        "edited_at": None,
        "votes": 0,
        "downvotes": 0,
        "points": 0,
        "depth": 0,
        "replies": 0,
        "state": "visible",
        "reason": "",
        "more": False,
        "my_vote": body["my_vote"],
        "url": f"http://testserver/api/comments/{body['id']}/",
        "html_url": f"http://testserver/a/{article.id}/c/{body['id']}/",
    }
    assert body["posted_at"].endswith("Z") and abs(body["time"] - time.time()) < 60
    assert response["Location"] == body["url"]
    assert as_user.get(response["Location"]).json()["text"] == "First *comment*"
    assert as_user.get(f"/api/articles/{article.id}/").json()["comments"] == 1


def test_text_html_is_the_sanitised_markdown_and_text_the_source(as_user, post):
    article = post()
    text = "<script>alert(1)</script> [x](javascript:alert(1)) [ok](https://example.org/)"
    response = as_user.post(f"/api/articles/{article.id}/comments/", {"text": text}, format="json")
    body = response.json()
    assert body["text"] == text
    html = body["text_html"]
    assert "<script" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html
    assert '<a href="https://example.org/" rel="nofollow ugc noopener">ok</a>' in html


def test_a_reply_names_its_parent_and_sits_under_it_in_the_thread(as_user, post, say):
    article = post()
    other = say(article.id, "Other top", age=60)
    top = say(article.id, "Top")
    response = as_user.post(
        f"/api/articles/{article.id}/comments/",
        {"text": "A reply", "parent": top.id},
        format="json",
    )
    assert response.status_code == 201, response.content
    reply = response.json()
    assert reply["parent_id"] == top.id and reply["depth"] == 1
    rows = _thread(as_user, article.id, sort="new")["results"]
    assert [(c["id"], c["depth"], c["parent_id"]) for c in rows] == [
        (top.id, 0, None),
        (reply["id"], 1, top.id),
        (other.id, 0, None),
    ]
    assert rows[0]["replies"] == 1 and rows[2]["replies"] == 0
    assert as_user.get(f"/api/articles/{article.id}/").json()["comments"] == 3


def test_posting_needs_a_login(anon, post):
    article = post()
    response = anon.post(f"/api/articles/{article.id}/comments/", {"text": "x"}, format="json")
    assert response.status_code == 401
    assert selectors.comment_thread(article_id=article.id).count == 0


@pytest.mark.parametrize(
    "data",
    [{}, {"text": ""}, {"text": "   \n "}, {"text": 5}, {"text": "x" * 10_001}],
)
def test_bad_text_is_400_naming_text_and_posts_nothing(as_user, post, data):
    article = post()
    response = as_user.post(f"/api/articles/{article.id}/comments/", data, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "text"
    assert selectors.comment_thread(article_id=article.id).count == 0


def test_the_length_limit_is_the_setting(as_user, post, settings):
    settings.ARTICLES_COMMENT_MAX_LENGTH = 10
    article = post()
    url = f"/api/articles/{article.id}/comments/"
    assert as_user.post(url, {"text": "x" * 10}, format="json").status_code == 201
    response = as_user.post(url, {"text": "x" * 11}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "text"


def test_a_reply_too_deep_is_400_naming_parent(as_user, post, say, settings):
    settings.ARTICLES_COMMENT_MAX_DEPTH = 2
    article = post()
    a = say(article.id, "depth 0")
    b = say(article.id, "depth 1", parent=a.id)
    c = say(article.id, "depth 2", parent=b.id)
    response = as_user.post(
        f"/api/articles/{article.id}/comments/", {"text": "depth 3", "parent": c.id}, format="json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "parent"
    assert selectors.comment_get(comment_id=c.id).replies == 0


def test_a_parent_on_another_article_is_refused(as_user, post, say):
    article, elsewhere = post("One"), post("Two")
    parent = say(elsewhere.id)
    response = as_user.post(
        f"/api/articles/{article.id}/comments/", {"text": "x", "parent": parent.id}, format="json"
    )
    assert response.status_code in (400, 404), response.content
    assert selectors.comment_thread(article_id=article.id).count == 0


def test_unknown_article_or_parent_is_404(as_user, post):
    response = as_user.post("/api/articles/999/comments/", {"text": "x"}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "article_not_found"
    article = post()
    response = as_user.post(
        f"/api/articles/{article.id}/comments/", {"text": "x", "parent": 999}, format="json"
    )
    assert response.status_code == 404 and response.json()["code"] == "comment_not_found"


def test_commenting_after_the_window_closed_is_403(as_user, post):
    article = post(age=WEEK + 60)
    response = as_user.post(f"/api/articles/{article.id}/comments/", {"text": "x"}, format="json")
    assert response.status_code == 403, response.content
    assert response.json()["code"] == "commenting_closed"
    assert _thread(as_user, article.id)["commenting_open"] is False


@pytest.mark.usefixtures("clock")
def test_a_retried_post_with_the_same_idempotency_key_returns_the_first_comment(
    as_user, post, settings
):
    """Ensure a retry is answered with the first comment even past the commenting limit
    the first request used up."""
    settings.ARTICLES_RATE_LIMITS = {"comment": (1, 600)}
    article = post()
    url = f"/api/articles/{article.id}/comments/"
    first = as_user.post(url, {"text": "Once"}, format="json", HTTP_IDEMPOTENCY_KEY="c-1")
    again = as_user.post(url, {"text": "Once"}, format="json", HTTP_IDEMPOTENCY_KEY="c-1")
    assert first.status_code == 201 and again.status_code == 201, again.content
    assert again.json()["id"] == first.json()["id"]
    assert again["Location"] == first["Location"]
    assert as_user.post(url, {"text": "New"}, format="json").status_code == 429
    assert selectors.comment_thread(article_id=article.id).count == 1


def test_a_retry_after_the_comment_was_deleted_gets_what_the_first_post_got(as_user, post):
    article = post()
    url = f"/api/articles/{article.id}/comments/"
    first = as_user.post(url, {"text": "Gone"}, format="json", HTTP_IDEMPOTENCY_KEY="d-1")
    assert as_user.delete(first["Location"]).status_code == 204
    retry = as_user.post(url, {"text": "Gone"}, format="json", HTTP_IDEMPOTENCY_KEY="d-1")
    assert retry.status_code == 201, retry.content
    assert retry.json() == first.json()
    assert selectors.comment_thread(article_id=article.id).count == 0


def test_a_malformed_idempotency_key_is_400_naming_it(as_user, post):
    article = post()
    response = as_user.post(
        f"/api/articles/{article.id}/comments/",
        {"text": "x"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="has spaces",
    )
    assert response.status_code == 400 and response.json()["field"] == "idempotency_key"


def test_the_same_idempotency_key_with_another_body_is_422_and_posts_nothing(as_user, post):
    article = post()
    url = f"/api/articles/{article.id}/comments/"
    first = as_user.post(url, {"text": "One"}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert first.status_code == 201
    other = as_user.post(url, {"text": "Two"}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert other.status_code == 422, other.content
    body = other.json()
    assert body["code"] == "idempotency_key_reused"
    assert body["comment_id"] == first.json()["id"] and "article_id" not in body
    assert "new comment" in body["detail"] and "article" not in body["detail"]
    assert [c.text for c in selectors.comment_thread(article_id=article.id).items] == ["One"]


@pytest.mark.usefixtures("clock")
def test_commenting_is_rate_limited_with_retry_after(as_user, post, settings):
    settings.ARTICLES_RATE_LIMITS = {"comment": (2, 600)}
    article = post()
    url = f"/api/articles/{article.id}/comments/"
    statuses = [as_user.post(url, {"text": f"n{n}"}, format="json").status_code for n in range(3)]
    assert statuses == [201, 201, 429]
    refused = as_user.post(url, {"text": "more"}, format="json")
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert refused["Retry-After"] == "600"
    assert "comments" in refused.json()["detail"]
    assert selectors.comment_thread(article_id=article.id).count == 2


# --- reading -------------------------------------------------------------------------------


def test_a_thread_page_says_its_article_order_and_windows(anon, post, say):
    article = post()
    say(article.id)
    body = _thread(anon, article.id)
    assert set(body) == {
        "count", "next", "previous", "article_id", "sort", "voting_open",
        "commenting_open", "focus", "results",
    }  # fmt: skip
    assert body["count"] == 1 and body["article_id"] == article.id and body["sort"] == "best"
    assert body["voting_open"] is True and body["commenting_open"] is True
    assert body["focus"] is None and body["results"][0]["my_vote"] is None


def test_best_puts_the_most_voted_first_and_new_the_newest(anon, post, say, make_user):
    article = post()
    liked = say(article.id, "Liked", age=300)
    newest = say(article.id, "Newest")
    for n in range(3):
        voter = make_user(f"fan{n}")
        services.comment_vote(comment_id=liked.id, user_id=voter.pk, vote=Vote.UP)
    best = [c["id"] for c in _thread(anon, article.id, sort="best")["results"]]
    new = [c["id"] for c in _thread(anon, article.id, sort="new")["results"]]
    assert best == [liked.id, newest.id]
    assert new == [newest.id, liked.id]


def test_a_thread_pages_by_top_level_comments(anon, post, say, settings):
    settings.ARTICLES_COMMENTS_PER_PAGE = 2
    article = post()
    tops = [say(article.id, f"top {n}", age=100 - n) for n in range(3)]
    say(article.id, "reply", parent=tops[2].id)
    first = _thread(anon, article.id, sort="new")
    assert first["count"] == 3
    assert [c["text"] for c in first["results"]] == ["top 2", "reply", "top 1"]
    assert "page=2" in first["next"] and first["previous"] is None
    second = anon.get(first["next"]).json()
    assert [c["text"] for c in second["results"]] == ["top 0"] and second["next"] is None


@pytest.mark.parametrize("query", [{"sort": "old"}, {"page": "0"}, {"page": ""}])
def test_a_bad_thread_query_is_400_naming_the_field(anon, post, query):
    article = post()
    response = anon.get(f"/api/articles/{article.id}/comments/", query)
    assert response.status_code == 400
    assert response.json()["field"] == next(iter(query))


def test_the_thread_of_an_unknown_article_is_404(anon):
    response = anon.get("/api/articles/999/comments/")
    assert response.status_code == 404 and response.json()["code"] == "article_not_found"


def test_a_thread_shows_the_callers_own_votes(as_user, post, say):
    article = post()
    up, down, none = say(article.id, "a"), say(article.id, "b"), say(article.id, "c")
    services.comment_vote(comment_id=up.id, user_id=as_user.user.pk, vote=Vote.UP)
    services.comment_vote(comment_id=down.id, user_id=as_user.user.pk, vote=Vote.DOWN)
    mine = {c["id"]: c["my_vote"] for c in _thread(as_user, article.id)["results"]}
    assert mine == {up.id: "up", down.id: "down", none.id: "none"}


def test_deep_replies_are_marked_more_and_continue_under_replies(anon, post, say, settings):
    settings.ARTICLES_COMMENT_DISPLAY_DEPTH = 2
    article = post()
    chain = [say(article.id, "level 0")]
    for level in range(1, 5):
        chain.append(say(article.id, f"level {level}", parent=chain[-1].id))
    rows = _thread(anon, article.id)["results"]
    shown = [c["text"] for c in rows]
    assert "level 4" not in shown and "level 0" in shown
    last = rows[-1]
    assert last["more"] is True
    response = anon.get(f"/api/comments/{last['id']}/replies/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["focus"]["id"] == last["id"] and body["article_id"] == article.id
    assert body["count"] == 1
    assert body["results"][0]["parent_id"] == last["id"]


def test_one_comment_by_id_and_unknown_ids_are_404(anon, post, say):
    article = post()
    comment = say(article.id, "Here")
    response = anon.get(f"/api/comments/{comment.id}/")
    assert response.status_code == 200 and response.json()["text"] == "Here"
    for path in ("/api/comments/999/", "/api/comments/999/replies/"):
        response = anon.get(path)
        assert response.status_code == 404 and response.json()["code"] == "comment_not_found"
    assert anon.get("/api/comments/abc/").status_code == 404


def test_recent_comments_site_wide_newest_first_with_titles(anon, post, say):
    one, two = post("One"), post("Two")
    say(one.id, "older", age=60)
    say(two.id, "newer")
    body = anon.get("/api/comments/").json()
    assert body["count"] == 2
    assert [(c["text"], c["article_title"]) for c in body["results"]] == [
        ("newer", "Two"),
        ("older", "One"),
    ]


def test_a_users_comments_and_an_unknown_user(anon, post, say, as_user):
    article = post("Art")
    say(article.id, "by ann")
    say(article.id, "by bob", by=as_user.user)
    body = anon.get("/api/users/bob/comments/").json()
    assert [(c["text"], c["author"], c["article_title"]) for c in body["results"]] == [
        ("by bob", "bob", "Art")
    ]
    response = anon.get("/api/users/nobody/comments/")
    assert response.status_code == 404


# --- voting --------------------------------------------------------------------------------


def test_voting_up_down_and_none_and_repeating_changes_nothing(as_user, post, say):
    article = post()
    comment = say(article.id)
    url = f"/api/comments/{comment.id}/vote/"
    seen = []
    for value in ("up", "up", "down", "none", "none"):
        response = as_user.put(url, {"value": value}, format="json")
        assert response.status_code == 200, response.content
        body = response.json()
        seen.append((body["votes"], body["downvotes"], body["points"], body["my_vote"]))
    assert seen == [
        (1, 0, 1, "up"),
        (1, 0, 1, "up"),
        (0, 1, -1, "down"),
        (0, 0, 0, "none"),
        (0, 0, 0, "none"),
    ]


def test_voting_needs_a_login_a_good_value_and_a_comment(anon, as_user, post, say):
    comment = say(post().id)
    url = f"/api/comments/{comment.id}/vote/"
    assert anon.put(url, {"value": "up"}, format="json").status_code == 401
    response = as_user.put(url, {"value": "sideways"}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "value"
    response = as_user.put("/api/comments/999/vote/", {"value": "up"}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "comment_not_found"
    assert selectors.comment_get(comment_id=comment.id).votes == 0


def test_voting_after_the_articles_window_is_409(as_user, post):
    article = post("Late", age=WEEK + 10)
    user = as_user.user
    comment = services.comment_post(  # posted while the article was still open
        article_id=article.id,
        user_id=user.pk,
        author_name=user.username,
        text="Back then",
        now=time.time() - WEEK,
    )
    response = as_user.put(f"/api/comments/{comment.id}/vote/", {"value": "down"}, format="json")
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "voting_closed"
    assert _thread(as_user, article.id)["voting_open"] is False


def test_a_deleted_or_removed_comment_takes_no_votes(as_user, as_staff, post, say):
    article = post()
    deleted, removed = say(article.id, "Deleted"), say(article.id, "Removed")
    for parent in (deleted, removed):
        say(article.id, "A reply keeps it in the thread", parent=parent.id)
    services.comment_delete(comment_id=deleted.id, actor=member_actor(deleted.author_id))
    as_staff.post(f"/api/comments/{removed.id}/remove/", {"reason": "spam"}, format="json")
    for comment in (deleted, removed):
        response = as_user.put(f"/api/comments/{comment.id}/vote/", {"value": "up"}, format="json")
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "not_allowed"
        assert selectors.comment_get(comment_id=comment.id).votes == 0


@pytest.mark.usefixtures("clock")
def test_comment_votes_count_in_the_vote_limit(as_user, post, say, settings):
    settings.ARTICLES_RATE_LIMITS = {"vote": (1, 60)}
    comment = say(post().id)
    url = f"/api/comments/{comment.id}/vote/"
    assert as_user.put(url, {"value": "up"}, format="json").status_code == 200
    refused = as_user.put(url, {"value": "down"}, format="json")
    assert refused.status_code == 429 and refused["Retry-After"] == "60"


# --- editing, deleting, removing -----------------------------------------------------------


def test_the_author_edits_within_the_window_and_it_shows_edited(as_poster, post, say):
    comment = say(post().id, "Frist")
    response = as_poster.patch(f"/api/comments/{comment.id}/", {"text": "First"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["text"] == "First" and body["edited_at"].endswith("Z")


def test_another_user_may_not_edit_and_nobody_after_the_window(as_user, as_poster, post, say):
    article = post()
    comment = say(article.id, "Mine")
    response = as_user.patch(f"/api/comments/{comment.id}/", {"text": "Yours"}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "not_allowed"
    old = say(article.id, "Old", age=3700)
    response = as_poster.patch(f"/api/comments/{old.id}/", {"text": "New"}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "edit_window_closed"
    assert selectors.comment_get(comment_id=old.id).text == "Old"


def test_editing_needs_a_login_good_text_and_a_comment(anon, as_poster, post, say):
    comment = say(post().id, "Text")
    url = f"/api/comments/{comment.id}/"
    assert anon.patch(url, {"text": "x"}, format="json").status_code == 401
    response = as_poster.patch(url, {"text": ""}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "text"
    assert as_poster.patch("/api/comments/999/", {"text": "x"}, format="json").status_code == 404
    unchanged = as_poster.patch(url, {}, format="json")  # a PATCH naming nothing changes nothing
    assert unchanged.status_code == 200 and unchanged.json()["text"] == "Text"
    assert unchanged.json()["edited_at"] is None


def test_deleting_a_comment_with_replies_leaves_deleted_and_without_removes_it(
    as_poster, as_user, post, say
):
    article = post()
    parent = say(article.id, "Parent")
    say(article.id, "Child", parent=parent.id, by=as_user.user)
    lone = say(article.id, "Lone")
    assert as_poster.delete(f"/api/comments/{parent.id}/").status_code == 204
    assert as_poster.delete(f"/api/comments/{lone.id}/").status_code == 204
    rows = _thread(as_poster, article.id)["results"]
    assert [(c["text"], c["state"], c["author"]) for c in rows] == [
        ("", "deleted", "[deleted]"),
        ("Child", "visible", "bob"),
    ]
    assert as_poster.get(f"/api/comments/{lone.id}/").status_code == 404


def test_only_the_author_deletes(as_user, anon, as_staff, post, say):
    comment = say(post().id)
    url = f"/api/comments/{comment.id}/"
    assert anon.delete(url).status_code == 401
    response = as_user.delete(url)
    assert response.status_code == 403 and response.json()["code"] == "not_allowed"
    assert as_staff.delete(url).status_code == 403  # staff remove, with a reason
    assert selectors.comment_get(comment_id=comment.id).visible
    assert as_user.delete("/api/comments/999/").status_code == 404


def test_staff_remove_a_comment_with_a_reason_into_the_modlog(as_staff, anon, post, say):
    article = post()
    comment = say(article.id, "Spam spam")
    say(article.id, "A reply", parent=comment.id)
    response = as_staff.post(
        f"/api/comments/{comment.id}/remove/", {"reason": "spam"}, format="json"
    )
    assert response.status_code == 204, response.content
    row = _thread(anon, article.id)["results"][0]
    assert row["id"] == comment.id and row["state"] == "removed" and row["text"] == ""
    entry = anon.get("/api/modlog/").json()["results"][0]
    assert entry["actor"] == "mod" and entry["reason"] == "spam"
    assert entry["target"] == f"comment:{comment.id}"


def test_removing_is_for_staff_with_a_reason(as_user, as_staff, post, say):
    comment = say(post().id)
    url = f"/api/comments/{comment.id}/remove/"
    assert as_user.post(url, {"reason": "mine"}, format="json").status_code == 403
    for data in ({}, {"reason": ""}, {"reason": "two\nlines"}):
        response = as_staff.post(url, data, format="json")
        assert response.status_code == 400 and response.json()["field"] == "reason"
    assert selectors.comment_get(comment_id=comment.id).visible
    response = as_staff.post("/api/comments/999/remove/", {"reason": "x"}, format="json")
    assert response.status_code == 404


# --- the representation --------------------------------------------------------------------


@pytest.mark.parametrize("edited", [None, 1_700_000_100.5])
@pytest.mark.parametrize("my_vote", [None, Vote.UP, Vote.NONE])
@pytest.mark.parametrize(("state", "reason"), [("", ""), ("deleted", ""), ("removed", "spam")])
def test_the_plain_dict_output_is_exactly_the_documented_serializers(
    rf, edited, my_vote, state, reason
):
    """Ensure comment_data (the fast path) gives what CommentSerializer (the schema) gives."""
    comment = Comment(
        id=5, article_id=7, parent_id=3 if state else None, author="user:3",
        author_name="ann <b>", text="*hi*\n\u2028", time=1_700_000_000.25, edited=edited,
        votes=3, downvotes=1, depth=1, replies=2, state=state, my_vote=my_vote, more=True,
        article_title="On <i>", reason=reason,
    )  # fmt: skip
    request = rf.get("/api/comments/")
    expected = CommentSerializer(comment, context={"request": request}).data
    assert comment_data(comment, request) == expected
    listed = ListedCommentSerializer(comment, context={"request": request}).data
    assert comment_data(comment, request, listed=True) == listed
    rendered = FastJSONRenderer().render({"results": [comment_data(comment, request)]})
    assert rendered == JSONRenderer().render({"results": [expected]})
