"""Listings link a poster or a comment's author straight to /u/<name>/, not to /u/<id>/ (a
redirect there), with no query per row."""

from __future__ import annotations

import re

import pytest

from tests.factories import article, comment

pytestmark = pytest.mark.django_db


def user_links(html: str) -> list[str]:
    return re.findall(r'href="(/u/[^"]*)"', html)


def test_a_listing_links_each_poster_to_their_page_by_name_with_no_query_a_row(
    client, make_user, django_assert_num_queries
):
    posters = [make_user(f"poster{n}") for n in range(25)]
    for n, user in enumerate(posters):
        article(user, title=f"Article {n}", link=f"https://example.org/{n}")
    client.get("/new/")  # warm: the rows are kept after the first page
    with django_assert_num_queries(0):
        html = client.get("/new/").content.decode()
    links = user_links(html)
    assert sorted(links) == sorted(f"/u/poster{n}/" for n in range(25))
    assert client.get(links[0]).status_code == 200  # the page itself, no redirect


def test_an_article_page_and_its_thread_link_people_by_name(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    comment(bob, a.id, "A reply")
    links = user_links(client.get(f"/a/{a.id}/").content.decode())
    assert "/u/ann/" in links and "/u/bob/" in links
    assert not any(re.fullmatch(r"/u/\d+/", link) for link in links)
    cards = user_links(client.get("/comments/").content.decode())
    assert "/u/bob/" in cards


def test_a_name_of_digits_alone_keeps_its_link_by_account(client, make_user):
    """/u/<digits>/ is an account number: such a name (made before the name rule) links
    by its account, whose page answers there."""
    digits = make_user("12345")
    article(digits)
    links = user_links(client.get("/new/").content.decode())
    assert links == [f"/u/{digits.pk}/"]
    page = client.get(links[0])
    assert page.status_code == 200 and "12345" in page.content.decode()
