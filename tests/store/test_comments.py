"""Comments (issue 12) against a real Redis: posting, replies, orders, votes, edits,
deletes and removals, the article's count, and the thread read's round trips."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from articles.errors import (
    ArticleNotFound,
    CommentIdempotencyKeyReused,
    CommentingClosed,
    CommentNotFound,
    CommentTooDeep,
    EditWindowClosed,
    IdempotencyKeyReused,
    InvalidInput,
    NotAllowed,
    StoreCorrupt,
    VotingClosed,
)
from articles.store import keys, selectors, services
from articles.types import CommentOrder, NewPost, Vote, comment_best
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.store.test_selectors import counting  # noqa: F401 - a fixture

WEEK = 604_800


@pytest.fixture
def article(now) -> int:
    return factories.article(1, title="A title", poster_name="poster", now=now).id


def say(article_id: int, user_id: int = 2, text: str = "hello", parent: int | None = None, **kw):
    return factories.comment(user_id, article_id, text, parent, **kw)


def comments_field(conn, article_id: int) -> int:
    return int(conn.hget(keys.article(article_id), "comments") or 0)


# --- posting -------------------------------------------------------------------------


def test_a_comment_gets_an_id_from_the_counter_and_every_index(conn, article, now):
    first = say(article, text="  *first*  ")
    second = say(article, user_id=3, parent=first.id)
    assert (first.id, second.id) == (1, 2) and int(conn.get("comment:")) == 2
    raw = conn.hgetall("comment:1")
    assert raw[b"article"] == b"article:1" and raw[b"parent"] == b""
    assert raw[b"author"] == b"user:2" and raw[b"author_name"] == b"u2"
    assert raw[b"text"] == b"*first*" and raw[b"depth"] == b"0"
    assert raw[b"votes"] == b"0" and raw[b"downvotes"] == b"0"
    assert not {b"state", b"edited", b"reason"} & raw.keys()  # none until there is one
    assert conn.hget("comment:2", "parent") == b"comment:1"
    assert conn.hget("comment:2", "depth") == b"1"
    assert conn.hget("comment:1", "replies") == b"1"
    assert conn.zrange("comments:1", 0, -1) == [b"comment:1"]
    assert conn.zscore("comments_new:1", "comment:1") == 1
    assert conn.zrange("replies:1", 0, -1) == [b"comment:2"]
    assert conn.zscore("replies_new:1", "comment:2") == 2
    assert conn.zscore("comments:1", "comment:1") == comment_best(1, 0, 0)
    assert conn.zcard("comments:") == 2 and conn.zcard("comments_all:1") == 2
    assert conn.zrange("user_comments:3", 0, -1) == [b"comment:2"]
    assert comments_field(conn, article) == 2
    assert selectors.article_get(article_id=article).comments == 2
    assert second.depth == 1 and second.parent_id == 1 and second.text == "hello"


def test_bad_comments_are_refused_naming_the_field_and_change_nothing(conn, article, settings):
    settings.ARTICLES_COMMENT_MAX_LENGTH = 20
    for text in ["", "   ", "x" * 21]:
        with pytest.raises(InvalidInput) as caught:
            say(article, text=text)
        assert caught.value.field == "text"
    with pytest.raises(ArticleNotFound):
        say(999)
    with pytest.raises(CommentNotFound):
        say(article, parent=42)
    with pytest.raises(InvalidInput) as caught:
        say(article, parent=0)
    assert caught.value.field == "parent"
    assert conn.zcard("comments:") == 0 and comments_field(conn, article) == 0


def test_a_parent_must_belong_to_the_same_article(conn, article, now):
    other = services.article_post(
        NewPost(user_id=1, poster_name="p", title="Other", link="https://example.org/b", now=now)
    ).id
    theirs = say(other)
    with pytest.raises(CommentNotFound):
        say(article, parent=theirs.id)


def test_replies_nest_to_the_stored_depth_limit_then_400_naming_parent(conn, article, settings):
    settings.ARTICLES_COMMENT_MAX_DEPTH = 3
    parent = None
    for depth in range(4):
        parent = say(article, parent=parent).id
        assert int(conn.hget(keys.comment(parent), "depth")) == depth
    with pytest.raises(CommentTooDeep) as caught:
        say(article, parent=parent)
    assert caught.value.field == "parent" and caught.value.status_code == 400
    assert comments_field(conn, article) == 4


def test_commenting_closes_after_its_own_time(conn, article, now, settings):
    settings.ARTICLES_COMMENT_OPEN_SECONDS = 100
    say(article, now=now + 99)
    with pytest.raises(CommentingClosed) as caught:
        say(article, now=now + 100)
    assert caught.value.status_code == 403
    settings.ARTICLES_COMMENT_OPEN_SECONDS = None  # the default: the voting window
    say(article, now=now + WEEK - 1)
    with pytest.raises(CommentingClosed):
        say(article, now=now + WEEK)


def test_an_idempotency_key_returns_the_first_comment(conn, article):
    first = say(article, text="once", idempotency_key="k1")
    again = say(article, text="once", idempotency_key="k1")
    assert again == first and conn.zcard("comments:") == 1
    assert comments_field(conn, article) == 1
    with pytest.raises(CommentIdempotencyKeyReused) as caught:  # the script's answer
        say(article, text="something else", idempotency_key="k1")
    assert caught.value.comment_id == first.id and "comment_id" in caught.value.body()
    assert isinstance(caught.value, IdempotencyKeyReused)  # the web form renews its key on it
    with pytest.raises(CommentIdempotencyKeyReused) as caught:  # the replay's answer
        selectors.comment_post_replay(
            article_id=article, user_id=2, author_name="u2", idempotency_key="k1", text="else"
        )
    assert caught.value.comment_id == first.id
    replay = selectors.comment_post_replay(
        article_id=article, user_id=2, author_name="u2", idempotency_key="k1", text="once"
    )
    assert replay == first
    assert (
        selectors.comment_post_replay(
            article_id=article, user_id=2, author_name="u2", idempotency_key="k2", text="once"
        )
        is None
    )
    # a repeat gets the comment as it was created, even once deleted
    services.comment_delete(comment_id=first.id, actor=member_actor(2))
    assert say(article, text="once", idempotency_key="k1") == first
    top = say(article, text="top")
    reply = say(article, text="r", parent=top.id, idempotency_key="k3")
    assert say(article, text="r", parent=top.id, idempotency_key="k3") == reply
    assert reply.depth == 1
    with pytest.raises(InvalidInput) as caught:
        say(article, idempotency_key="bad key")
    assert caught.value.field == "idempotency_key"


# --- votes ---------------------------------------------------------------------------


def test_comment_votes_are_states_like_article_votes(conn, article, now):
    c = say(article)
    up = services.comment_vote(comment_id=c.id, user_id=5, vote=Vote.UP)
    assert (up.votes, up.downvotes, up.my_vote) == (1, 0, Vote.UP)
    assert services.comment_vote(comment_id=c.id, user_id=5, vote=Vote.UP).votes == 1
    down = services.comment_vote(comment_id=c.id, user_id=5, vote=Vote.DOWN)
    assert (down.votes, down.downvotes) == (0, 1)
    assert conn.smembers("comment_voted_down:1") == {b"user:5"}
    assert conn.smembers("comment_voted:1") == set()
    none = services.comment_vote(comment_id=c.id, user_id=5, vote=Vote.NONE)
    assert (none.votes, none.downvotes, none.my_vote) == (0, 0, Vote.NONE)
    services.comment_vote(comment_id=c.id, user_id=6, vote=Vote.UP)
    assert conn.zscore("comments:1", "comment:1") == comment_best(1, 1, 0)
    # the voter sets expire when the ARTICLE's window closes
    assert abs(conn.ttl("comment_voted:1") - WEEK) <= 2
    with pytest.raises(VotingClosed):
        services.comment_vote(comment_id=c.id, user_id=7, vote=Vote.UP, now=now + WEEK)
    with pytest.raises(CommentNotFound):
        services.comment_vote(comment_id=99, user_id=7, vote=Vote.UP)


def test_best_and_new_orders_with_children_under_their_parent(conn, article):
    a, b, c = say(article, text="a"), say(article, text="b"), say(article, text="c")
    say(article, parent=a.id, text="a1")
    a2 = say(article, parent=a.id, text="a2")
    for voter in range(10, 15):
        services.comment_vote(comment_id=b.id, user_id=voter, vote=Vote.UP)
    services.comment_vote(comment_id=a2.id, user_id=10, vote=Vote.UP)
    services.comment_vote(comment_id=c.id, user_id=10, vote=Vote.DOWN)
    best = selectors.comment_thread(article_id=article)
    assert [x.text for x in best.items] == ["b", "a", "a2", "a1", "c"]
    new = selectors.comment_thread(article_id=article, order=CommentOrder.NEW)
    assert [x.text for x in new.items] == ["c", "b", "a", "a2", "a1"]
    assert best.count == 3 and best.article is not None and best.article.comments == 5
    assert [x.depth for x in best.items] == [0, 0, 1, 1, 0]


def test_a_thread_page_carries_the_viewers_votes(conn, article):
    c = say(article)
    services.comment_vote(comment_id=c.id, user_id=5, vote=Vote.DOWN)
    mine = selectors.comment_thread(article_id=article, user_id=5)
    assert mine.items[0].my_vote is Vote.DOWN and mine.article.my_vote is Vote.NONE
    assert selectors.comment_thread(article_id=article).items[0].my_vote is None
    assert mine.voting_open and mine.commenting_open


# --- edits, deletes, removals --------------------------------------------------------


def test_the_author_edits_within_the_window(conn, article, now, settings):
    c = say(article, now=now)
    edited = services.comment_edit(
        comment_id=c.id, text=" new ", now=now + 10, actor=member_actor(2)
    )
    assert edited.text == "new" and edited.edited == now + 10
    with pytest.raises(NotAllowed):
        services.comment_edit(comment_id=c.id, text="x", now=now + 10, actor=member_actor(3))
    with pytest.raises(EditWindowClosed) as caught:
        services.comment_edit(comment_id=c.id, text="x", now=now + 3600, actor=member_actor(2))
    assert caught.value.status_code == 403
    with pytest.raises(InvalidInput):
        services.comment_edit(comment_id=c.id, text="  ", now=now + 10, actor=member_actor(2))
    assert conn.hget("comment:1", "text") == b"new"


def test_editable_by_offers_the_edit_exactly_when_the_script_allows_it(
    conn, article, now, settings
):
    # Comment.editable_by decides whether pages offer the edit; comment_edit.lua decides.
    settings.ARTICLES_COMMENT_EDIT_SECONDS = 900
    c = say(article, now=now)
    last, closed = now + 900 - 1, now + 900
    assert c.editable_by(2, last)
    assert (
        services.comment_edit(comment_id=c.id, text="ok", now=last, actor=member_actor(2)).text
        == "ok"
    )
    assert not c.editable_by(2, closed)
    with pytest.raises(EditWindowClosed):
        services.comment_edit(comment_id=c.id, text="x", now=closed, actor=member_actor(2))
    assert not c.editable_by(3, now) and not c.editable_by(None, now)
    with pytest.raises(NotAllowed):
        services.comment_edit(comment_id=c.id, text="x", now=now, actor=member_actor(3))
    services.comment_delete(comment_id=c.id, actor=member_actor(2))
    assert not replace(c, state="deleted").editable_by(2, now)


def test_deleting_a_comment_without_replies_removes_it_entirely(conn, article):
    keep = say(article)
    c = say(article, parent=keep.id)
    services.comment_vote(comment_id=c.id, user_id=9, vote=Vote.UP)
    with pytest.raises(NotAllowed):
        services.comment_delete(comment_id=c.id, actor=member_actor(3))
    services.comment_delete(comment_id=c.id, actor=member_actor(2))
    assert not conn.exists("comment:2", "comment_voted:2", "replies:1", "replies_new:1")
    assert conn.zscore("comments:", "comment:2") is None
    assert conn.zscore("user_comments:2", "comment:2") is None
    assert conn.zscore("comments_all:1", "comment:2") is None
    assert conn.hget("comment:1", "replies") == b"0"
    assert comments_field(conn, article) == 1


def test_deleting_a_comment_with_replies_leaves_a_tombstone(conn, article):
    top = say(article, text="secret")
    reply = say(article, user_id=3, parent=top.id)
    services.comment_delete(comment_id=top.id, actor=member_actor(2))
    raw = conn.hgetall("comment:1")
    assert raw[b"state"] == b"deleted" and raw[b"text"] == b"" and raw[b"author_name"] == b""
    assert comments_field(conn, article) == 1
    assert conn.zscore("comments:", "comment:1") is None
    assert conn.zscore("user_comments:2", "comment:1") is None
    page = selectors.comment_thread(article_id=article)
    assert [(x.author_name, x.text) for x in page.items] == [("[deleted]", ""), ("u3", "hello")]
    with pytest.raises(NotAllowed):
        services.comment_vote(comment_id=top.id, user_id=5, vote=Vote.UP)
    with pytest.raises(InvalidInput) as caught:
        say(article, parent=top.id)
    assert caught.value.field == "parent"
    # its last reply gone, the tombstone goes too
    services.comment_delete(comment_id=reply.id, actor=member_actor(3))
    assert not conn.exists("comment:1", "comment:2")
    assert conn.zcard("comments:1") == 0 and conn.zcard("comments_new:1") == 0
    assert comments_field(conn, article) == 0


def test_staff_removal_keeps_the_reason_and_logs_it(conn, article):
    top = say(article)
    say(article, parent=top.id)
    services.comment_remove(comment_id=top.id, reason="spam", actor=staff_actor("mod"))
    raw = conn.hgetall("comment:1")
    assert raw[b"state"] == b"removed" and raw[b"reason"] == b"spam" and raw[b"text"] == b""
    entry = json.loads(conn.lindex("modlog:", 0))
    assert entry["action"] == "comment_remove" and entry["target"] == "comment:1"
    assert entry["actor"] == "mod" and entry["reason"] == "spam"
    assert entry["details"]["article"] == "article:1" and entry["details"]["author"] == "user:2"
    assert comments_field(conn, article) == 1
    with pytest.raises(NotAllowed):
        services.comment_remove(comment_id=top.id, reason="again", actor=staff_actor("mod"))
    lone = say(article)
    services.comment_remove(comment_id=lone.id, reason="off topic", actor=staff_actor("mod"))
    assert not conn.exists(keys.comment(lone.id)) and conn.llen("modlog:") == 2


# --- reads ---------------------------------------------------------------------------


def test_recent_user_and_feed_listings(conn, article, now):
    a = say(article, text="a", now=now)
    say(article, user_id=3, text="b", now=now + 1)
    say(article, text="c", parent=a.id, now=now + 2)
    recent = selectors.recent_comments(user_id=2)
    assert [c.text for c in recent.items] == ["c", "b", "a"] and recent.count == 3
    assert recent.items[0].article_title == "A title"
    mine = selectors.user_comments(user_id=2)
    assert [c.text for c in mine.items] == ["c", "a"] and mine.count == 2
    services.comment_delete(comment_id=a.id, actor=member_actor(2))  # tombstone: has a reply
    feed = selectors.article_comments_feed(article_id=article)
    assert [c.text for c in feed] == ["c", "b"]
    got = selectors.comment_get(comment_id=3, user_id=2)
    assert got.article_title == "A title" and got.my_vote is Vote.NONE
    with pytest.raises(CommentNotFound):
        selectors.comment_get(comment_id=77)


def test_comments_of_one_second_list_newest_first_by_id_on_every_page(conn, article, now):
    # comment:10..12 sort before comment:2 as text; the listings order equal times by id.
    # Two seconds of comments, ids 1-4 a second before 5-13, pages of 4 cut both groups.
    for i in range(1, 14):
        say(article, user_id=2 if i % 2 else 3, text=f"t{i}", now=now if i < 5 else now + 1)
    newest = [f"t{i}" for i in range(13, 0, -1)]
    pages = [selectors.recent_comments(page=n, per_page=4) for n in (1, 2, 3, 4)]
    assert [c.text for p in pages for c in p.items] == newest
    assert pages[0].count == 13 and len(pages[3].items) == 1
    mine = [selectors.user_comments(user_id=2, page=n, per_page=3) for n in (1, 2, 3)]
    assert [c.text for p in mine for c in p.items] == [t for t in newest if int(t[1:]) % 2]
    feed = selectors.article_comments_feed(article_id=article, limit=5)
    assert [c.text for c in feed] == newest[:5]
    assert selectors.recent_comments(page=5, per_page=4).items == []


def test_display_depth_marks_more_and_a_focus_continues_the_thread(conn, article, settings):
    settings.ARTICLES_COMMENT_DISPLAY_DEPTH = 3
    chain = []
    parent = None
    for _ in range(6):
        parent = say(article, parent=parent).id
        chain.append(parent)
    page = selectors.comment_thread(article_id=article)
    assert [c.depth for c in page.items] == [0, 1, 2]
    assert [c.more for c in page.items] == [False, False, True]
    more = page.items[-1]
    focused = selectors.comment_thread(article_id=article, focus_id=more.id)
    assert focused.focus is not None and focused.focus.id == more.id
    assert [c.id for c in focused.items] == chain[3:5]
    assert focused.items[-1].more and focused.count == 1
    with pytest.raises(CommentNotFound):
        selectors.comment_thread(article_id=article, focus_id=999)


def test_paging_counts_top_level_comments(conn, article, settings):
    settings.ARTICLES_COMMENTS_PER_PAGE = 2
    for n in range(5):
        top = say(article, text=f"t{n}")
        say(article, parent=top.id, text=f"r{n}")
    page = selectors.comment_thread(article_id=article, order=CommentOrder.NEW, page=2)
    assert [c.text for c in page.items] == ["t2", "r2", "t1", "r1"]
    assert page.count == 5 and page.pages == 3


# --- a big thread, deleting an article -----------------------------------------------


def _big_thread(article: int) -> list[int]:
    """2,000 comments: 300 top-level, a 700-deep chain (stored depth allowing), and
    1,000 replies spread under the first top-level comments."""
    ids = [say(article, text=f"top {n}").id for n in range(300)]
    parent = ids[0]
    for _ in range(700):
        parent = say(article, parent=parent).id
        ids.append(parent)
    for n in range(1000):
        ids.append(say(article, parent=ids[1 + n % 20], user_id=3 + n % 7).id)
    return ids


def test_a_2000_comment_thread_page_is_one_round_trip(counting, conn, article, settings):  # noqa: F811
    settings.ARTICLES_COMMENT_MAX_DEPTH = 1000
    ids = _big_thread(article)
    assert len(ids) == 2000 and comments_field(conn, article) == 2000
    for order in CommentOrder:
        for focus in (None, ids[350]):
            page = None

            def read(order=order, focus=focus):
                nonlocal page
                page = selectors.comment_thread(
                    article_id=article, order=order, user_id=3, focus_id=focus
                )

            assert counting(read) == 1
            assert page is not None and 0 < len(page.items) <= 1 + 50 + 250
            assert max(c.depth - (page.focus.depth if page.focus else 0) for c in page.items) < 6
    trips = counting(lambda: services.comment_vote(comment_id=ids[5], user_id=9, vote=Vote.UP))
    assert trips == 1


def test_deleting_an_article_deletes_its_comments_and_every_key_of_them(conn, now, settings):
    settings.ARTICLES_COMMENT_MAX_DEPTH = 1000
    keep = services.article_post(
        NewPost(user_id=1, poster_name="p", title="Kept", link="https://example.org/k", now=now)
    ).id
    kept = say(keep, text="stays")
    before = set(conn.keys("*"))
    doomed = services.article_post(
        NewPost(user_id=1, poster_name="p", title="Doomed", link="https://example.org/d", now=now)
    ).id
    ids = [say(doomed).id]
    for n in range(30):
        ids.append(say(doomed, parent=ids[n // 2], user_id=2 + n % 3).id)
        services.comment_vote(comment_id=ids[-1], user_id=50, vote=Vote.UP)
    services.article_delete(article_id=doomed, actor=member_actor(1, ""))
    left = set(conn.keys("*")) - before
    assert left <= {b"article:", b"comment:", b"stats:posts", b"stats:votes"}, left
    assert conn.zrange("comments:", 0, -1) == [keys.comment(kept.id).encode()]
    assert conn.zrange("user_comments:2", 0, -1) == [keys.comment(kept.id).encode()]


# --- bad data ------------------------------------------------------------------------


def test_a_key_of_the_wrong_type_refuses_a_write_that_changes_nothing(conn, article):
    top = say(article)
    conn.set("replies_new:1", "not a zset")
    with pytest.raises(StoreCorrupt) as caught:
        say(article, parent=top.id)
    assert caught.value.key == "replies_new:1" and caught.value.status_code == 503
    assert conn.hget("comment:1", "replies") == b"0" and comments_field(conn, article) == 1
    assert not conn.exists("comment:2")
    conn.set("comment_voted:1", "x")
    with pytest.raises(StoreCorrupt):
        services.comment_vote(comment_id=top.id, user_id=4, vote=Vote.UP)
    assert conn.hget("comment:1", "votes") == b"0"


def test_a_thread_reads_past_a_key_of_the_wrong_type(conn, article):
    top = say(article, text="top")
    say(article, parent=top.id, text="reply")
    other = say(article, text="other")
    conn.delete("replies:1")
    conn.set("replies:1", "junk")
    conn.set(keys.comment_voted(other.id), "junk")
    page = selectors.comment_thread(article_id=article, user_id=3)
    assert sorted(c.text for c in page.items) == ["other", "top"]


def test_comments_on_an_article_the_books_code_posted(conn):
    from bench import book

    article_id = int(book.post_article(conn, "user:1", "Book one", "http://example.com/1"))
    assert selectors.article_get(article_id=article_id).comments == 0  # no such field
    c = say(article_id)
    services.comment_vote(comment_id=c.id, user_id=4, vote=Vote.UP)
    page = selectors.comment_thread(article_id=article_id)
    assert page.article.comments == 1 and [x.votes for x in page.items] == [1]
    book.article_vote(conn, "user:5", keys.article(article_id))  # the book's code still votes
    assert selectors.article_get(article_id=article_id).comments == 1
