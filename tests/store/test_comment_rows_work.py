"""The comment rows outside a thread (issue 21): comment_rows.lua reads each row's values
only (one HMGET of THREAD_FIELDS) and no voter set whose count is 0; the recent comments,
a user's comments, saved comments, an article's feed, one comment and comment search's
rows are those of the plain reading (each comment's whole hash, its article's title and
both voter sets), written out here in Python."""

from __future__ import annotations

from typing import Any

import pytest

from articles.errors import CommentNotFound
from articles.store import keys, selectors, services
from articles.store.selectors.comments import _comment_rows
from articles.types import Comment, Vote
from tests.store.test_thread_page_work import VIEWER, commands_of, shaped_thread


def plain_row(conn: Any, member: str, user_id: int | None) -> Comment | None:
    """A comment as the plain reading gives it: HGETALL, its article's title, SISMEMBER
    of both voter sets for a viewer; None for a comment that is gone."""
    fields = conn.hgetall(member)
    if not fields:
        return None
    cid = keys.comment_id_of(member)
    article = fields.get(b"article", b"").decode()
    title = conn.hget(article, "title") if article.startswith("article:") else None
    vote = None
    if user_id:
        if conn.sismember(keys.comment_voted(cid), keys.user(user_id)):
            vote = Vote.UP
        elif conn.sismember(keys.comment_voted_down(cid), keys.user(user_id)):
            vote = Vote.DOWN
        else:
            vote = Vote.NONE
    return Comment.from_hash(cid, fields, my_vote=vote, article_title=keys.text(title or b""))


def newest(conn: Any, key: str) -> list[str]:
    """A time-scored listing's members, newest first, equal times by comment id."""
    scored = conn.zrevrange(key, 0, -1, withscores=True)
    members = [(score, keys.comment_id_of(m.decode()), m.decode()) for m, score in scored]
    return [m for *_, m in sorted(members, reverse=True)]


def plain_list(conn: Any, key: str, start: int, stop: int, user_id: int | None) -> list[Comment]:
    rows = (plain_row(conn, m, user_id) for m in newest(conn, key)[start : stop + 1])
    return [r for r in rows if r is not None]


@pytest.fixture
def thread(conn, now, settings) -> tuple[int, list[int]]:
    """shaped_thread's 40 comments (tombstones, a removal, an edit, a held one, votes of
    the viewer and others, most posted within the same seconds), some saved by the
    viewer, one hash gone with its members left behind."""
    article, ids = shaped_thread(now, settings)
    for cid in ids[::3]:
        if conn.exists(keys.comment(cid)):
            services.comment_save(comment_id=cid, user_id=VIEWER)
    conn.delete(keys.comment(ids[20]))
    return article, ids


@pytest.mark.parametrize("per_page", [1, 7, 25])
@pytest.mark.usefixtures("thread")
def test_every_listing_is_the_plain_readings(conn, per_page):
    total = len(newest(conn, keys.COMMENTS))
    for number in range(1, total // per_page + 3):
        start, stop = (number - 1) * per_page, number * per_page - 1
        for user_id in (None, VIEWER, 2):
            page = selectors.recent_comments(page=number, per_page=per_page, user_id=user_id)
            plain = plain_list(conn, keys.COMMENTS, start, stop, user_id)
            assert (page.count, page.items) == (total, plain), (number, user_id)
            saved = selectors.saved_comment_list(user_id=VIEWER, page=number, per_page=per_page)
            assert saved.items == plain_list(conn, keys.saved_comments(VIEWER), start, stop, VIEWER)
        for author in (2, 3, 4, 5):
            page = selectors.user_comments(user_id=author, page=number, per_page=per_page)
            assert page.items == plain_list(conn, keys.user_comments(author), start, stop, None)
    listed = plain_list(conn, keys.COMMENTS, 0, 999, VIEWER)
    assert {c.my_vote for c in listed} >= {Vote.UP, Vote.DOWN, Vote.NONE}
    assert any(c.held for c in listed) and any(c.edited for c in listed)


def test_one_comment_a_feed_and_search_rows_are_the_plain_readings(conn, thread):
    article, ids = thread
    for cid in ids:
        for user_id in (None, VIEWER):
            plain = plain_row(conn, keys.comment(cid), user_id)
            if plain is None:
                with pytest.raises(CommentNotFound):
                    selectors.comment_get(comment_id=cid, user_id=user_id)
            else:
                assert selectors.comment_get(comment_id=cid, user_id=user_id) == plain
    everything = newest(conn, keys.article_comments_all(article))
    for limit in (1, 4, 50):
        visible = [plain_row(conn, m, None) for m in everything[: 20 * limit]]
        shown = [c for c in visible if c is not None and not c.state][:limit]
        assert selectors.article_comments_feed(article_id=article, limit=limit) == shown
    members = [keys.comment(c) for c in reversed(ids)]
    found = _comment_rows(members, "members", 0, len(members) - 1, VIEWER)
    plain = [plain_row(conn, m, VIEWER) for m in members]
    assert found.items == [c for c in plain if c is not None]
    assert {c.my_vote for c in found.items} >= {Vote.UP, Vote.DOWN, Vote.NONE}
    assert {c.state for c in found.items} == {"", "deleted", "removed"}


@pytest.mark.usefixtures("thread")
def test_a_row_is_one_hmget_and_an_empty_voter_set_is_not_read(conn):
    """The plain reading's HGETALL carried each field's name into Lua and out, and read
    both voter sets of every row for a viewer."""
    page, ran = commands_of(
        conn, lambda: selectors.recent_comments(page=1, per_page=30, user_id=VIEWER)
    )
    rows = len(page.items)
    voted = sum((c.votes > 0) + (c.downvotes > 0) for c in page.items)
    assert rows == 29 and 0 < voted < 2 * rows  # 30 members, one of them gone
    assert "hgetall" not in ran
    assert ran.get("hmget") == 30
    assert ran.get("sismember") == voted
    assert ran.get("hget") == rows  # each row's article title
