"""The pages of issue 24's sites, karma and comment feeds: /d/<domain>/, the "(site)"
link of every row, comment karma on the user page, /feeds/comments/ and
/feeds/u/<id>/comments/ (valid Atom, linked from their pages)."""

from __future__ import annotations

from xml.dom import minidom

import pytest

from articles import conf
from articles.store import services
from articles.types import Vote
from tests.factories import article, comment
from tests.web.forms import text_of


def test_a_sites_page_lists_its_articles_newest_first_linked_from_each_row(client, make_user):
    ann = make_user("ann")
    old = article(ann, title="Old one", link="https://www.example.org/old")
    article(ann, title="Elsewhere", link="https://other.org/x")
    article(ann, title="New one", link="https://example.org/new")
    page = text_of(client.get("/new/"))
    assert '(<a href="/d/example.org/">example.org</a>)' in page
    assert '(<a href="/d/other.org/">other.org</a>)' in page
    response = client.get("/d/example.org/")
    assert response.status_code == 200
    page = text_of(response)
    assert page.index("New one") < page.index("Old one") and "Elsewhere" not in page
    assert "2 articles linking to example.org, newest first." in page
    assert f'href="/a/{old.id}/"' in page


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("/d/WWW.Example.org/", "/d/example.org/"),
        ("/d/b%C3%BCcher.example/?page=1", "/d/xn--bcher-kva.example/?page=1"),
    ],
)
def test_another_spelling_of_a_site_redirects_to_its_one_address(client, typed, canonical):
    response = client.get(typed)
    assert response.status_code == 301 and response["Location"] == canonical


def test_a_unicode_site_is_shown_as_people_read_it(client, make_user):
    article(make_user("ann"), title="Books", link="https://xn--bcher-kva.example/")
    page = text_of(client.get("/d/xn--bcher-kva.example/"))
    assert "bücher.example" in page and "Books" in page


def test_a_site_nothing_links_to_and_a_name_no_site_has_are_404(client, db):
    assert client.get("/d/nothing.example/").status_code == 404
    assert client.get("/d/a*b/").status_code == 404
    assert client.get("/d/-x-/").status_code == 404


def test_a_sites_pages_page_like_every_listing(client, make_user, settings):
    settings.ARTICLES_PER_PAGE = 2
    ann = make_user("ann")
    for n in range(3):
        article(ann, title=f"Number {n}", link=f"https://example.org/{n}")
    page = text_of(client.get("/d/example.org/?page=2"))
    assert "Number 0" in page and "Number 2" not in page and 'rel="prev"' in page
    assert client.get("/d/example.org/?page=3").status_code == 404
    assert client.get("/d/example.org/?page=x").status_code == 400


def test_the_user_page_shows_comment_karma_beside_karma(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(bob)
    c = comment(ann, a.id)
    services.comment_vote(comment_id=c.id, user_id=bob.pk, vote=Vote.UP)
    page = text_of(client.get("/u/ann/"))
    assert "<strong>0</strong> karma" in page
    assert "<strong>1</strong> comment karma" in page


def _entries(response) -> list[minidom.Element]:  # type: ignore[no-untyped-def]
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    root = minidom.parseString(response.content).documentElement  # noqa: S318 (our own answer)
    assert root.tagName == "feed" and root.getAttribute("xmlns") == "http://www.w3.org/2005/Atom"
    for tag in ("title", "id", "updated", "link"):
        assert root.getElementsByTagName(tag), tag
    entries = root.getElementsByTagName("entry")
    for entry in entries:
        for tag in ("title", "link", "id", "updated", "published", "author", "summary"):
            assert entry.getElementsByTagName(tag), tag
    return entries


def test_the_site_and_each_user_have_a_comments_feed_linked_from_their_pages(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(bob, title="Feed <me>")
    comment(ann, a.id, "ann's *first*")
    comment(bob, a.id, "bob <script>x</script>")
    last = comment(ann, a.id, "ann's second")
    entries = _entries(client.get("/feeds/comments/"))
    assert len(entries) == 3
    summaries = [e.getElementsByTagName("summary")[0].firstChild.data for e in entries]
    assert "&lt;script&gt;" in summaries[1] and "<script>" not in summaries[1]
    link = entries[0].getElementsByTagName("link")[0].getAttribute("href")
    assert link.endswith(f"/a/{a.id}/c/{last.id}/")
    title = entries[0].getElementsByTagName("title")[0].firstChild.data
    assert title == "Comment by ann on Feed <me>"
    mine = _entries(client.get(f"/feeds/u/{ann.pk}/comments/"))
    assert [e.getElementsByTagName("summary")[0].firstChild.data for e in mine] == [
        "<p>ann&#x27;s second</p>",
        "<p>ann&#x27;s <em>first</em></p>",
    ]
    feed = text_of(client.get(f"/feeds/u/{ann.pk}/comments/"))
    assert f"<title>{conf.site_name()}: comments by ann</title>" in feed
    site_feed = (
        '<link rel="alternate" type="application/atom+xml" '
        f'title="{conf.site_name()}: new comments" href="/feeds/comments/">'
    )
    assert site_feed in text_of(client.get("/comments/"))
    user_feed = (
        '<link rel="alternate" type="application/atom+xml" '
        f'title="{conf.site_name()}: comments by ann" href="/feeds/u/{ann.pk}/comments/">'
    )
    assert user_feed in text_of(client.get("/u/ann/"))
    assert user_feed in text_of(client.get("/u/ann/comments/"))
    assert client.get("/feeds/u/999/comments/").status_code == 404
    assert _entries(client.get(f"/feeds/u/{bob.pk}/comments/"))[0].getElementsByTagName("title")
