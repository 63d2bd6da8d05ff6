"""The decoded comments comment_thread keeps ("thread_comments"): a thread read again is
the thread as stored, for each viewer, after any change; the cache stays in its bound."""

from __future__ import annotations

from articles.store import selectors, services
from articles.store.selectors import comments as thread_reads
from articles.types import Vote
from tests.actors import staff_actor
from tests.factories import article, comment


def by_id(user_id: int | None = None, article_id: int = 1) -> dict[int, object]:
    thread = selectors.comment_thread(article_id=article_id, user_id=user_id)
    return {c.id: c for c in thread.items}


def test_a_thread_read_again_follows_every_change_and_each_viewers_vote():
    a = article(1)
    c = comment(2, a.id, "First words")
    assert by_id(article_id=a.id) == by_id(article_id=a.id)  # the second read is kept
    services.comment_vote(comment_id=c.id, user_id=3, vote=Vote.UP)
    kept = by_id(3, a.id)[c.id]
    assert kept.votes == 1 and kept.my_vote is Vote.UP  # type: ignore[attr-defined]
    other = by_id(4, a.id)[c.id]
    assert other.votes == 1 and other.my_vote is Vote.NONE  # type: ignore[attr-defined]
    assert by_id(None, a.id)[c.id].my_vote is None  # type: ignore[attr-defined]
    services.comment_edit(comment_id=c.id, actor=staff_actor(pk=2), text="Second words")
    assert by_id(3, a.id)[c.id].text == "Second words"  # type: ignore[attr-defined]
    comment(5, a.id, "A reply", parent_id=c.id)
    assert by_id(3, a.id)[c.id].replies == 1  # type: ignore[attr-defined]
    services.comment_remove(comment_id=c.id, actor=staff_actor("mod"), reason="Rude")
    removed = by_id(3, a.id)[c.id]
    assert removed.state == "removed" and removed.text == ""  # type: ignore[attr-defined]


def test_the_kept_comments_stay_in_their_bound(monkeypatch):
    a = article(1)
    made = [comment(2, a.id, f"Comment {n}").id for n in range(6)]
    monkeypatch.setattr(thread_reads._decoded, "max_entries", 3)
    for _ in range(2):
        assert sorted(by_id(article_id=a.id)) == sorted(made)
    assert len(thread_reads._decoded) <= 3
    monkeypatch.setattr(thread_reads._decoded, "max_entries", 100)
    monkeypatch.setattr(thread_reads._decoded, "max_bytes", 1000)
    thread_reads._decoded.clear()
    assert sorted(by_id(article_id=a.id)) == sorted(made)
    assert thread_reads._decoded.bytes <= 1000
