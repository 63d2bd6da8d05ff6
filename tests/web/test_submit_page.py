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


def test_a_preview_shows_the_post_as_it_will_read_and_writes_nothing(client, conn) -> None:  # type: ignore[no-untyped-def]
    client.force_login(factories.user("ann"))
    form = {
        "title": "Sorted sets <explained>",
        "link": "https://Example.org/sets",
        "text": "Scores are *floats*, see [the docs](https://redis.io/).",
        "preview": "1",
    }
    for _ in range(12):  # past the post limit (10 an hour): a preview is not a post
        response = client.post("/submit/", form)
    assert response.status_code == 200
    html = response.content.decode()
    preview = re.search(r'<section class="panel preview".*?</section>', html, re.S)
    assert preview, "no preview"
    assert 'Sorted sets &lt;explained&gt; <span class="domain">(example.org)</span>' in preview[0]
    assert "<em>floats</em>" in preview[0]
    assert 'href="https://redis.io/" rel="nofollow ugc noopener"' in preview[0]
    assert 'value="Sorted sets &lt;explained&gt;"' in html  # the form keeps what was typed
    assert conn.keys("article:*") == [] and conn.get("article:") is None

    del form["preview"]
    posted = client.post("/submit/", form)
    assert posted.status_code == 302
    assert selectors.article_get(article_id=1).title == "Sorted sets <explained>"


def test_a_preview_of_a_bad_form_says_what_is_wrong_and_shows_nothing(client) -> None:  # type: ignore[no-untyped-def]
    client.force_login(factories.user("ann"))
    response = client.post("/submit/", {"title": "", "link": "", "text": "", "preview": "1"})
    assert response.status_code == 400
    assert 'class="panel preview"' not in response.content.decode()
