"""Backup and restore carry the comments: hashes, voter sets, the id counter, and every
ordering and count derived from them."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from articles.errors import InvalidInput
from articles.operations import audit, backup
from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.types import CommentOrder, NewPost, Vote
from tests import factories
from tests.actors import member_actor, staff_actor

# Each test ends with the invariant audit finding nothing on the session's store.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("audited")]


def _export(path: Path) -> list[dict[str, object]]:
    call_command("export_articles", output=str(path), stderr=io.StringIO())
    return [json.loads(line) for line in path.read_text().splitlines()]


def _say(article_id: int, user_id: int, parent: int | None = None, **kw) -> int:
    text = f"text <b>{user_id}</b> ✓\nline"
    return factories.comment(user_id, article_id, text, parent, author_name=f"ü{user_id}", **kw).id


def _populate() -> list[int]:
    now = time.time()
    articles = [
        services.article_post(
            NewPost(
                user_id=1,
                poster_name="p",
                title=f"A{i}",
                link=f"https://e.org/{i}",
                now=now - i * 600,
            )
        ).id
        for i in range(3)
    ]
    old = services.article_post(
        NewPost(
            user_id=1, poster_name="p", title="Old", link="https://e.org/old", now=now - 8 * 86_400
        )
    ).id
    services.comment_post(
        article_id=old, user_id=2, author_name="x", text="late", now=now - 8 * 86_400 + 5
    )
    for article_id in articles:
        tops = [_say(article_id, 2 + n) for n in range(4)]
        for n, top in enumerate(tops):
            reply = _say(article_id, 3, top)
            _say(article_id, 4, reply)
            for voter in range(10, 10 + n * 2):
                services.comment_vote(
                    comment_id=top, user_id=voter, vote=Vote.DOWN if voter % 3 else Vote.UP
                )
        services.comment_delete(comment_id=tops[0], actor=member_actor(2))  # a tombstone
        services.comment_remove(comment_id=tops[3], reason="spam", actor=staff_actor("mod"))
    doomed = services.article_post(
        NewPost(user_id=1, poster_name="p", title="Gone", link="https://e.org/gone", now=now)
    ).id
    _say(doomed, 2)
    services.article_delete(article_id=doomed, actor=member_actor(1, ""))
    return articles


def _threads(articles: list[int]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for article_id in articles:
        for order in CommentOrder:
            page = selectors.comment_thread(article_id=article_id, order=order, user_id=12)
            seen[f"{article_id}-{order.value}"] = (page.count, page.items, page.article.comments)
    seen["recent"] = selectors.recent_comments(per_page=100).items
    seen["user3"] = selectors.user_comments(user_id=3, per_page=100).items
    return seen


def test_comments_round_trip_through_export_and_import(tmp_path: Path):
    articles = _populate()
    assert audit.invariant_audit() == []
    before = _threads(articles)
    # posted in id order, so newest first is highest id first, ties of a second included
    recent = [c.id for c in selectors.recent_comments(per_page=100).items]
    assert recent == sorted(recent, reverse=True)
    assert len(recent) == 3 * (12 - 2) + 1  # all but a deleted and a removed one an article
    counter = get_connection().get(keys.COMMENT_IDS)
    first = _export(tmp_path / "backup.jsonl")
    comments = [r for r in first if r["type"] == "comment"]
    assert len(comments) == 3 * 12 + 1
    assert first[-1]["comment_counter"] == int(counter)
    assert any(r["down"] for r in comments) and any(r["up_expire_at_ms"] for r in comments)

    get_connection().flushdb()
    out = io.StringIO()
    call_command("import_articles", str(tmp_path / "backup.jsonl"), stdout=out)
    assert "37 comment" in out.getvalue()
    assert audit.invariant_audit() == []
    assert _threads(articles) == before
    assert get_connection().get(keys.COMMENT_IDS) == counter
    second = _export(tmp_path / "again.jsonl")
    strip = [{k: v for k, v in r.items() if not k.endswith("_ms")} for r in first]
    assert [{k: v for k, v in r.items() if not k.endswith("_ms")} for r in second] == strip
    # ids are not reused after a restore
    assert _say(articles[0], 5) == int(counter) + 1
    assert audit.invariant_audit() == []


def test_a_comment_of_an_article_not_in_the_file_stops_the_import(tmp_path: Path):
    _populate()
    records = _export(tmp_path / "backup.jsonl")
    records = [r for r in records if not (r["type"] == "article" and r["id"] == 1)]
    get_connection().flushdb()
    with pytest.raises(InvalidInput, match="article is not in the file"):
        backup.store_restore(records=enumerate(records, 1), replace=False)
    assert backup.store_is_empty()


def test_an_old_export_without_comments_still_imports(tmp_path: Path):
    services.article_post(NewPost(user_id=1, poster_name="p", title="T", link="https://e.org/"))
    records = _export(tmp_path / "backup.jsonl")
    del records[-1]["comment_counter"]
    get_connection().flushdb()
    backup.store_restore(records=enumerate(records, 1), replace=False)
    assert selectors.article_get(article_id=1).comments == 0
    assert audit.invariant_audit() == []
