"""A backup keeps no flags: an article or comment held for its flags comes back from an
import released (ranked, unfolded), so nothing stays hidden with no queue to list it."""

from __future__ import annotations

import io
from pathlib import Path

from django.core.management import call_command

from articles.operations import audit
from articles.store import keys, selectors, services
from articles.types import NewPost
from tests.actors import member_actor


def test_a_held_article_and_comment_come_back_released_and_ranked(
    tmp_path: Path, settings, conn, now
):  # type: ignore[no-untyped-def]
    settings.ARTICLES_FLAG_THRESHOLD = 1
    article = services.article_post(
        NewPost(user_id=1, poster_name="u1", title="T", link="https://example.org/", now=now)
    )
    comment = services.comment_post(article_id=article.id, user_id=2, author_name="b", text="x")
    services.item_flag(kind="article", item_id=article.id, actor=member_actor(2), reason="spam")
    services.item_flag(kind="comment", item_id=comment.id, actor=member_actor(3), reason="spam")
    call_command("export_articles", output=str(tmp_path / "b.jsonl"), stderr=io.StringIO())
    conn.flushdb()
    call_command("import_articles", str(tmp_path / "b.jsonl"), stdout=io.StringIO())
    assert audit.invariant_audit() == []
    assert not conn.hexists(keys.article(article.id), "held")
    assert conn.zscore(keys.SCORE, keys.article(article.id)) == now + 432
    assert conn.zscore(keys.TIME, keys.article(article.id)) == now
    assert not selectors.comment_get(comment_id=comment.id).held
