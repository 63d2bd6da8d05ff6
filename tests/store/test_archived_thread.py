"""An archived article's thread page: the same pages as before it was archived (roots,
replies depth-first within the row budget and the display depth, `more` where replies
were left out, focus pages), read a level at a time, never the whole thread."""

from __future__ import annotations

import random
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from articles.models import ArchivedComment
from articles.store import archive, selectors, services
from articles.types import CommentOrder, Vote
from tests.actors import member_actor
from tests.factories import article, comment
from tests.store.test_archive import LATER, archiving  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db(transaction=False)


@pytest.fixture
def small_pages(settings):  # type: ignore[no-untyped-def]
    """Pages small enough that a thread of ~60 comments meets every limit."""
    settings.ARTICLES_COMMENTS_PER_PAGE = 4
    settings.ARTICLES_COMMENT_PAGE_ROWS = 7
    settings.ARTICLES_COMMENT_DISPLAY_DEPTH = 3
    return settings


def thread_of(now: float) -> tuple[int, list[int]]:
    """An article posted 10 hours ago with 11 roots, replies up to depth 4 (one root with
    9 replies), votes that order them with ties, and one deleted comment kept as a
    tombstone for its reply."""
    t = int(now) - 10 * 3600
    a = article(100, title="A long thread", link="https://ex.org/t", now=t).id
    rng = random.Random(3)
    ids: list[int] = []
    for i in range(11):
        ids.append(comment(200 + i, a, f"Root {i}", now=t + 10 + i).id)
    parents = [ids[0]] * 9 + [ids[1], ids[1], ids[3]]
    for n, parent in enumerate(parents):
        ids.append(comment(300 + n, a, f"Reply {n}", parent_id=parent, now=t + 100 + n).id)
    for n in range(20):  # deeper: replies of replies, down to depth 4
        parent = rng.choice(ids[11:])
        ids.append(comment(400 + n, a, f"Deep {n}", parent_id=parent, now=t + 200 + n).id)
    for n, cid in enumerate(ids):
        for voter in range(n % 4):  # 0-3 votes each: many ties
            services.comment_vote(comment_id=cid, user_id=900 + voter, vote=Vote.UP, now=t + 400)
    deleted = next(i for i in ids[11:] if selectors.comment_thread(article_id=a, focus_id=i).items)
    services.comment_delete(comment_id=deleted, actor=member_actor(_author(deleted), ""))
    return a, ids


def _author(comment_id: int) -> int:
    return int(selectors.comment_get(comment_id=comment_id).author.removeprefix("user:"))


def pages(article_id: int, ids: list[int]) -> dict[str, object]:
    shown: dict[str, object] = {}
    for order in CommentOrder:
        for number in (1, 2, 3, 4):
            page = selectors.comment_thread(article_id=article_id, order=order, page=number)
            shown[f"{order.value}-{number}"] = (page.items, page.count)
        for focus in ids[:2] + ids[11:14] + ids[-3:]:
            page = selectors.comment_thread(article_id=article_id, order=order, focus_id=focus)
            shown[f"{order.value}-focus-{focus}"] = (page.focus, page.items, page.count)
    return shown


def test_an_archived_thread_shows_every_page_as_before(archiving, small_pages, conn):  # noqa: F811
    now = time.time()
    article_id, ids = thread_of(now)
    before = pages(article_id, ids)
    shown = [item for page in before.values() for item in page[-2]]  # type: ignore[index]
    assert any(item.more for item in shown)  # the budget and the depth left replies out
    assert archive.archive(now=now + LATER).archived == 1
    assert ArchivedComment.objects.count() == len(ids)
    after = pages(article_id, ids)
    for name, shown in before.items():
        assert after[name] == shown, name


def test_an_archived_thread_page_reads_by_level_not_the_whole_thread(
    archiving,  # noqa: F811
    small_pages,
    conn,
):
    """Every query of the thread's comments names the parents it reads (a level), the
    page's roots are a LIMIT, and their number stays within the display depth: the rows
    read follow the page, whatever the size of the thread."""
    now = time.time()
    article_id, _ = thread_of(now)
    archive.archive(now=now + LATER)
    with CaptureQueriesContext(connection) as queries:
        page = selectors.comment_thread(article_id=article_id, order=CommentOrder.BEST)
    assert page.items and page.count == 11
    reads = [q["sql"] for q in queries if "archivedcomment" in q["sql"]]
    assert all('"parent"' in sql for sql in reads), reads
    assert any("LIMIT 4" in sql for sql in reads), reads
    assert len(reads) <= 2 + 3 * small_pages.ARTICLES_COMMENT_DISPLAY_DEPTH
