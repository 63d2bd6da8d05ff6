"""The submit page tells a poster what the comment form tells a commenter: that the text is
Markdown; and why a new post has a point when a new comment has none."""

from __future__ import annotations

import re

import pytest

from articles.store import selectors
from tests import factories

pytestmark = pytest.mark.django_db

MARKDOWN_HINT = "Markdown: *emphasis*, `code`, [links](https://example.org), > quotes, - lists."


def test_the_submit_page_gives_the_comments_markdown_hint_under_the_text(client) -> None:  # type: ignore[no-untyped-def]
    client.force_login(factories.user("ann"))
    html = client.get("/submit/").content.decode()
    hint = re.search(r'<div class="help" id="id_text_helptext">(.*?)</div>', html, re.S)
    assert hint, "the text field has no help"
    assert hint.group(1) == MARKDOWN_HINT
    assert 'aria-describedby="id_text_helptext"' in html


def test_the_comment_form_and_the_posters_edit_give_the_same_hint(client) -> None:  # type: ignore[no-untyped-def]
    ann = factories.user("ann")
    client.force_login(ann)
    article = factories.article(ann, title="A text post", link="", text="Some *text*.")
    assert MARKDOWN_HINT in client.get(f"/a/{article.id}/").content.decode()
    assert MARKDOWN_HINT in client.get(f"/a/{article.id}/edit/").content.decode()


def test_the_submit_page_says_a_post_starts_at_one_point_and_why(client) -> None:  # type: ignore[no-untyped-def]
    ann = factories.user("ann")
    client.force_login(ann)
    html = client.get("/submit/").content.decode()
    assert "It starts at 1 point: your own up-vote (a comment starts at 0)." in html
    # What it says is what the store does.
    article = factories.article(ann, title="Mine", link="https://example.org/mine")
    comment = factories.comment(ann, article.id)
    assert selectors.article_get(article_id=article.id).votes == 1
    assert comment.votes == 0
