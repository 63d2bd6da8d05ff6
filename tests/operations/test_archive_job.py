"""`manage.py archive` and its setting: the system check refuses an ARTICLES_ARCHIVE_AFTER
shorter than the voting window; the command archives in batches (or counts, with
--dry-run; with archiving off it only releases closed articles' link entries:
tests/store/test_link_close.py); a listing page with archived articles keeps its round
trips."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import CommandError, call_command

from articles.models import ArchivedArticle
from articles.operations.checks import check_configuration
from articles.store import keys, selectors
from tests.factories import article

pytestmark = pytest.mark.django_db

WEEK = 604_800


def _e007(settings, value):  # type: ignore[no-untyped-def]
    settings.ARTICLES_ARCHIVE_AFTER = value
    return [m for m in check_configuration() if m.id == "articles.E007"]


@pytest.mark.parametrize("value", [3600, WEEK - 1, "two weeks", 1.5 * WEEK])
def test_the_check_refuses_a_time_shorter_than_voting_or_not_whole(settings, value):
    (error,) = _e007(settings, value)
    assert "ARTICLES_ARCHIVE_AFTER" in error.msg and str(WEEK) in error.hint


@pytest.mark.parametrize("value", [None, 0, WEEK, 30 * 86_400])
def test_the_check_takes_off_or_a_time_past_voting(settings, value):
    assert _e007(settings, value) == []


def test_the_check_wants_the_comment_window_too(settings):
    settings.ARTICLES_COMMENT_OPEN_SECONDS = 2 * WEEK
    assert _e007(settings, WEEK) and not _e007(settings, 2 * WEEK)


def test_the_command_counts_then_archives(settings, conn):
    settings.ARTICLES_ARCHIVE_AFTER = WEEK
    now = int(time.time())
    for i in range(5):
        article(1, title=f"old {i}", link=f"https://o{i}.org/", now=now - 8 * 86_400 + i)
    article(1, title="new", link="https://n.org/", now=now)
    out = io.StringIO()
    call_command("archive", "--dry-run", "--no-progress", "--batch", "2", stdout=out)
    assert "5 article(s) would be archived" in out.getvalue()
    assert not ArchivedArticle.objects.exists()
    out = io.StringIO()
    call_command("archive", "--batch", "2", stdout=out)
    assert "5 article(s) archived" in out.getvalue()
    assert ArchivedArticle.objects.count() == 5
    assert conn.exists(keys.article(6)) and not conn.exists(keys.article(1))
    assert conn.get(keys.ARCHIVE_AT) is not None
    out = io.StringIO()
    call_command("archive", "--no-progress", stdout=out)
    assert "0 article(s) archived" in out.getvalue()


def test_a_listing_page_with_archived_articles_keeps_its_round_trips(
    settings, conn, round_trips, django_assert_num_queries
):
    settings.ARTICLES_ARCHIVE_AFTER = WEEK
    now = int(time.time())
    for i in range(30):
        article(1, title=f"old {i}", link=f"https://o{i}.org/", now=now - 8 * 86_400 + i)
    selectors.article_list(page=1)  # the scripts loaded: what follows counts only the page
    before, page = round_trips(lambda: selectors.article_list(page=1))
    call_command("archive", "--no-progress", stdout=io.StringIO())
    with django_assert_num_queries(1):  # the page's archived rows, in one query
        after, archived = round_trips(lambda: selectors.article_list(page=1))
    assert after == before == 2
    assert [a.id for a in archived.items] == [a.id for a in page.items]
    with django_assert_num_queries(1):
        assert len(selectors.article_list(page=2).items) == 5


def test_a_logical_backup_of_an_archived_store_restores_every_article(settings, conn, tmp_path):
    """export_articles writes an archived article (and its comments) from its rows; the
    import puts them back in Redis, and the next archive run archives them again."""
    from articles.store import archive
    from articles.types import CommentOrder
    from tests.factories import comment

    settings.ARTICLES_ARCHIVE_AFTER = WEEK
    now = int(time.time())
    a = article(1, title="Old news", link="https://old.org/", now=now - 3600)
    c = comment(2, a.id, "Old comment", now=now - 3500)
    comment(3, a.id, "Old reply", parent_id=c.id, now=now - 3400)
    before = selectors.comment_thread(article_id=a.id, order=CommentOrder.NEW)
    assert archive.archive(now=now + WEEK).archived == 1
    backup = tmp_path / "backup.jsonl"
    call_command("export_articles", "-o", str(backup), stdout=io.StringIO(), stderr=io.StringIO())
    conn.flushall()
    call_command("import_articles", str(backup), stdout=io.StringIO(), stderr=io.StringIO())
    assert conn.hget(keys.article(a.id), "title") == b"Old news"  # in Redis again
    assert archive.archive(now=now + WEEK).archived == 1
    after = selectors.comment_thread(article_id=a.id, order=CommentOrder.NEW)
    assert [x.text for x in after.items] == [x.text for x in before.items]
    from articles.operations import audit

    assert audit.invariant_audit() == []


def test_check_votes_repair_never_removes_an_archived_article(settings, conn):
    """An archived row whose ranking entry disagrees is reported, and --repair leaves it
    for a person: it must not read as the leftover of a deleted article."""
    from articles.store import archive

    settings.ARTICLES_ARCHIVE_AFTER = WEEK
    now = int(time.time())
    a = article(1, title="Old", link="https://old.org/", now=now - 3600)
    archive.archive(now=now + WEEK)
    conn.zadd(keys.SCORE, {keys.article(a.id): 1.0})
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("check_votes", "--repair", stdout=out)
    assert "archive_wrong" in out.getvalue()
    assert conn.zscore(keys.TIME, keys.article(a.id)) is not None
    assert ArchivedArticle.objects.filter(id=a.id).exists()
