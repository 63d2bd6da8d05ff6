"""The markup of the pages the validator (vnu) found faults in: block content where only
phrasing may go, and one id on two elements."""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser

import pytest

from tests import factories

pytestmark = pytest.mark.django_db

# Elements a <p> may not hold (HTML's flow content that is not phrasing content).
BLOCKS = {
    "address",
    "article",
    "aside",
    "blockquote",
    "div",
    "dl",
    "fieldset",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
}


class Markup(HTMLParser):
    """Block elements met inside an open <p>, and every id attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.open_p = 0
        self.blocks_in_p: list[str] = []
        self.ids: Counter[str] = Counter()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids[value] += 1
        if tag in BLOCKS and self.open_p:
            self.blocks_in_p.append(tag)
        if tag == "p":
            self.open_p += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self.open_p:
            self.open_p -= 1


def parse(html: str) -> Markup:
    markup = Markup()
    markup.feed(html)
    markup.close()
    return markup


def test_the_sign_up_page_holds_no_list_inside_a_paragraph(client) -> None:  # type: ignore[no-untyped-def]
    """The password's help (Django's validators') is a <ul>: it is given a <div>."""
    response = client.get("/signup/")
    assert response.status_code == 200
    markup = parse(response.content.decode())
    assert "<ul>" in response.content.decode(), "the password rules are no longer a list"
    assert not markup.blocks_in_p, f"inside a <p>: {markup.blocks_in_p}"


def test_the_staff_article_page_uses_each_id_once(client) -> None:  # type: ignore[no-untyped-def]
    """Its edit and groups forms both have a reason field."""
    client.force_login(factories.staff("mod"))
    article = factories.article(1, text="", link="https://example.org/x")
    response = client.get(f"/staff/a/{article.id}/")
    assert response.status_code == 200
    markup = parse(response.content.decode())
    repeated = {name: n for name, n in markup.ids.items() if n > 1}
    assert not repeated, f"ids used more than once: {repeated}"
    assert not markup.blocks_in_p, f"inside a <p>: {markup.blocks_in_p}"


def test_the_comment_vote_pages_and_the_thread_are_well_formed(client) -> None:  # type: ignore[no-untyped-def]
    """The comment vote's login page (with its reason), its offer (a comment card inside a
    form) and a thread with the forms a member gets: no block in a <p>, no id twice."""
    article = factories.article(1, text="", link="https://example.org/x")
    top = factories.comment(1, article.id, "A comment.\n\n- a list\n- in it")
    factories.comment(1, article.id, "A reply.", top.id)
    offer = f"/c/{top.id}/vote/offer/?direction=up&next=/a/{article.id}/"
    pages = {"login": client.get(client.get(offer)["Location"])}
    client.force_login(factories.user("bob"))
    pages["offer"] = client.get(offer)
    pages["thread"] = client.get(f"/a/{article.id}/")
    pages["permalink"] = client.get(f"/a/{article.id}/c/{top.id}/?next=/a/{article.id}/")
    for name, response in pages.items():
        assert response.status_code == 200, name
        markup = parse(response.content.decode())
        repeated = {key: n for key, n in markup.ids.items() if n > 1}
        assert not repeated, f"{name}: ids used more than once: {repeated}"
        assert not markup.blocks_in_p, f"{name}: inside a <p>: {markup.blocks_in_p}"
