"""A deleted article's comments go in steps short enough for the 5 ms no Redis call may
take (issue 21), with comments as the site writes them: their words indexed for comment
search, their replies in their authors' inboxes, some voted on."""

from __future__ import annotations

import pytest

from articles.store import keys, services
from articles.types import NewPost, Vote
from tests.actors import member_actor
from tests.store.test_big_deletes import slowlog  # noqa: F401 (a fixture)

COMMENTS = 200
TEXT = "Sorted sets keep the ranking, scripts keep every index and the page in one call {n}"


def _thread(article_id: int) -> list[int]:
    ids: list[int] = []
    for n in range(COMMENTS):
        parent = ids[n // 2] if n >= 10 else None  # replies, into the parents' inboxes
        comment = services.comment_post(
            article_id=article_id,
            user_id=2 + n % 20,
            author_name=f"u{2 + n % 20}",
            text=TEXT.format(n=n),
            parent_id=parent,
        )
        ids.append(comment.id)
    for cid in ids[::5]:
        services.comment_vote(comment_id=cid, user_id=99, vote=Vote.UP)
    return ids


@pytest.mark.usefixtures("slowlog")
def test_a_purge_step_deletes_a_bounded_batch_of_comments(conn) -> None:
    """Ensure each step deletes at most 25 comments (COMMENT_PURGE_BATCH): ~1 ms a step on
    a quiet machine, well under the 5 ms no call may take (100 a step took 4-10 ms). The
    bound is asserted, not the time: a busy machine stretches every step alike."""
    article = services.article_post(
        NewPost(user_id=1, poster_name="p", title="Thread", link="https://e.org/t")
    )
    _thread(article.id)
    conn.config_set("slowlog-log-slower-than", 0)  # every call (the fixture puts it back)
    conn.slowlog_reset()
    services.article_delete(article_id=article.id, actor=member_actor(1, ""))
    steps = [
        int(e["duration"])
        for e in conn.slowlog_get(10_000)
        if keys.article_comments_all(article.id).encode() in e["command"]
        and e["command"].startswith(b"EVALSHA")
    ]
    assert len(steps) >= COMMENTS // 25, steps  # at most 25 comments a step
    assert not conn.exists(keys.article_comments_all(article.id), keys.PURGE)
