"""A thread page's work inside Redis (issue 21): comment_thread.lua reads each row's
values only, and runs a command only where the hash read cannot answer (no ZCARD of a
comment with no replies, no SISMEMBER on an empty voter set); the pages it answers are
those of the plain reading (every comment's hash, its replies' count, both voter sets),
written out here in Python, for every order, page, viewer and focus, with tombstones,
removals, edits, held comments and the depth and row limits."""

from __future__ import annotations

import inspect
import random
import re
from dataclasses import dataclass, replace
from typing import Any

import pytest

from articles.errors import CommentNotFound
from articles.store import keys, selectors, services
from articles.store.selectors.comments import THREAD_FIELDS
from articles.types import Comment, CommentOrder, Vote
from tests import factories
from tests.actors import member_actor, staff_actor

VIEWER = 50


@dataclass
class Expected:
    count: int
    focus: Comment | None
    items: list[Comment]


def plain_page(
    conn: Any, article_id: int, order: CommentOrder, number: int, user_id: int | None,
    focus_id: int | None, per_page: int, depth: int, cap: int,
) -> Expected:  # fmt: skip
    """The page as the plain reading gives it: the page of the root ordering, under each
    row its replies (ZCARD, then ZREVRANGE within what the cap leaves) down to `depth`
    levels, each row's whole hash (HGETALL) and the viewer's membership of both voter
    sets; `more` where replies were left out."""
    new = order is CommentOrder.NEW
    prefix = "replies_new:" if new else "replies:"
    viewer = keys.user(user_id) if user_id else ""
    budget = cap
    rows: list[Comment] = []

    def row(cid: int, more: bool, fields: dict[bytes, bytes]) -> Comment:
        vote = None
        if viewer:
            up = conn.sismember(keys.comment_voted(cid), viewer)
            down = conn.sismember(keys.comment_voted_down(cid), viewer)
            vote = Vote.UP if up else Vote.DOWN if down else Vote.NONE
        return Comment.from_hash(cid, fields, my_vote=vote, more=more)

    def emit(member: bytes, level: int) -> None:
        nonlocal budget
        cid = keys.comment_id_of(member.decode())
        fields = conn.hgetall(member)
        if not fields:
            return
        at = len(rows)
        rows.append(row(cid, False, fields))
        count = conn.zcard(f"{prefix}{cid}")
        if count == 0:
            return
        if level + 1 >= depth or budget <= 0:
            rows[at] = row(cid, True, fields)
            return
        kids = conn.zrevrange(f"{prefix}{cid}", 0, budget - 1)
        budget -= len(kids)
        if len(kids) < count:
            rows[at] = row(cid, True, fields)
        for kid in kids:
            emit(kid, level + 1)

    if focus_id is not None:
        root = f"{prefix}{focus_id}"
        rows.append(row(focus_id, False, conn.hgetall(keys.comment(focus_id))))
    else:
        root = keys.article_comments_new(article_id) if new else keys.article_comments(article_id)
    start = (number - 1) * per_page
    for member in conn.zrevrange(root, start, start + per_page - 1):
        emit(member, 1 if focus_id is not None else 0)
    focus = rows.pop(0) if focus_id is not None else None
    return Expected(conn.zcard(root), focus, rows)


def shaped_thread(now: float, settings: Any) -> tuple[int, list[int]]:
    """An article with 40 comments of every kind: 9 top-level, replies to depth 5,
    votes of the viewer and others, an edit, a tombstone by its author and one by staff
    (each with replies), a leaf deleted away, a held comment."""
    settings.ARTICLES_FLAG_THRESHOLD = 1
    article = factories.article(1, title="Shapes", now=now - 600).id
    rng = random.Random(21)
    ids: list[int] = []
    depth: dict[int, int] = {}
    for n in range(40):
        parents = [c for c in ids if depth[c] < 5]
        parent = None if n < 9 or rng.random() < 0.1 else rng.choice(parents)
        made = factories.comment(2 + n % 4, article, f"Comment {n} *words*", parent)
        ids.append(made.id)
        depth[made.id] = made.depth
    for cid in rng.sample(ids, 20):
        for voter in (VIEWER, 60, 61):
            pick = rng.random()
            if pick < 0.7:
                vote = Vote.UP if pick < 0.5 else Vote.DOWN
                services.comment_vote(comment_id=cid, user_id=voter, vote=vote)
    services.comment_edit(comment_id=ids[9], actor=member_actor(3), text="Edited words")
    services.comment_delete(comment_id=ids[0], actor=member_actor(2))
    services.comment_remove(comment_id=ids[1], actor=staff_actor("mod"), reason="Rude")
    leaf = next(c for c in reversed(ids) if selectors.comment_get(comment_id=c).replies == 0)
    services.comment_delete(comment_id=leaf, actor=member_actor(2 + (leaf - 1) % 4))
    services.item_flag(kind="comment", item_id=ids[5], actor=member_actor(70), reason="spam")
    return article, ids


