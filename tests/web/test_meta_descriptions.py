"""Each page's <meta name="description">: its own words (a search result shows them), and
robots told not to index the pages that are no content (search results, forms)."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from articles.store import services
from articles.types import NewPost
from tests.actors import staff_actor

pytestmark = pytest.mark.django_db

DESCRIPTION = re.compile(r'<meta name="description" content="([^"]*)">')
ROBOTS = re.compile(r'<meta name="robots" content="([^"]*)">')


def described(client: Client, url: str) -> tuple[str, list[str]]:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    page = response.content.decode()
    found = DESCRIPTION.findall(page)
    assert len(found) == 1, (url, found)
    return html.unescape(found[0]), ROBOTS.findall(page)


def test_each_page_has_a_description_of_its_own(client, make_user) -> None:
    carol = make_user("carol")
    services.group_create(
        name="redis", description="The data structure server.", actor=staff_actor()
    )
    text = services.article_post(
        NewPost(
            user_id=carol.pk,
            poster_name="carol",
            title="Votes & scores",
            link="",
            text="Sorted sets <em>rank</em>\n\nthe articles. " + "More words here. " * 20,
        )
    )
    link = services.article_post(
        NewPost(
            user_id=carol.pk,
            poster_name="carol",
            title='A "quoted" <title>',
            link="https://example.org/a",
            text="",
        )
    )
    pages = {
        "home": reverse("articles:home"),
        "top": reverse("articles:top"),
        "top-week": reverse("articles:top") + "?period=week",
        "new": reverse("articles:new"),
        "groups": reverse("articles:group-list"),
        "group": reverse("articles:group-detail", args=["redis"]),
        "user": reverse("articles:user-detail", args=[carol.username]),
        "user-comments": reverse("articles:user-comments", args=[carol.username]),
        "modlog": reverse("articles:modlog"),
        "comments": reverse("articles:recent-comments"),
        "text": reverse("articles:article-detail", args=[text.id]),
        "link": reverse("articles:article-detail", args=[link.id]),
    }
    descriptions = {name: described(client, url) for name, url in pages.items()}
    for name, (description, robots) in descriptions.items():
        assert 40 <= len(description) <= 170, (name, description)
        assert robots == [], (name, robots)  # content pages are for search engines
    assert len({d for d, _ in descriptions.values()}) == len(pages)  # none shared
    # The article page: the start of its text on one line, cut at a word, or its title.
    text_description = descriptions["text"][0]
    assert text_description.startswith("Sorted sets <em>rank</em> the articles. More words")
    assert text_description.endswith("...")
    assert descriptions["link"][0].startswith('A "quoted" <title>: a link posted by carol')
    assert "The data structure server." in descriptions["group"][0]
    assert "last week" in descriptions["top-week"][0]


def test_search_results_and_forms_are_not_indexed(client) -> None:
    for url in (
        reverse("articles:search") + "?q=redis",
        reverse("articles:login"),
        reverse("articles:signup"),
    ):
        assert described(client, url)[1] == ["noindex"], url
