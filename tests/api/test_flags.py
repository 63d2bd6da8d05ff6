"""The flags API: a member flags articles and comments (400 bad reason, 409 twice, 401
logged out); staff list the queue and resolve or dismiss (403 for others)."""

from __future__ import annotations

import pytest

from articles.store import keys
from tests import factories


@pytest.fixture(autouse=True)
def _threshold(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARTICLES_FLAG_THRESHOLD = 2


def test_a_member_flags_an_article_once(as_user, anon, post, conn):
    article = post("Cheap pills")
    assert anon.post(f"/api/articles/{article.id}/flag/", {"reason": "spam"}).status_code == 401
    bad = as_user.post(f"/api/articles/{article.id}/flag/", {"reason": "rude"}, format="json")
    assert bad.status_code == 400 and "reason" in bad.json()["errors"]
    answer = as_user.post(f"/api/articles/{article.id}/flag/", {"reason": "spam"}, format="json")
    assert answer.status_code == 201
    assert answer.json() == {"target": f"article:{article.id}", "flags": 1, "held": False}
    again = as_user.post(f"/api/articles/{article.id}/flag/", {"reason": "spam"}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "already_flagged"
    missing = as_user.post("/api/articles/999/flag/", {"reason": "spam"}, format="json")
    assert missing.status_code == 404
    assert conn.hlen(keys.flags(keys.article(article.id))) == 1


def test_a_comment_is_flagged_and_held(as_user, as_staff, post):
    article = post("Thread")
    comment = factories.comment(5, article.id, "Rude words")
    for client in (as_user, as_staff):
        answer = client.post(
            f"/api/comments/{comment.id}/flag/", {"reason": "abusive"}, format="json"
        )
        assert answer.status_code == 201
    assert answer.json()["held"] is True
    thread = as_user.get(f"/api/articles/{article.id}/comments/").json()
    assert thread["results"][0]["id"] == comment.id  # folded on the pages, still listed


def test_only_staff_see_and_decide_the_queue(as_user, anon, post):
    article = post("Thing")
    as_user.post(f"/api/articles/{article.id}/flag/", {"reason": "duplicate"}, format="json")
    assert anon.get("/api/flags/").status_code == 401
    assert as_user.get("/api/flags/").status_code == 403
    decide = f"/api/flags/article/{article.id}/dismiss/"
    assert as_user.post(decide, {}, format="json").status_code == 403


def test_staff_dismiss_and_resolve(as_user, as_staff, post, conn):
    kept, gone = post("Kept"), post("Gone")
    for article in (kept, gone):
        as_user.post(f"/api/articles/{article.id}/flag/", {"reason": "spam"}, format="json")
        as_staff.post(f"/api/articles/{article.id}/flag/", {"reason": "off-topic"}, format="json")
    queue = as_staff.get("/api/flags/").json()
    assert queue["count"] == 2
    first = queue["results"][0]
    assert first["flags"] == 2 and first["held"] is True and first["exists"] is True
    assert first["reasons"] == {"spam": 1, "off-topic": 1}
    assert conn.zscore(keys.SCORE, keys.article(kept.id)) is None
    answer = as_staff.post(f"/api/flags/article/{kept.id}/dismiss/", {}, format="json")
    assert answer.status_code == 200
    assert answer.json() == {"target": f"article:{kept.id}", "decided": 2}
    assert conn.zscore(keys.SCORE, keys.article(kept.id)) is not None
    refused = as_staff.post(f"/api/flags/article/{gone.id}/resolve/", {}, format="json")
    assert refused.status_code == 400 and refused.json()["field"] == "reason"
    done = as_staff.post(
        f"/api/flags/article/{gone.id}/resolve/", {"reason": "spam"}, format="json"
    )
    assert done.status_code == 200 and not conn.exists(keys.article(gone.id))
    again = as_staff.post(f"/api/flags/article/{gone.id}/dismiss/", {}, format="json")
    assert again.status_code == 404 and again.json()["code"] == "not_flagged"
    assert as_staff.get("/api/flags/").json()["count"] == 0
    log = as_staff.get("/api/modlog/").json()["results"]
    assert [e["action"] for e in log] == ["flag_resolve", "delete", "flag_dismiss"]


def test_flags_past_the_rate_limit_are_refused_429(as_user, post, settings):
    settings.ARTICLES_RATE_LIMITS = {"flag": (1, 3600)}
    first, second = post("One"), post("Two")
    assert (
        as_user.post(
            f"/api/articles/{first.id}/flag/", {"reason": "spam"}, format="json"
        ).status_code
        == 201
    )
    refused = as_user.post(f"/api/articles/{second.id}/flag/", {"reason": "spam"}, format="json")
    assert refused.status_code == 429 and "Retry-After" in refused
