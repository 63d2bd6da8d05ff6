"""The articles endpoints through DRF's APIClient, against the real test Redis."""

from __future__ import annotations

import time

import pytest
from rest_framework.renderers import JSONRenderer

from articles.api.renderers import FastJSONRenderer
from articles.api.serializers import ArticleSerializer, article_data
from articles.store import selectors, services
from articles.types import Article, NewPost, Vote
from tests.actors import staff_actor
from tests.api.conftest import WEEK, page_path

pytestmark = pytest.mark.django_db


def test_list_has_drf_page_shape_and_every_article_field(anon, post):
    article = post("First post", groups=())
    response = anon.get("/api/articles/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"count", "next", "previous", "results"}
    assert body["count"] == 1 and body["next"] is None and body["previous"] is None
    item = body["results"][0]
    assert item == {
        "id": article.id,
        "title": "First post",
        "link": "https://example.org/first-post",
        "domain": "example.org",
        "text": "",
        "poster": "ann",
        "posted_at": item["posted_at"],
        "time": int(article.time),
        "edited_at": None,
        "votes": 1,
        "downvotes": 0,
        "score": article.time + 432,
        "groups": [],
        "comments": 0,
        "voting_closes_at": item["voting_closes_at"],
        "my_vote": None,
        "url": f"http://testserver/api/articles/{article.id}/",
        "html_url": f"http://testserver{page_path(article.id)}",
    }
    assert item["posted_at"].endswith("Z")
    assert item["voting_closes_at"].endswith("Z")


def test_list_shows_my_vote_to_a_logged_in_caller(as_user, post):
    voted, other = post("Voted on"), post("Not voted on")
    services.article_vote(article_id=voted.id, user_id=as_user.user.pk, direction=Vote.DOWN)
    results = as_user.get("/api/articles/", {"order": "time"}).json()["results"]
    assert {a["id"]: a["my_vote"] for a in results} == {voted.id: "down", other.id: "none"}


def test_list_orders_by_score_or_by_time(anon, post, as_user):
    old, new = post("Old one", age=600), post("New one")
    for n in range(1, 4):  # 3 more up-votes lift the older article above the newer
        services.article_vote(article_id=old.id, user_id=1000 + n, direction=Vote.UP)
    by_score = [a["id"] for a in anon.get("/api/articles/?order=score").json()["results"]]
    by_time = [a["id"] for a in anon.get("/api/articles/?order=time").json()["results"]]
    assert by_score == [old.id, new.id]
    assert by_time == [new.id, old.id]


def test_list_pages_hold_25_and_link_to_each_other(anon, post, settings):
    for n in range(27):
        post(f"Article {n}")
    first = anon.get("/api/articles/").json()
    assert first["count"] == 27 and len(first["results"]) == 25
    assert first["previous"] is None
    assert first["next"] == "http://testserver/api/articles/?page=2"
    second = anon.get(first["next"]).json()
    assert len(second["results"]) == 2 and second["next"] is None
    assert second["previous"] == "http://testserver/api/articles/?page=1"


def test_a_page_past_the_end_is_empty(anon, post):
    post()
    body = anon.get("/api/articles/?page=7").json()
    assert body["count"] == 1 and body["results"] == [] and body["next"] is None


@pytest.mark.parametrize("page", ["0", "-1", "x", "1.5", " ", "99999999999999", "\uff11", "100001"])
def test_a_bad_page_number_is_400_naming_the_page_field(anon, post, page):
    post()
    response = anon.get("/api/articles/", {"page": page})
    assert response.status_code == 400
    assert response.json()["field"] == "page"
    assert response.json()["code"]


def test_an_unknown_order_is_400_naming_the_order_field(anon):
    response = anon.get("/api/articles/?order=votes")
    assert response.status_code == 400
    assert response.json()["field"] == "order"


def test_posting_answers_201_with_the_article_and_its_own_up_vote(as_user):
    response = as_user.post(
        "/api/articles/",
        {"title": "  A title ", "link": "https://example.org/a", "text": "why", "groups": []},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["title"] == "A title" and body["votes"] == 1 and body["my_vote"] == "up"
    assert body["score"] == body["time"] + 432
    assert response["Location"] == body["url"]
    assert selectors.article_get(article_id=body["id"]).poster_name == "bob"


def test_posting_into_groups_puts_the_article_in_them(as_user, as_staff):
    services.group_create(name="redis", actor=staff_actor())
    response = as_user.post(
        "/api/articles/",
        {"title": "T", "link": "https://example.org/t", "groups": ["redis"]},
        format="json",
    )
    assert response.status_code == 201 and response.json()["groups"] == ["redis"]


def test_posting_needs_a_login(anon):
    response = anon.post("/api/articles/", {"title": "T", "link": "https://example.org/"})
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["code"] == "not_authenticated"
    assert selectors.article_list().count == 0


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"link": "https://example.org/"}, "title"),
        ({"title": "   ", "link": "https://example.org/"}, "title"),
        ({"title": "x" * 301, "link": "https://example.org/"}, "title"),
        ({"title": "T", "link": "javascript:alert(1)"}, "link"),
        ({"title": "T", "link": "ftp://example.org/"}, "link"),
        ({"title": "T"}, "link"),
        ({"title": "T", "link": "https://example.org/", "groups": ["Not A Slug"]}, "groups"),
        ({"title": "T", "link": "https://example.org/", "groups": "redis"}, "groups"),
        ({"title": ["T"], "link": "https://example.org/"}, "title"),
    ],
)
def test_bad_post_input_is_400_naming_the_field_and_posts_nothing(as_user, data, field):
    response = as_user.post("/api/articles/", data, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["field"] == field and field in body["errors"] and body["detail"]
    assert selectors.article_list().count == 0


def test_malformed_json_is_a_json_400(as_user):
    response = as_user.post("/api/articles/", "{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "parse_error"


def test_posting_into_an_unknown_group_is_404(as_user):
    response = as_user.post(
        "/api/articles/",
        {"title": "T", "link": "https://example.org/", "groups": ["nosuch"]},
        format="json",
    )
    assert response.status_code == 404
    assert response.json()["code"] == "group_not_found"


def test_a_duplicate_open_link_is_409_naming_the_existing_article(as_user, post):
    first = post("Original", link="https://example.org/same")
    response = as_user.post(
        "/api/articles/", {"title": "Again", "link": "http://www.example.org/same/"}, format="json"
    )
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "duplicate_link" and body["article_id"] == first.id
    assert str(first.id) in body["detail"]
    assert body["article_url"] == f"http://testserver{page_path(first.id)}"


def test_a_retried_post_with_the_same_idempotency_key_returns_the_first_article(as_user):
    data = {"title": "Once", "link": "https://example.org/once"}
    first = as_user.post("/api/articles/", data, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = as_user.post("/api/articles/", data, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201 and again.status_code == 201
    assert again.json()["id"] == first.json()["id"]
    assert selectors.article_list().count == 1


def test_the_same_idempotency_key_with_another_body_is_422_and_posts_nothing(as_user):
    """Ensure a reused key is refused (IETF idempotency-key draft), not answered with the
    article of the first request."""
    first = as_user.post(
        "/api/articles/", {"title": "One", "text": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    other = as_user.post(
        "/api/articles/", {"title": "Two", "text": "b"}, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert other.status_code == 422, other.content
    body = other.json()
    assert body["code"] == "idempotency_key_reused"
    assert body["article_id"] == first.json()["id"]
    assert [a.title for a in selectors.article_list().items] == ["One"]
    # Differences the cleaning removes (spaces around the title) are the same request.
    again = as_user.post(
        "/api/articles/", {"title": " One ", "text": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert again.status_code == 201 and again.json()["id"] == first.json()["id"]


@pytest.mark.usefixtures("clock")
def test_a_retry_gets_what_the_first_post_got_past_the_limit_and_after_a_delete(as_user, settings):  # type: ignore[no-untyped-def]
    """Ensure a retried post is answered with the first response (201, the article as
    created), not a 429 because the first one used up the limit, nor a 404 because the
    article was deleted since."""
    settings.ARTICLES_RATE_LIMITS = {"post": (1, 3600)}
    data = {"title": "Once", "link": "https://example.org/once"}
    first = as_user.post("/api/articles/", data, format="json", HTTP_IDEMPOTENCY_KEY="r-1")
    assert first.status_code == 201
    limited = as_user.post("/api/articles/", data, format="json", HTTP_IDEMPOTENCY_KEY="r-2")
    assert limited.status_code == 429  # a new request is limited
    retry = as_user.post("/api/articles/", data, format="json", HTTP_IDEMPOTENCY_KEY="r-1")
    assert retry.status_code == 201, retry.content
    assert retry.json() == first.json()
    assert retry["Location"] == first["Location"]
    services.article_delete(
        article_id=first.json()["id"], reason="spam", actor=staff_actor("mod", pk=0)
    )
    after = as_user.post("/api/articles/", data, format="json", HTTP_IDEMPOTENCY_KEY="r-1")
    assert after.status_code == 201, after.content
    assert after.json() == first.json()
    assert selectors.article_list().count == 0


def test_a_malformed_idempotency_key_is_400_naming_it(as_user):
    response = as_user.post(
        "/api/articles/",
        {"title": "T", "link": "https://example.org/"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="has spaces",
    )
    assert response.status_code == 400
    assert response.json()["field"] == "idempotency_key"


def test_one_article_by_id(anon, post):
    article = post()
    response = anon.get(f"/api/articles/{article.id}/")
    assert response.status_code == 200 and response.json()["id"] == article.id


@pytest.mark.parametrize("article_id", ["999", "0", "1234567890123456789", "abc", "-1"])
def test_an_unknown_article_is_a_json_404(anon, article_id):
    response = anon.get(f"/api/articles/{article_id}/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] in ("article_not_found", "not_found")


# --- voting ----------------------------------------------------------------------------


def test_voting_up_down_and_none_moves_counts_and_score(as_user, post):
    article = post()
    url = f"/api/articles/{article.id}/vote/"
    up = as_user.put(url, {"value": "up"}, format="json").json()
    assert (up["votes"], up["downvotes"], up["my_vote"]) == (2, 0, "up")
    assert up["score"] == article.time + 2 * 432
    down = as_user.put(url, {"value": "down"}, format="json").json()
    assert (down["votes"], down["downvotes"], down["my_vote"]) == (1, 1, "down")
    assert down["score"] == article.time
    none = as_user.put(url, {"value": "none"}, format="json").json()
    assert (none["votes"], none["downvotes"], none["my_vote"]) == (1, 0, "none")


def test_repeating_the_same_vote_changes_nothing(as_user, post):
    article = post()
    url = f"/api/articles/{article.id}/vote/"
    first = as_user.put(url, {"value": "up"}, format="json").json()
    second = as_user.put(url, {"value": "up"}, format="json")
    assert second.status_code == 200 and second.json() == first


def test_voting_needs_a_login(anon, post):
    article = post()
    response = anon.put(f"/api/articles/{article.id}/vote/", {"value": "up"}, format="json")
    assert response.status_code == 401
    assert selectors.article_get(article_id=article.id).votes == 1


@pytest.mark.parametrize("value", ["sideways", "", None, 1])
def test_a_bad_vote_value_is_400_naming_the_value_field(as_user, post, value):
    article = post()
    response = as_user.put(f"/api/articles/{article.id}/vote/", {"value": value}, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == "value"


def test_voting_after_the_week_is_409_saying_voting_closed(as_user, post):
    article = post(age=WEEK + 60)
    response = as_user.put(f"/api/articles/{article.id}/vote/", {"value": "up"}, format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "voting_closed" and "closed" in body["detail"]


def test_voting_on_an_unknown_article_is_404(as_user):
    response = as_user.put("/api/articles/42/vote/", {"value": "up"}, format="json")
    assert response.status_code == 404
    assert response.json()["code"] == "article_not_found"


# --- deleting and editing -------------------------------------------------------------------


def test_the_poster_may_delete_while_voting_is_open(as_poster, post):
    article = post()
    assert as_poster.delete(f"/api/articles/{article.id}/").status_code == 204
    assert as_poster.get(f"/api/articles/{article.id}/").status_code == 404


def test_the_poster_may_not_delete_after_voting_closed(as_poster, post):
    article = post(age=WEEK + 60)
    response = as_poster.delete(f"/api/articles/{article.id}/")
    assert response.status_code == 403 and response.json()["code"] == "not_allowed"


def test_another_user_may_not_delete(as_user, post):
    article = post()
    response = as_user.delete(f"/api/articles/{article.id}/")
    assert response.status_code == 403
    assert selectors.article_get(article_id=article.id).id == article.id


def test_staff_may_delete_any_article_with_a_reason(as_staff, post):
    article = post(age=WEEK + 60)
    response = as_staff.delete(f"/api/articles/{article.id}/?reason=spam")
    assert response.status_code == 204
    entries = selectors.modlog_page().items
    assert entries[0].action == "delete" and entries[0].reason == "spam"
    assert entries[0].actor == "mod"


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_staff_deleting_someone_elses_article_must_give_a_reason(as_staff, post, reason):
    article = post()
    query = "" if reason is None else f"?reason={reason}"
    response = as_staff.delete(f"/api/articles/{article.id}/{query}")
    assert response.status_code == 400 and response.json()["field"] == "reason"
    assert selectors.article_get(article_id=article.id).id == article.id
    assert selectors.modlog_page().items == []


def test_staff_deleting_their_own_article_need_give_no_reason(as_staff):
    staff = as_staff.user
    article = services.article_post(
        NewPost(
            user_id=staff.pk, poster_name=staff.username, title="Mine", link="https://example.org/m"
        )
    )
    assert as_staff.delete(f"/api/articles/{article.id}/").status_code == 204
    assert selectors.article_list().count == 0


def test_deleting_needs_a_login_and_an_existing_article(anon, as_staff):
    assert anon.delete("/api/articles/1/").status_code == 401
    assert as_staff.delete("/api/articles/1/").status_code == 404


def test_staff_may_edit_an_article(as_staff, post):
    article = post()
    response = as_staff.put(
        f"/api/articles/{article.id}/",
        {"title": "Better title", "link": "https://example.org/better"},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["title"] == "Better title"


def test_anonymous_users_may_not_edit_nor_posters_change_the_link(as_poster, anon, post):
    article = post()
    data = {"title": "Mine now", "link": "https://example.org/x"}
    assert as_poster.put(f"/api/articles/{article.id}/", data, format="json").status_code == 403
    assert anon.put(f"/api/articles/{article.id}/", data, format="json").status_code == 401
    assert selectors.article_get(article_id=article.id).title == "Hello"


# --- moving between groups ----------------------------------------------------------------


def test_staff_add_and_remove_groups_in_one_step(as_staff, post):
    for name in ("redis", "python"):
        services.group_create(name=name, actor=staff_actor())
    article = post(groups=["python"])
    response = as_staff.post(
        f"/api/articles/{article.id}/groups/",
        {"add": ["redis"], "remove": ["python"], "reason": "moved"},
        format="json",
    )
    assert response.status_code == 200
    assert response.json() == {"groups": ["redis"]}
    assert selectors.group_get(name="python").size == 0


def test_moving_groups_is_for_staff_only(as_poster, anon, post):
    services.group_create(name="redis", actor=staff_actor())
    article = post()
    url = f"/api/articles/{article.id}/groups/"
    assert as_poster.post(url, {"add": ["redis"]}, format="json").status_code == 403
    assert anon.post(url, {"add": ["redis"]}, format="json").status_code == 401


def test_moving_groups_names_bad_fields_and_unknown_groups(as_staff, post):
    services.group_create(name="redis", actor=staff_actor())
    article = post()
    url = f"/api/articles/{article.id}/groups/"
    both = as_staff.post(url, {"add": ["redis"], "remove": ["redis"]}, format="json")
    assert both.status_code == 400 and both.json()["field"] == "remove"
    bad = as_staff.post(url, {"add": ["BAD NAME"]}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "add"
    unknown = as_staff.post(url, {"add": ["nosuch"]}, format="json")
    assert unknown.status_code == 404 and unknown.json()["code"] == "group_not_found"
    gone = as_staff.post("/api/articles/999/groups/", {"add": ["redis"]}, format="json")
    assert gone.status_code == 404


# --- good and top -------------------------------------------------------------------------


def test_good_lists_the_newest_good_articles(anon, post, settings):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 2
    good, plain = post("Good one"), post("Plain one")
    services.article_vote(article_id=good.id, user_id=999, direction=Vote.UP)
    body = anon.get("/api/articles/good/").json()
    assert [a["id"] for a in body["results"]] == [good.id] and body["count"] == 1
    assert plain.id not in [a["id"] for a in body["results"]]
    assert anon.get("/api/articles/good/?page=2").json()["results"] == []


def test_good_of_a_day_lists_that_days_good_articles(anon, post, settings):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = 1
    today = post("Today")
    old = post("Three days ago", age=3 * 86_400)
    day = time.strftime("%Y-%m-%d", time.gmtime(old.time))
    body = anon.get(f"/api/articles/good/?date={day}").json()
    assert [a["id"] for a in body["results"]] == [old.id]
    assert today.id not in [a["id"] for a in body["results"]]


def test_a_bad_good_date_is_400_naming_the_date_field(anon):
    response = anon.get("/api/articles/good/?date=2024-13-45")
    assert response.status_code == 400 and response.json()["field"] == "date"


def test_top_of_the_day_leaves_out_older_articles(anon, post):
    new, old = post("New"), post("Old", age=2 * 86_400)
    day = [a["id"] for a in anon.get("/api/articles/top/?period=day").json()["results"]]
    everything = [a["id"] for a in anon.get("/api/articles/top/").json()["results"]]
    assert day == [new.id]
    assert sorted(everything) == sorted([new.id, old.id])


def test_an_unknown_period_is_400_naming_the_period_field(anon):
    response = anon.get("/api/articles/top/?period=decade")
    assert response.status_code == 400 and response.json()["field"] == "period"


def test_a_staff_edit_onto_an_open_articles_link_is_409(as_staff, post):
    first = post("First")
    second = post("Second")
    data = {"title": "Second", "link": first.link}
    response = as_staff.put(f"/api/articles/{second.id}/", data, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "duplicate_link"
    assert response.json()["article_id"] == first.id


@pytest.mark.parametrize("posted", [1_700_000_000, 1_700_000_000.25, 1_700_000_000.999999])
@pytest.mark.parametrize("my_vote", [None, Vote.UP, Vote.DOWN, Vote.NONE])
def test_the_plain_dict_output_is_exactly_the_documented_serializers(rf, posted, my_vote):
    """Ensure article_data (the fast path) gives what ArticleSerializer (the schema) gives."""
    article = Article(
        id=7, title="T \u2028 <b>", link="https://e.org/x", text="", poster="user:3",
        poster_name="ann", time=posted, votes=3, downvotes=1, score=posted + 864,
        groups=("a", "b"), voting_closes_at=posted + 604_800, my_vote=my_vote,
    )  # fmt: skip
    request = rf.get("/api/articles/")
    expected = ArticleSerializer(article, context={"request": request}).data
    assert article_data(article, request) == expected
    rendered = FastJSONRenderer().render({"results": [article_data(article, request)]})
    assert rendered == JSONRenderer().render({"results": [expected]})
