"""Archived articles (ARTICLES_ARCHIVE_AFTER) on the pages and feeds: every page shows
the same as before archiving, and writes to them are refused with a clear page."""

from __future__ import annotations

import re
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from articles.store import archive, clock, keys
from articles.store.connection import get_connection
from articles.types import Vote
from tests.factories import article, comment, group

pytestmark = pytest.mark.django_db

WEEK = 604_800
LATER = WEEK - 60


@pytest.fixture
def archived_site(settings, make_user):  # type: ignore[no-untyped-def]
    """Six articles by ann (two in a group, with words and votes) and a thread on the
    first; the app's clock a week later, when all are closed. Yields the paths to show."""
    settings.ARTICLES_ARCHIVE_AFTER = WEEK
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 0  # each request reads the store
    now = int(time.time())
    ann, bob = make_user("ann"), make_user("bob")
    group("redis")
    ids = []
    for i in range(6):
        a = article(
            ann,
            title=f"Redis tutorial {i}",
            link=f"https://ex{i}.org/p",
            text="sorted sets" if i % 2 else "plain text",
            groups=["redis"] if i % 3 == 0 else [],
            now=now - 6 * 3600 + i * 60,
        )
        ids.append(a.id)
    from articles.store import services

    services.article_vote(article_id=ids[2], user_id=bob.pk, direction=Vote.UP)
    c1 = comment(bob, ids[0], "A first comment", now=now - 3600)
    comment(ann, ids[0], "An answer", parent_id=c1.id, now=now - 1800)
    comment(bob, ids[0], "Another comment", now=now - 1700)
    clock.fix(now + LATER + 30)
    # The voter sets expire a week after each post in Redis' own time: by then, gone.
    conn = get_connection()
    conn.delete(*(k for i in ids for k in (keys.voted(i), keys.voted_down(i))))
    paths = [
        "/",
        "/new/",
        "/top/",
        *(f"/top/?period={p}" for p in ("day", "week", "month", "year")),
        "/g/redis/",
        "/g/redis/?order=time",
        "/u/ann/",
        "/u/bob/comments/",
        "/comments/",
        "/d/ex1.org/",
        f"/a/{ids[0]}/",
        f"/a/{ids[0]}/?sort=new",
        f"/c/{c1.id}/",
        *(f"/search/?q=redis&order={o}" for o in ("score", "newest", "votes")),
        "/search/?q=sorted",
        "/search/?q=redis&group=redis",
        "/feeds/new/",
        "/feeds/top/",
        "/feeds/g/redis/",
        f"/feeds/a/{ids[0]}/comments/",
        "/feeds/comments/",
        f"/feeds/u/{bob.pk}/comments/",
    ]
    yield {"now": now, "ids": ids, "c1": c1.id, "paths": paths, "bob": bob, "ann": ann}
    clock.fix(None)


def _pages(client, paths):  # type: ignore[no-untyped-def]
    shown = {}
    for path in paths:
        response = client.get(path, follow=True)
        assert response.status_code == 200, path
        # The live stream's position (a time in ms) is the one part that moves by itself.
        html = re.sub(r'="[0-9]{13}(-[0-9]+)?"', '="<live>"', response.content.decode())
        # ... and a logged-in page's CSRF token, masked afresh on every response
        shown[path] = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "csrf", html)
    return shown


def test_every_page_and_feed_shows_archived_articles_as_before(client, archived_site):
    before = _pages(client, archived_site["paths"])
    done = archive.archive(now=archived_site["now"] + LATER)
    assert done.archived == 6
    after = _pages(client, archived_site["paths"])
    for path, html in before.items():
        assert after[path] == html, path
    assert "A first comment" in after[f"/a/{archived_site['ids'][0]}/"]


def test_the_inbox_shows_replies_on_archived_articles_as_before(client, archived_site):
    client.force_login(archived_site["ann"])
    paths = ["/inbox/", "/u/bob/comments/", f"/a/{archived_site['ids'][0]}/"]
    before = _pages(client, paths)
    archive.archive(now=archived_site["now"] + LATER)
    after = _pages(client, paths)
    for path in paths:
        assert after[path] == before[path], path
    assert "A first comment" in after["/inbox/"]


def test_a_listing_page_reads_its_archived_rows_in_one_query(client, archived_site):
    archive.archive(now=archived_site["now"] + LATER)
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/new/").status_code == 200
    archived = [q for q in queries.captured_queries if "archivedarticle" in q["sql"]]
    assert len(archived) == 1


def test_writes_to_an_archived_article_are_refused_with_a_clear_page(client, archived_site):
    archive.archive(now=archived_site["now"] + LATER)
    client.force_login(archived_site["bob"])
    first = archived_site["ids"][0]
    response = client.post(f"/a/{first}/comment/", {"text": "Too late"})
    assert response.status_code == 409
    assert "This article is archived" in response.content.decode()
    response = client.post(f"/a/{first}/vote/", {"direction": "up"})
    assert response.status_code == 409
    response = client.post(f"/c/{archived_site['c1']}/edit/", {"text": "Changed"})
    assert response.status_code in (403, 409)  # its edit window closed long before
    assert "Changed" not in client.get(f"/a/{first}/").content.decode()
