"""Flags on pages: the reader's form (no JavaScript), the staff queue, resolve and dismiss,
and what a held article or comment looks like."""

from __future__ import annotations

import json
import re

import pytest

from articles.store import keys, selectors
from tests import factories


@pytest.fixture(autouse=True)
def _threshold(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARTICLES_FLAG_THRESHOLD = 1


def test_logged_in_readers_see_flag_links_and_visitors_do_not(client, make_user):
    reader = make_user()
    article = factories.article(2)
    factories.comment(2, article.id)
    page = client.get(f"/a/{article.id}/").content.decode()
    assert "/flag/" not in page
    client.force_login(reader)
    page = client.get(f"/a/{article.id}/").content.decode()
    assert f'href="/a/{article.id}/flag/"' in page and 'href="/c/1/flag/"' in page
    assert f'href="/a/{article.id}/flag/"' in client.get("/new/").content.decode()


def test_the_flag_form_needs_a_login_and_a_known_reason(client, make_user, conn):
    article = factories.article(2)
    answer = client.get(f"/a/{article.id}/flag/")
    assert answer.status_code == 302 and "login" in answer["Location"]
    client.force_login(make_user())
    page = client.get(f"/a/{article.id}/flag/")
    assert page.status_code == 200 and b'value="broken-link"' in page.content
    refused = client.post(f"/a/{article.id}/flag/", {"reason": "rude"})
    assert refused.status_code == 400 and not conn.exists(keys.FLAGGED)
    assert client.get("/a/999/flag/").status_code == 404


def test_a_flag_hides_the_article_and_a_second_one_is_refused_409(client, make_user, conn):
    article = factories.article(2, title="Spam here")
    client.force_login(make_user())
    answer = client.post(f"/a/{article.id}/flag/", {"reason": "spam"})
    assert answer.status_code == 302 and answer["Location"] == f"/a/{article.id}/"
    page = client.get(f"/a/{article.id}/").content.decode()
    assert "Hidden from the listings" in page
    assert "Spam here" not in client.get("/new/").content.decode()
    again = client.post(f"/a/{article.id}/flag/", {"reason": "duplicate"})
    assert again.status_code == 409 and b"already flagged" in again.content
    assert conn.hlen(keys.flags(keys.article(article.id))) == 1


def test_a_held_comment_is_folded_saying_why(client, make_user):
    article = factories.article(2)
    comment = factories.comment(3, article.id, "Buy pills")
    client.force_login(make_user())
    assert client.post(f"/c/{comment.id}/flag/", {"reason": "spam"}).status_code == 302
    page = client.get(f"/a/{article.id}/").content.decode()
    row = page[page.index(f'id="c{comment.id}"') :]
    assert re.match(r'id="c\d+"[^>]*>\s*<details>', row)  # folded: not open
    assert "hidden for its flags until staff decide" in row


def test_only_staff_see_the_queue(client, make_user):
    client.force_login(make_user())
    assert client.get("/staff/flags/").status_code == 403
    assert client.post("/staff/flags/article/1/dismiss/").status_code == 403


def test_staff_dismiss_puts_the_article_back_and_the_log_says_so_in_words(client, make_user):
    article = factories.article(2, title="Fine article")
    client.force_login(make_user())
    client.post(f"/a/{article.id}/flag/", {"reason": "off-topic"})
    client.force_login(factories.staff("mod"))
    queue = client.get("/staff/flags/").content.decode()
    assert "Fine article" in queue and "off-topic: 1" in queue and "Held" in queue
    answer = client.post(f"/staff/flags/article/{article.id}/dismiss/", {"reason": "on topic"})
    assert answer.status_code == 302 and answer["Location"] == "/staff/flags/"
    assert "Fine article" in client.get("/new/").content.decode()
    assert "Nothing is flagged" in client.get("/staff/flags/").content.decode()
    log = client.get("/modlog/").content.decode()
    assert "dismissed the flags on" in log and f'href="/a/{article.id}/"' in log
    again = client.post(f"/staff/flags/article/{article.id}/dismiss/")
    assert again.status_code == 404


def test_staff_resolve_needs_a_reason_then_removes_the_comment(client, make_user, conn):
    article = factories.article(2)
    comment = factories.comment(3, article.id, "Rude words")
    client.force_login(make_user())
    client.post(f"/c/{comment.id}/flag/", {"reason": "abusive"})
    client.force_login(factories.staff("mod"))
    refused = client.post(f"/staff/flags/comment/{comment.id}/resolve/", {"reason": ""})
    assert refused.status_code == 400 and b"Give a reason" in refused.content
    done = client.post(f"/staff/flags/comment/{comment.id}/resolve/", {"reason": "rude"})
    assert done.status_code == 302
    assert selectors.flag_queue().items == []
    actions = [json.loads(e)["action"] for e in conn.lrange("modlog:", 0, -1)]
    assert actions == ["flag_resolve", "comment_remove"]
    log = client.get("/modlog/").content.decode()
    assert "upheld the flags on" in log and "removed a comment" in log


def test_the_flag_form_and_the_queue_use_each_id_once_and_no_block_in_a_paragraph(
    client, make_user
):
    from tests.web.test_valid_markup import parse

    first, second = factories.article(2), factories.article(3, link="https://example.org/b")
    comment = factories.comment(3, first.id)
    client.force_login(make_user())
    pages = [client.get(f"/a/{first.id}/flag/"), client.get(f"/c/{comment.id}/flag/")]
    for path in (f"/a/{first.id}/flag/", f"/a/{second.id}/flag/", f"/c/{comment.id}/flag/"):
        client.post(path, {"reason": "spam"})
    client.force_login(factories.staff("mod"))
    pages.append(client.get("/staff/flags/"))
    for response in pages:
        assert response.status_code == 200
        markup = parse(response.content.decode())
        assert not {name: n for name, n in markup.ids.items() if n > 1}
        assert not markup.blocks_in_p


def test_flags_past_the_rate_limit_are_refused_429_on_the_form(client, make_user, settings, conn):
    settings.ARTICLES_RATE_LIMITS = {"flag": (1, 3600)}
    first, second = factories.article(2), factories.article(3, link="https://example.org/b")
    client.force_login(make_user())
    assert client.post(f"/a/{first.id}/flag/", {"reason": "spam"}).status_code == 302
    refused = client.post(f"/a/{second.id}/flag/", {"reason": "spam"})
    assert refused.status_code == 429 and "Retry-After" in refused
    assert not conn.exists(keys.flags(keys.article(second.id)))
