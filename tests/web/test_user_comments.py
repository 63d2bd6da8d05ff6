"""/u/<name>/comments/: all of a user's comments, paged, and the user page's link to it."""

from __future__ import annotations

import re
import time

import pytest
from django.urls import reverse

from articles.store import people, services
from articles.web import pagecache
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.factories import article, comment
from tests.harness import redis_down
from tests.web.forms import login, text_of
from tests.web.test_comment_views import client_commands

pytestmark = pytest.mark.django_db

CARD = re.compile(r'<article class="comment-card[^"]*" id="c(\d+)">')


def comments_of(user, n: int, article_id: int) -> list[int]:  # type: ignore[no-untyped-def]
    """`n` comments by `user`, a second apart, oldest first: their ids."""
    now = time.time() - n
    return [comment(user, article_id, f"comment number {i}", now=now + i).id for i in range(n)]


def cards(page: str) -> list[int]:
    """The ids of the comment cards on a page, in order."""
    return [int(cid) for cid in CARD.findall(page)]


def test_all_of_a_users_comments_newest_first_25_a_page(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(bob, title="Sorted <sets>")
    ids = comments_of(ann, 30, a.id)
    comment(bob, a.id, "bob's own comment")
    newest_first = ids[::-1]

    first = client.get("/u/ann/comments/")
    assert first.status_code == 200
    page = text_of(first)
    assert cards(page) == newest_first[:25]
    assert "<title>Comments by ann · " in page
    assert '<meta name="description" content="Every comment ann has written on ' in page
    assert "30 comments, newest first." in page
    assert "page 1 of 2" in page and 'rel="next" href="/u/ann/comments/?page=2"' in page
    # The rows of the site's newest comments: the article (escaped), the links in place.
    assert f'on <a href="/a/{a.id}/">Sorted &lt;sets&gt;</a>' in page
    assert f'href="/a/{a.id}/c/{ids[-1]}/">permalink</a>' in page
    assert "bob's own comment" not in page
    # The tabs: this page is the current one.
    tabs = page[page.index('<nav class="tabs" aria-label="ann\'s pages">') :]
    assert '<a href="/u/ann/">Submissions</a>' in tabs
    assert '<a href="/u/ann/comments/" aria-current="page">Comments (30)</a>' in tabs

    second = text_of(client.get("/u/ann/comments/?page=2"))
    assert cards(second) == newest_first[25:]
    assert "page 2 of 2" in second and 'rel="prev" href="/u/ann/comments/?page=1"' in second


def test_past_the_last_page_is_a_404_linking_to_the_last_and_a_bad_page_a_400(client, make_user):
    ann = make_user("ann")
    comments_of(ann, 30, article(ann).id)
    past = client.get("/u/ann/comments/?page=3")
    assert past.status_code == 404
    page = text_of(past)
    assert "There is no page 3: this list has 2 pages." in page
    assert '<a href="/u/ann/comments/?page=2">Go to the last page (page 2)</a>' in page
    assert cards(page) == []
    assert client.get("/u/ann/comments/?page=x").status_code == 400
    # No comments at all: one empty page, and page 2 is past it.
    make_user("quiet")
    empty = client.get("/u/quiet/comments/")
    assert empty.status_code == 200 and "No comments yet." in text_of(empty)
    assert client.get("/u/quiet/comments/?page=2").status_code == 404


def test_deleted_and_removed_comments_are_left_out(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(bob)
    kept, deleted, removed = comments_of(ann, 3, a.id)
    comment(bob, a.id, "a reply keeps the tombstone", parent_id=deleted)
    services.comment_delete(comment_id=deleted, actor=member_actor(ann.pk))
    services.comment_remove(comment_id=removed, reason="Spam", actor=staff_actor("mod"))
    page = text_of(client.get("/u/ann/comments/"))
    assert cards(page) == [kept] and "1 comment, newest first." in page


def test_the_user_page_shows_the_newest_10_and_links_to_all(client, make_user):
    ann = make_user("ann")
    ids = comments_of(ann, 12, article(ann).id)
    page = text_of(client.get("/u/ann/"))
    section = page[page.index('id="user-comments-title"') :]
    assert cards(section) == ids[::-1][:10]
    assert "the newest 10 of 12" in section
    assert '<a href="/u/ann/comments/">All 12 comments by ann →</a>' in section
    head = page[: page.index('id="user-comments-title"')]
    assert '<a href="/u/ann/" aria-current="page">Submissions</a>' in head
    assert '<a href="/u/ann/comments/">Comments (12)</a>' in head
    # All of them shown already: the tab stays, the "all" link goes.
    bob = make_user("bob")
    comments_of(bob, 2, article(bob, link="https://example.org/b").id)
    bobs = text_of(client.get("/u/bob/"))
    assert '<a href="/u/bob/comments/">Comments (2)</a>' in bobs
    assert "All 2 comments" not in bobs


def test_an_unknown_or_deleted_account_is_a_404_and_its_comments_say_deleted(client, make_user):
    assert client.get("/u/nobody/comments/").status_code == 404
    ann = make_user("ann")
    a = article(make_user("bob"))
    (cid,) = comments_of(ann, 1, a.id)
    assert client.get("/u/ann/comments/").status_code == 200
    people.account_delete(user=ann)
    pagecache.clear()  # this process keeps an anonymous page ARTICLES_ANONYMOUS_PAGE_SECONDS
    assert client.get("/u/ann/comments/").status_code == 404
    assert client.get("/u/ann/").status_code == 404
    recent = text_of(client.get("/comments/"))
    assert f'id="c{cid}"' in recent and "[deleted]" in recent


def test_a_name_holding_slash_comments_keeps_its_page_and_old_names_work(client, make_user):
    """Old names may hold "/", "@", "." and "+": each user page and comments page is where
    reverse() says, and "/u/a/comments/" is the page of an account named "a/comments"."""
    a = factories.user("a", password="x")
    slashed = factories.user("a/comments", password="x")
    old = factories.user("x.y+z@w", password="x")
    art = article(old)
    (by_a,) = comments_of(a, 1, art.id)
    (by_slashed,) = comments_of(slashed, 1, art.id)
    (by_old,) = comments_of(old, 1, art.id)

    slashed_page = client.get(reverse("articles:user-detail", args=["a/comments"]))
    assert slashed_page.status_code == 200
    assert '<span class="muted">user</span> a/comments</h1>' in text_of(slashed_page)
    slashed_comments = text_of(client.get(reverse("articles:user-comments", args=["a/comments"])))
    assert cards(slashed_comments) == [by_slashed]
    assert reverse("articles:user-comments", args=["x.y+z@w"]) == "/u/x.y+z@w/comments/"
    assert cards(text_of(client.get("/u/x.y+z@w/comments/"))) == [by_old]
    # With no account named "a/comments", the address is a's comments page.
    slashed.delete()
    pagecache.clear()  # this process keeps an anonymous page ARTICLES_ANONYMOUS_PAGE_SECONDS
    assert cards(text_of(client.get("/u/a/comments/"))) == [by_a]


def test_redis_down_is_a_503(client, make_user):
    make_user("ann")
    with redis_down():
        response = client.get("/u/ann/comments/")
    assert response.status_code == 503
    assert "Temporarily unavailable" in text_of(response)


def test_the_page_takes_the_same_round_trips_for_3_comments_or_60(client, make_user, conn):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(bob)
    comments_of(ann, 3, a.id)
    comments_of(bob, 60, a.id)
    login(client, make_user("reader"))  # a session: no anonymous page served from memory

    def sent(url: str) -> list[str]:
        assert client.get(url).status_code == 200  # warm: session, scripts
        return client_commands(conn, lambda: client.get(url))

    few, many = sent("/u/ann/comments/"), sent("/u/bob/comments/")
    assert 0 < len(many) == len(few) <= 2, many
    assert len(sent("/u/bob/comments/?page=3")) == len(few)