@pytest.mark.parametrize(
    "per_page, cap, depth", [(50, 250, 6), (4, 7, 3), (3, 1, 1), (2, 5, 2), (9, 40, 5)]
)
def test_every_page_is_the_plain_readings_page(conn, now, settings, per_page, cap, depth):
    settings.ARTICLES_COMMENTS_PER_PAGE = per_page
    settings.ARTICLES_COMMENT_PAGE_ROWS = cap
    settings.ARTICLES_COMMENT_DISPLAY_DEPTH = depth
    article, ids = shaped_thread(now, settings)
    held = selectors.comment_get(comment_id=ids[5])
    assert held.held and selectors.comment_get(comment_id=ids[1]).reason == "Rude"
    with_replies = [c for c in ids if conn.hget(keys.comment(c), "replies") not in (None, b"0")]
    kept = [c for c in ids if conn.exists(keys.comment(c))]
    seen = set()
    for order in CommentOrder:
        for user_id in (None, VIEWER, 2):
            for focus_id in (None, ids[0], ids[1], with_replies[-1], kept[-1]):
                for number in (1, 2, 3, 4):
                    page = selectors.comment_thread(
                        article_id=article, order=order, page=number, user_id=user_id,
                        focus_id=focus_id,
                    )  # fmt: skip
                    plain = plain_page(
                        conn, article, order, number, user_id, focus_id, per_page, depth, cap
                    )
                    assert (page.count, page.focus, page.items) == (
                        plain.count, plain.focus, plain.items
                    ), (order, user_id, focus_id, number)  # fmt: skip
                    shown = selectors.article_get(article_id=article, user_id=user_id)
                    assert page.article == shown
                    seen.update((c.state, c.more, c.my_vote, c.held) for c in page.items)
    states = {s for s, *_ in seen}
    assert states == {"", "deleted", "removed"}
    if cap < 40:  # replies left out somewhere
        assert {m for _, m, *_ in seen} == {True, False}
    assert {v for *_, v, _ in seen} >= {None, Vote.UP, Vote.DOWN, Vote.NONE}
    assert any(h for *_, h in seen)


def test_a_focus_of_another_article_or_gone_is_not_found(conn, now, settings):
    article, ids = shaped_thread(now, settings)
    other = factories.article(1, title="Other", link="https://example.org/o", now=now).id
    for focus in (ids[3], 99_999):
        target = other if focus == ids[3] else article
        with pytest.raises(CommentNotFound):
            selectors.comment_thread(article_id=target, focus_id=focus)


def test_a_thread_row_reads_every_field_a_comment_is_decoded_from(conn, now, settings):
    """THREAD_FIELDS are the fields Comment.from_hash reads, so a thread's comment is the
    comment as read whole (held, edited and removed ones too)."""
    decoded = re.findall(r'raw(?:, |\.get\(b)"(\w+)"', inspect.getsource(Comment.from_hash))
    assert set(decoded) == set(THREAD_FIELDS) and len(THREAD_FIELDS) == len(set(THREAD_FIELDS))
    article, ids = shaped_thread(now, settings)
    shown = {c.id: c for c in selectors.comment_thread(article_id=article).items}
    for cid in (ids[1], ids[5], ids[9]):
        whole = selectors.comment_get(comment_id=cid)
        assert shown[cid] == replace(whole, article_title="", more=False)


