"""The release of closed articles' duplicate-link entries (archive.links_close, run by
`manage.py archive`): a closed article's link may be posted again, so only the open
articles stay in links:<b>; the walk goes on from where it stopped, and refuses a batch
whose frontier or links changed since it was read."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from articles.errors import StoreCorrupt
from articles.operations import audit
from articles.store import archive, keys, scripts
from articles.types import Status
from tests import factories, links

DAY = 86_400


@pytest.fixture
def store(conn, now):
    """Three closed articles with links, one closed without, two open ones."""
    for i in range(3):
        factories.article(1, title=f"old {i}", link=f"https://o{i}.org/", now=now - 8 * DAY + i)
    factories.article(2, title="Ask: old", link="", text="A question", now=now - 8 * DAY + 5)
    factories.article(3, title="new", link="https://n.org/", now=now)
    factories.article(3, title="newer", link="https://m.org/", now=now + 1)
    return conn


def test_closed_articles_leave_the_index_and_open_ones_stay(store, now):
    assert len(links.entries(store)) == 5
    assert archive.links_close(now=now + 2, batch=2, limit=3) == (3, 3)  # at most 3
    assert archive.links_close(now=now + 2, batch=2) == (1, 0)
    assert links.entries(store) == links.index_of(
        {"http://n.org": "article:5", "http://m.org": "article:6"}
    )
    assert archive.links_close(now=now + 2) == (0, 0)  # on from where it stopped
    assert store.get(keys.LINKS_CLOSED) == f"{now - 8 * DAY + 5} article:4".encode()
    # a closed article's link is posted again as before, and is a duplicate while open
    again = factories.article(4, title="again", link="https://o1.org", now=now + 3)
    assert links.held(store, "http://o1.org") == keys.article(again.id)
    # once open articles close too, they go; the audit finds nothing wrong throughout
    assert archive.links_close(now=now + 8 * DAY) == (3, 3) and links.entries(store) == {}
    assert not [p for p in audit.invariant_audit(now=now + 8 * DAY) if p.kind in audit.INDEX_KINDS]


def test_an_entry_a_newer_post_took_is_kept(conn, now):
    factories.article(1, title="old", link="https://o.org/", now=now - 8 * DAY)
    newer = factories.article(2, title="newer", link="https://o.org", now=now)
    assert archive.links_close(now=now) == (1, 0)
    assert links.held(conn, "http://o.org") == keys.article(newer.id)


def test_a_batch_read_before_a_change_is_refused(store, now):
    """The "close" step checks the frontier and every link it was read with."""
    due = scripts.LINK_CLOSE(
        keys=[keys.TIME, keys.LINKS_CLOSED], args=["due", now, 1], client=store
    )
    assert due[1:] == [b"", b"article:1", b"https://o0.org/", str(now - 8 * DAY).encode()]
    bucket, field = keys.link_slot("http://o0.org")
    close = {"keys": [keys.TIME, keys.LINKS_CLOSED, bucket], "client": store}
    frontier = f"{now - 8 * DAY} article:1"
    changed_link = ["close", "", frontier, "article:1", "https://other.org/", field]
    moved_frontier = ["close", "0 article:9", frontier, "article:1", "https://o0.org/", field]
    for args in (changed_link, moved_frontier):
        assert Status(int(scripts.LINK_CLOSE(args=args, **close)[0])) is Status.RETRY
    assert len(links.entries(store)) == 5 and store.get(keys.LINKS_CLOSED) is None
    reply = scripts.LINK_CLOSE(
        args=["close", "", frontier, "article:1", "https://o0.org/", field], **close
    )
    assert reply == [Status.OK, 1] and store.get(keys.LINKS_CLOSED) == frontier.encode()


def test_a_malformed_frontier_is_reported_and_deleted_by_the_repair(store, now):
    store.set(keys.LINKS_CLOSED, "yesterday")
    with pytest.raises(StoreCorrupt, match="links:closed"):
        archive.links_close(now=now)
    (found,) = [p for p in audit.invariant_audit(now=now) if p.kind == "link_frontier"]
    assert "not a position in time:" in found.detail
    call_command("check_votes", "--repair", stdout=io.StringIO())
    assert not store.exists(keys.LINKS_CLOSED)
    assert archive.links_close(now=now) == (4, 3)  # walked from the start again


def test_the_archive_command_releases_them_with_archiving_off(store, settings):
    settings.ARTICLES_ARCHIVE_AFTER = None
    out = io.StringIO()
    call_command("archive", "--no-progress", stdout=out)
    assert "3 link entries of closed articles released (4 closed article(s)" in out.getvalue()
    assert "Archiving is off" in out.getvalue() and len(links.entries(store)) == 2
