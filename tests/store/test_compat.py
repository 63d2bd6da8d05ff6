"""The book's own code (Redis in Action ch. 1, in redis-py 3+ spelling: bench/book.py)
and the store read and write the same keys."""

from __future__ import annotations

import time

import pytest

from articles.operations import audit
from articles.store import selectors, services
from articles.types import NewPost, Order, Vote
from bench import book
from tests import links
from tests.actors import staff_actor

# --- book writes, store reads ----------------------------------------------------------


@pytest.fixture
def book_data(conn):
    first = book.post_article(conn, "user:1", "Book one", "http://example.com/1")
    second = book.post_article(conn, "user:2", "Book two", "http://example.com/2")
    for voter in ("user:3", "user:4"):
        book.article_vote(conn, voter, "article:" + first)
    book.add_remove_groups(conn, first, ("programming",))
    book.add_remove_groups(conn, second, ("programming", "redis"))
    return int(first), int(second)


def test_the_store_serves_what_the_books_code_wrote(conn, book_data):
    first, second = book_data
    [top, other] = selectors.article_list(order=Order.SCORE).items
    assert (top.id, other.id) == (first, second)
    assert (top.title, top.link, top.poster, top.poster_name) == (
        "Book one",
        "http://example.com/1",
        "user:1",
        "user:1",
    )
    assert isinstance(top.time, float) and top.votes == 3 and top.downvotes == 0
    assert top.score == conn.zscore("score:", "article:1")
    assert [a.id for a in selectors.article_list(order=Order.TIME).items] == [second, first]
    page = selectors.group_article_list(name="programming")
    assert [a.id for a in page.items] == [first, second]


def test_the_store_votes_on_a_book_article_without_double_counting(conn, book_data):
    first, _ = book_data
    again = services.article_vote(article_id=first, user_id=3, direction=Vote.UP)
    assert again.votes == 3 and again.my_vote is Vote.UP
    down = services.article_vote(article_id=first, user_id=3, direction=Vote.DOWN)
    assert (down.votes, down.downvotes) == (2, 1)
    posted = float(conn.hget("article:1", "time"))
    assert conn.zscore("score:", "article:1") == pytest.approx(posted + 432 * (2 - 1))


def test_the_audit_repairs_what_the_books_code_leaves_out(conn, book_data):
    kinds = {p.kind for p in audit.invariant_audit()}
    # The book keeps no `groups` field, no registry, no duplicate-link index, no list of
    # each poster's articles, no net-vote index (votes:) and does not index words for
    # search; everything else it writes holds.
    assert kinds == {
        "groups_field",
        "unregistered_group",
        "link_unindexed",
        "unsubmitted",
        "search_unindexed",
        "net_votes",
        "domain_unindexed",  # nor the sites' indexes (domain:<d>)
    }
    from django.core.management import call_command

    call_command("check_votes", "--repair")
    assert audit.invariant_audit() == []
    assert [g.name for g in selectors.group_list()] == ["programming", "redis"]
    assert selectors.article_get(article_id=book_data[1]).groups == ("programming", "redis")
    assert links.held(conn, "http://example.com/1") == "article:1"
    assert conn.zrange("submitted:2", 0, -1) == [b"article:2"]
    title = selectors.article_get(article_id=book_data[1]).title
    found = selectors.article_search(q=title.split()[-1])
    assert book_data[1] in [a.id for a in found.items]
    assert conn.zrevrange("votes:", 0, -1, withscores=True) == [
        (b"article:1", 3),
        (b"article:2", 1),
    ]


# --- store writes, book reads ----------------------------------------------------------


def test_the_books_code_reads_and_votes_on_what_the_store_wrote(conn):
    services.group_create(name="programming", actor=staff_actor())
    now = time.time()
    a = services.article_post(
        NewPost(
            user_id=1,
            poster_name="ann",
            title="Ours",
            link="https://e.org/a",
            groups=["programming"],
            now=now,
        )
    )
    b = services.article_post(
        NewPost(user_id=2, poster_name="bob", title="Ours too", link="https://e.org/b", now=now - 5)
    )
    services.article_vote(article_id=b.id, user_id=3, direction=Vote.UP)
    listed = book.get_articles(conn, 1)
    assert [row["id"] for row in listed] == [b"article:2", b"article:1"]
    assert {k: listed[0][k] for k in (b"title", b"link", b"poster", b"votes")} == {
        b"title": b"Ours too",
        b"link": b"https://e.org/b",
        b"poster": b"user:2",
        b"votes": b"2",
    }
    grouped = book.get_group_articles(conn, "programming", 1)
    assert [row["id"] for row in grouped] == [b"article:1"]
    book.article_vote(conn, "user:9", "article:1")
    book.article_vote(conn, "user:9", "article:1")  # the voter set stops the second vote
    assert selectors.article_get(article_id=a.id).votes == 2
    # The book's vote moves score: but not votes: (the "top" ranking), which the audit
    # reports and the next vote through the store, or check_votes --repair, puts right.
    assert [p.kind for p in audit.invariant_audit()] == ["net_votes"]
    services.article_vote(article_id=a.id, user_id=10, direction=Vote.UP)
    assert conn.zscore("votes:", "article:1") == 3
    assert audit.invariant_audit() == []