def test_a_page_reads_past_bad_keys_and_counts_as_it_did(conn, now, settings):
    """A comment key of the wrong type is left out, a voter set of the wrong type reads
    as no vote, and a hash without its `replies` count still lists its replies."""
    article = factories.article(1, title="Bad keys", now=now).id
    top = factories.comment(2, article, "top")
    factories.comment(2, article, "reply", top.id)
    other = factories.comment(2, article, "other")
    gone = factories.comment(2, article, "gone")
    services.comment_vote(comment_id=other.id, user_id=3, vote=Vote.UP)
    services.comment_vote(comment_id=top.id, user_id=4, vote=Vote.DOWN)
    conn.delete(keys.comment(gone.id), keys.comment_voted(other.id))
    conn.set(keys.comment(gone.id), "junk")
    conn.set(keys.comment_voted(other.id), "junk")
    conn.hdel(keys.comment(top.id), "replies")
    for order in CommentOrder:
        page = selectors.comment_thread(article_id=article, user_id=3, order=order)
        shown = {c.text: (c.votes, c.downvotes, c.my_vote, c.more) for c in page.items}
        assert shown == {
            "top": (0, 1, Vote.NONE, False),
            "reply": (0, 0, Vote.NONE, False),
            "other": (1, 0, Vote.NONE, False),
        }
        texts = [c.text for c in page.items]
        assert texts.index("reply") == texts.index("top") + 1


# --- the work of a page ----------------------------------------------------------------


def big_thread(now: float, top: int = 50, comments: int = 600) -> int:
    """bench.comments' shape: `top` top-level comments, the rest replies to random
    earlier ones no deeper than 5, a third of them voted on (the viewer among others)."""
    article = factories.article(1, title="Many", now=now - 600).id
    rng = random.Random(12)
    ids: list[int] = []
    depth: dict[int, int] = {}
    for n in range(comments):
        parents = [c for c in ids if depth[c] < 5]
        parent = None if n < top else rng.choice(parents)
        made = factories.comment(1 + n % 97, article, f"Comment {n} with some words.", parent)
        ids.append(made.id)
        depth[made.id] = made.depth
    for cid in rng.sample(ids, len(ids) // 3):
        for voter in range(rng.randint(1, 4)):
            vote = Vote.UP if rng.random() < 0.85 else Vote.DOWN
            services.comment_vote(comment_id=cid, user_id=VIEWER + voter, vote=vote)
    return article


def commands_of(conn: Any, read: Any) -> tuple[Any, dict[str, int]]:
    """What `read` returned and the commands it ran inside Redis, by name (INFO
    commandstats; the scripts already loaded)."""
    read()
    conn.config_resetstat()
    result = read()
    stats = conn.info("commandstats")
    ran = {
        name.removeprefix("cmdstat_"): int(s["calls"])
        for name, s in stats.items()
        if name not in ("cmdstat_evalsha", "cmdstat_info", "cmdstat_config|resetstat")
    }
    return result, ran


@pytest.mark.parametrize("user_id", [None, VIEWER])
def test_a_page_runs_a_command_a_row_plus_one_for_each_row_whose_replies_it_lists(
    conn, now, user_id
):
    """The first page of a 600-comment thread (50 top-level rows and 250 replies): one
    HMGET a row, one ZREVRANGE a row whose replies show, a ZCARD only where replies are
    left out, a SISMEMBER only on a voter set that holds someone. The plain reading ran
    HGETALL and ZCARD on every row, and both SISMEMBERs for a viewer: 2.4 commands a row
    anonymous, 4.4 logged in, each row's field names crossing into Lua and out."""
    article = big_thread(now)
    page, ran = commands_of(
        conn, lambda: selectors.comment_thread(article_id=article, user_id=user_id)
    )
    rows = len(page.items)
    parents = {c.parent_id for c in page.items}
    listed = sum(1 for c in page.items if c.id in parents)
    more = sum(1 for c in page.items if c.more)
    voted = sum((c.votes > 0) + (c.downvotes > 0) for c in page.items)
    assert rows == 300 and 50 < listed < rows and more > 0
    assert ran.get("hgetall") == 1  # the article's, not a row's
    assert ran.get("hmget") == rows
    assert ran.get("zrevrange") <= 1 + listed
    assert ran.get("zcard", 0) <= 2 + more  # the root's, at most one row the cap ends at
    assert ran.get("sismember", 0) == (2 + voted if user_id else 0)
    assert sum(ran.values()) - ran.get("sismember", 0) <= 1.6 * rows
