"""Archiving (ARTICLES_ARCHIVE_AFTER): closed articles move to the database and every read
shows them as before; writes to them are refused clearly; a crash between the database
and the Redis step loses nothing; each Redis step is bounded."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from articles.errors import ArticleArchived, ArticleNotFound, VotingClosed
from articles.models import ArchivedArticle, ArchivedComment, ArchivedWord
from articles.operations import audit
from articles.store import archive, keys, scripts, selectors, services
from articles.types import CommentOrder, Order, Period, SearchOrder, Vote
from tests.actors import staff_actor
from tests.factories import article, comment, group

pytestmark = pytest.mark.django_db(transaction=False)

WEEK = 604_800
DAY = 86_400
LATER = WEEK - 60  # archive(now=now + LATER): a week after all but the newest article


@pytest.fixture
def archiving(settings):  # type: ignore[no-untyped-def]
    settings.ARTICLES_ARCHIVE_AFTER = WEEK
    return settings


def old_store(now: float, articles: int = 6) -> dict[str, Any]:
    """Articles posted 4-10 hours ago, with votes, groups, words and a thread of comments
    on the first; one article posted now. Votes take Redis' clock, so the archive is run
    a week later instead (LATER: all but the one posted now are closed then)."""
    group("redis")
    posted = []
    for i in range(articles):
        t = int(now) - 10 * 3600 + i * 3600
        a = article(
            100 + i,
            title=f"Redis tutorial number {i} alpha",
            link=f"https://ex{i}.org/p",
            text="sorted sets and hashes" if i % 2 else "plain words only",
            groups=["redis"] if i % 3 == 0 else [],
            now=t,
        )
        for voter in range(i):
            services.article_vote(
                article_id=a.id, user_id=500 + voter, direction=Vote.UP, now=t + 60
            )
        posted.append((a.id, t))
    first, t0 = posted[0]
    c1 = comment(7, first, "First comment words", now=t0 + 100)
    c2 = comment(8, first, "Second comment", now=t0 + 200)
    r1 = comment(9, first, "A reply", parent_id=c1.id, now=t0 + 300)
    comment(10, first, "A reply to the reply", parent_id=r1.id, now=t0 + 400)
    services.comment_vote(comment_id=c2.id, user_id=11, vote=Vote.UP, now=t0 + 500)
    fresh = article(200, title="Redis fresh news alpha", link="https://new.org/x", now=int(now))
    return {"ids": [i for i, _ in posted], "first": first, "fresh": fresh.id, "c1": c1.id}


def surfaces(ids: dict[str, Any]) -> dict[str, Any]:
    """What every read shows, with the archive flag cleared (the one field that differs)."""

    def plain(x: Any) -> Any:
        if dataclasses.is_dataclass(x) and hasattr(x, "archived"):
            return dataclasses.replace(x, archived=False)
        if isinstance(x, list | tuple):
            return [plain(i) for i in x]
        return x

    first = ids["first"]
    shown: dict[str, Any] = {}
    for order in Order:
        shown[f"list-{order}"] = plain(selectors.article_list(order=order).items)
        shown[f"group-{order}"] = plain(
            selectors.group_article_list(name="redis", order=order).items
        )
    for period in Period:
        shown[f"top-{period}"] = plain(selectors.top_article_list(period=period).items)
    shown["user"] = plain(selectors.user_article_list(poster_id=100).items)
    shown["front"] = plain(selectors.front_page().rising)
    shown["one"] = plain(selectors.article_get(article_id=first))
    for order in CommentOrder:
        thread = selectors.comment_thread(article_id=first, order=order)
        shown[f"thread-{order}"] = (plain(thread.article), thread.items, thread.count)
    focus = selectors.comment_thread(article_id=first, focus_id=ids["c1"])
    shown["focus"] = (focus.focus, focus.items)
    shown["comment"] = selectors.comment_get(comment_id=ids["c1"])
    shown["recent"] = selectors.recent_comments().items
    shown["user-comments"] = selectors.user_comments(user_id=9).items
    shown["feed"] = selectors.article_comments_feed(article_id=first)
    for pk in (100, 7, 9):
        inbox = selectors.inbox_page(user_id=pk)
        shown[f"inbox-{pk}"] = (inbox.items, inbox.count, inbox.unread)
    for order in SearchOrder:
        for q in ("redis", "sorted", "alpha -plain", "tutorial"):
            found = selectors.article_search(q=q, order=order)
            shown[f"search-{order}-{q}"] = (plain(found.items), found.count)
        found = selectors.article_search(q="redis", order=order, group="redis")
        shown[f"search-group-{order}"] = (plain(found.items), found.count)
    for q in ("comment", "reply", "comment -second"):
        found = selectors.comment_search(q=q)
        shown[f"comment-search-{q}"] = (found.items, found.count)
    shown["karma"] = selectors.user_karmas(user_id=105)
    return shown


@pytest.mark.parametrize("chunk", [archive.READ_CHUNK, 3])
def test_every_read_shows_archived_articles_as_before(archiving, conn, monkeypatch, chunk):
    """Ensure every read shows archived articles and comments as it did their hashes; with
    `chunk` 3 the first article's 4 comments are read in two steps of the batch's thread
    reads (READ_CHUNK)."""
    monkeypatch.setattr(archive, "READ_CHUNK", chunk)
    now = time.time()
    ids = old_store(now)
    before = surfaces(ids)
    done = archive.archive(now=now + LATER)
    assert done.archived == 6 and done.changed == 0
    for article_id in ids["ids"]:
        assert not conn.exists(keys.article(article_id))
        assert conn.zscore(keys.SCORE, keys.article(article_id)) is not None
    assert conn.exists(keys.article(ids["fresh"]))
    assert not conn.exists(keys.comment(ids["c1"]), keys.article_comments_all(ids["first"]))
    assert not conn.smembers(keys.ARCHIVE)
    assert not conn.sismember(keys.postings("sort"), ids["ids"][1])
    assert ArchivedArticle.objects.count() == 6 and ArchivedComment.objects.count() == 4
    after = surfaces(ids)
    for name in before:
        assert after[name] == before[name], name
    assert selectors.article_get(article_id=ids["first"]).archived
    assert after["inbox-100"][1] == 2 and after["inbox-7"][1] == 1
    assert after["comment-search-comment"][1] == 2


def test_archiving_is_idempotent_and_a_crash_after_the_rows_loses_nothing(archiving, conn):
    now = time.time()
    ids = old_store(now, articles=3)
    before = surfaces(ids)
    reads, _, _ = archive._next_batch(conn, now - 60, 50, float("-inf"), 0)
    archive._write_rows(conn, reads)  # the database half only: then the process dies
    assert ArchivedArticle.objects.count() == 3
    assert surfaces(ids) == before  # the hashes are still read
    assert conn.exists(keys.article(ids["first"]))
    assert {p.kind for p in audit.invariant_audit()} == {"archive_unfinished"}
    done = archive.archive(now=now + LATER)
    assert done.archived == 3
    assert audit.invariant_audit() == []
    assert surfaces(ids) == before
    assert archive.archive(now=now + LATER).archived == 0  # nothing left: a re-run does nothing
    assert ArchivedWord.objects.filter(word="sort").count() == 1


def test_an_article_changed_since_it_was_read_is_not_archived(archiving, conn):
    now = time.time()
    ids = old_store(now, articles=2)
    reads, times, _ = archive._next_batch(conn, now - 60, 50, float("-inf"), 0)
    archive._write_rows(conn, reads)
    conn.hset(keys.article(ids["first"]), "title", "Edited by staff meanwhile")
    assert archive._redis_step(conn, reads, times[-1]) == [0, 1]
    assert conn.hget(keys.article(ids["first"]), "title") == b"Edited by staff meanwhile"


def test_writes_to_an_archived_article_are_refused_clearly(archiving, conn):
    now = time.time()
    ids = old_store(now, articles=2)
    archive.archive(now=now + LATER)
    first = ids["first"]
    with pytest.raises(VotingClosed):
        services.article_vote(article_id=first, user_id=77, direction=Vote.UP)
    with pytest.raises(ArticleArchived):
        comment(77, first, "Too late")
    with pytest.raises(ArticleArchived):
        comment(77, first, "Too late", parent_id=ids["c1"])
    with pytest.raises(ArticleArchived):
        services.article_edit(article_id=first, actor=staff_actor("mod"), title="New", reason="x")
    with pytest.raises(VotingClosed):
        services.comment_vote(comment_id=ids["c1"], user_id=77, vote=Vote.UP)
    with pytest.raises(ArticleArchived):
        services.comment_remove(comment_id=ids["c1"], actor=staff_actor("mod"), reason="spam")


def test_readers_still_hide_and_save_archived_articles_and_comments(archiving, conn):
    now = time.time()
    ids = old_store(now, articles=2)
    archive.archive(now=now + LATER)
    first = ids["first"]
    assert services.article_hide(article_id=first, user_id=70)
    assert first not in [a.id for a in selectors.article_list(user_id=70).items]
    assert services.article_save(article_id=first, user_id=70)
    assert services.comment_save(comment_id=ids["c1"], user_id=70)
    assert [a.id for a in selectors.saved_article_list(user_id=70).items] == [first]
    assert [c.id for c in selectors.saved_comment_list(user_id=70).items] == [ids["c1"]]
    with pytest.raises(ArticleNotFound):
        services.article_save(article_id=first + 100, user_id=70)


def test_staff_delete_an_archived_article_from_rankings_and_database(archiving, conn):
    now = time.time()
    ids = old_store(now, articles=1)
    archive.archive(now=now + LATER)
    first = ids["first"]
    services.article_delete(article_id=first, actor=staff_actor("mod"), reason="Spam")
    assert not ArchivedArticle.objects.filter(id=first).exists()
    assert not ArchivedComment.objects.filter(article_id=first).exists()
    for key in (keys.SCORE, keys.TIME, keys.VOTES, keys.submitted(100)):
        assert conn.zscore(key, keys.article(first)) is None
    assert first not in [a.id for a in selectors.article_list().items]
    assert not conn.get(keys.comment_karma(8)) or int(conn.get(keys.comment_karma(8))) == 0
    assert not conn.exists(keys.inbox(100), keys.inbox_state(100), keys.inbox(7))
    assert conn.zcard(keys.COMMENTS) == 0 and not conn.exists(keys.user_comments(9))
    assert audit.invariant_audit() == []


def test_the_audit_is_clean_after_archiving(archiving):
    now = time.time()
    old_store(now)
    archive.archive(now=now + LATER)
    assert audit.invariant_audit() == []


def test_a_nul_in_a_hash_is_archived_as_the_pages_show_it(archiving, conn):
    """PostgreSQL refuses a NUL in text: the row holds what the page shows instead."""
    now = time.time()
    a = article(1, title="Nul", link="https://nul.org/", now=int(now) - 3600)
    conn.hset(keys.article(a.id), "text", "before\x00after")
    assert archive.archive(now=now + LATER).archived == 1
    assert selectors.article_get(article_id=a.id).text == "before\ufffdafter"


def test_many_articles_posted_in_one_second_are_all_archived(archiving, conn):
    """Post times are whole seconds: more articles than a batch may share one."""
    now = time.time()
    for i in range(15):
        article(1, title=f"Same second {i}", link=f"https://s{i}.org/", now=int(now) - 3600)
    article(1, title="Next second", link="https://next.org/", now=int(now) - 3599)
    assert archive.archive(now=now + LATER, batch=4, dry_run=True).archived == 16
    done = archive.archive(now=now + LATER, batch=4)
    assert (done.archived, done.changed) == (16, 0)
    assert ArchivedArticle.objects.count() == 16
    assert archive.archive(now=now + LATER, batch=4).archived == 0


@pytest.mark.parametrize("step", [archive.STEP, 1])
def test_a_changed_article_is_read_again_in_the_same_run(archiving, conn, monkeypatch, step):
    """Ensure an article changed between its read and its Redis step is archived again,
    also when later steps of its batch have moved archive:at past it (`step` 1)."""
    now = time.time()
    ids = old_store(now, articles=3)
    write_rows = archive._write_rows
    changed = []

    def meanwhile(conn, found):  # type: ignore[no-untyped-def]
        write_rows(conn, found)
        if not changed:  # a staff edit lands between the read and the Redis step
            services.article_edit(
                article_id=ids["first"], title="Edited meanwhile", actor=staff_actor("s")
            )
            changed.append(1)

    monkeypatch.setattr(archive, "_write_rows", meanwhile)
    done = archive.archive(now=now + LATER, step=step)
    assert (done.archived, done.changed) == (3, 0)
    assert selectors.article_get(article_id=ids["first"]).title == "Edited meanwhile"
    assert audit.invariant_audit() == []


def test_a_dry_run_changes_nothing(archiving, conn):
    now = time.time()
    ids = old_store(now, articles=3)
    assert archive.archive(now=now + LATER, dry_run=True, batch=2).archived == 3
    assert conn.exists(keys.article(ids["first"])) and not ArchivedArticle.objects.exists()


def test_each_redis_step_is_bounded(archiving, conn, monkeypatch):
    """One archive.lua call a `step` of articles (its KEYS: 4 + words an article), however
    many a batch writes to the database, comments 25 a call, whatever the store holds."""
    now = time.time()
    group("redis")
    a = article(1, title="Many comments", now=int(now) - 9 * 3600)
    for i in range(60):
        comment(2 + i, a.id, f"comment {i}", now=int(now) - 9 * 3600 + 10 + i)
    for i in range(7):
        article(3, title=f"more {i}", link=f"https://m{i}.org/", now=int(now) - 9 * 3600 + 100 + i)
    calls: list[tuple[str, int, int]] = []
    for name in ("ARCHIVE", "ARCHIVE_COMMENTS"):
        script = getattr(scripts, name)
        original = script.__call__

        def spy(keys=(), args=(), client=None, _o=original, _n=name):  # type: ignore[no-untyped-def]
            calls.append((_n, len(keys), len(args)))
            return _o(keys=keys, args=args, client=client)

        monkeypatch.setattr(script, "__call__", spy, raising=False)
        monkeypatch.setattr(scripts, name, _Spy(script, spy))
    monkeypatch.setattr(archive.scripts, "ARCHIVE", scripts.ARCHIVE)
    done = archive.archive(now=now + LATER, batch=100, step=3)
    assert (done.archived, done.batches) == (8, 1)
    archives = [c for c in calls if c[0] == "ARCHIVE"]
    assert len(archives) == 3  # 3 + 3 + 2 of the one batch
    assert all(k <= 3 + 3 * (4 + 8) for _, k, _ in archives)
    assert [c[0] for c in calls].count("ARCHIVE_COMMENTS") == 3  # 60 comments, 25 a call
    assert audit.invariant_audit() == []


class _Spy:
    def __init__(self, script: Any, spy: Any) -> None:
        self.script, self.spy = script, spy

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.spy(*args, **kwargs)


def test_with_archiving_off_nothing_is_archived(settings, conn):
    now = time.time()
    ids = old_store(now, articles=2)
    assert archive.archive(now=now + LATER).archived == 0
    assert conn.exists(keys.article(ids["first"]))
