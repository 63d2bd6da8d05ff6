"""The kept comment rows of a thread page (articles.web.rows: comment_nodes, comment_row):
one viewer's state never reaches another's page, and a row changes with its comment."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.test import Client

from articles.store import selectors, services
from articles.types import Vote
from articles.web import rendering, rows
from tests.actors import staff_actor
from tests.factories import article, comment
from tests.web.forms import login, text_of

pytestmark = pytest.mark.django_db

GERMAN = {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9"}
ENGLISH = {"HTTP_ACCEPT_LANGUAGE": "en"}


def row_of(page: str, comment_id: int) -> str:
    """The comment's own part of the page: from its <li> to the next comment's (or the
    end of its list)."""
    start = page.index(f'id="c{comment_id}"')
    ends = [i for i in (page.find('<li class="comment', start), page.find("</ol>", start)) if i > 0]
    return page[start : min(ends)]


def test_two_viewers_each_see_only_their_own_state(make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    first = comment(ann, a.id, "Ann's comment")
    second = comment(bob, a.id, "Bob's comment")
    services.comment_vote(comment_id=second.id, user_id=ann.pk, vote=Vote.UP)
    ann_page = text_of(login(Client(), ann).get(f"/a/{a.id}/"))
    bob_page = text_of(login(Client(), bob).get(f"/a/{a.id}/"))
    # ann: her own comment editable, her up-vote on bob's shown; bob's comment flaggable.
    assert f'href="/c/{first.id}/edit/"' in row_of(ann_page, first.id)
    assert f"/c/{first.id}/flag/" not in row_of(ann_page, first.id)
    assert "you voted up" in row_of(ann_page, second.id)
    assert 'aria-pressed="true"' in row_of(ann_page, second.id)
    assert f'href="/c/{second.id}/flag/"' in row_of(ann_page, second.id)
    # bob, after ann's rows were kept: the other way round, and no vote of his.
    assert f"/c/{first.id}/edit/" not in bob_page and f"/c/{first.id}/delete/" not in bob_page
    assert f'href="/c/{first.id}/flag/"' in row_of(bob_page, first.id)
    assert f'href="/c/{second.id}/edit/"' in row_of(bob_page, second.id)
    assert "you voted up" not in bob_page and 'aria-pressed="true"' not in bob_page
    # A visitor: no forms, no tokens, the arrows are log-in links; staff: remove links.
    anon_page = text_of(Client().get(f"/a/{a.id}/"))
    assert "csrfmiddlewaretoken" not in row_of(anon_page, first.id)
    assert "/flag/" not in anon_page and "/remove/" not in anon_page
    staff_page = text_of(login(Client(), make_user("mod", staff=True)).get(f"/a/{a.id}/"))
    assert f'href="/c/{first.id}/remove/"' in row_of(staff_page, first.id)
    assert "/remove/" not in text_of(login(Client(), bob).get(f"/a/{a.id}/"))


def test_every_rows_buttons_post_this_requests_token_and_path(make_user):
    """A row holds no token or hidden field: its vote and save buttons belong to the
    page's one form (id "cf"), which carries this request's CSRF token and path."""
    ann = make_user("ann")
    a = article(ann)
    made = [comment(ann, a.id, f"Comment {n}") for n in range(3)]
    for viewer in (make_user("bob"), make_user("cat")):
        client = login(Client(), viewer)
        for path in (f"/a/{a.id}/", f"/a/{a.id}/?sort=new"):
            page = text_of(client.get(path))
            tokens = set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page))
            assert len(tokens) == 1  # the page's own, in every form alike
            (shared,) = re.findall(r'<form id="cf" method="post" hidden>(.*?)</form>', page)
            assert f'name="csrfmiddlewaretoken" value="{tokens.pop()}"' in shared
            assert f'name="next" value="{path.replace("&", "&amp;")}"' in shared
            for c in made:
                row = row_of(page, c.id)
                assert "csrfmiddlewaretoken" not in row and 'name="next"' not in row
                assert row.count('form="cf"') == 3  # the two arrows and save
                assert row.count(f'formaction="/c/{c.id}/vote/"') == 2
                assert f'formaction="/c/{c.id}/save/"' in row
                assert f"?next={path.replace('?', '%3F').replace('=', '%3D')}#reply" in row


def test_a_rows_buttons_post_with_the_shared_forms_fields(csrf_client, make_user):
    """What a browser without JavaScript sends for an arrow or save (the shared form's
    token and `next`, the button's name and value, to its formaction) is accepted."""
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id, "Worth a vote")
    page = text_of(login(csrf_client, make_user("bob")).get(f"/a/{a.id}/?sort=new"))
    (shared,) = re.findall(r'<form id="cf" method="post" hidden>(.*?)</form>', page)
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', shared))
    fields["next"] = fields["next"].replace("&amp;", "&")
    arrow = rf'formaction="(/c/{c.id}/vote/)" class="arrow up" name="(\w+)" value="(\w+)"'
    up = re.search(arrow, page)
    assert up is not None
    voted = csrf_client.post(up[1], {**fields, up[2]: up[3]})
    assert voted.status_code == 302 and voted["Location"] == f"/a/{a.id}/?sort=new#c{c.id}"
    assert selectors.comment_get(comment_id=c.id).votes == 1
    saved = csrf_client.post(f"/c/{c.id}/save/", fields)
    assert saved.status_code == 302 and saved["Location"].startswith(f"/a/{a.id}/?sort=new")


def test_each_row_says_its_own_age(make_user, now):
    ann = make_user("ann")
    a = article(ann, now=now - 7200)
    old = comment(ann, a.id, "Old", now=now - 3 * 3600)
    new = comment(ann, a.id, "New", now=now - 120)
    page = text_of(login(Client(), make_user("bob")).get(f"/a/{a.id}/"))
    assert "3\xa0hours ago" in row_of(page, old.id)
    assert "2\xa0minutes ago" in row_of(page, new.id)


def test_a_row_changes_with_an_edit_a_vote_a_removal_and_flags_held(make_user, settings):
    settings.ARTICLES_FLAG_THRESHOLD = 1
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    c = comment(ann, a.id, "The first words")
    other = comment(ann, a.id, "Another")
    comment(bob, a.id, "A reply keeps the removed comment's place", parent_id=c.id)
    reader = login(Client(), make_user("cat"))

    def row(cid: int = c.id) -> str:
        return row_of(text_of(reader.get(f"/a/{a.id}/")), cid)

    assert "The first words" in row() and '<b data-field="net">0</b>' in row()
    services.comment_edit(comment_id=c.id, actor=staff_actor(pk=ann.pk), text="Second words")
    assert "Second words" in row() and "The first words" not in row()
    assert ">edited</span>" in row()
    services.comment_vote(comment_id=c.id, user_id=bob.pk, vote=Vote.UP)
    assert '<b data-field="net">1</b> <span data-field="points">point</span>' in row()
    assert login(Client(), bob).post(f"/c/{other.id}/flag/", {"reason": "spam"}).status_code == 302
    assert re.match(r'id="c\d+"[^>]*>\s*<details>', row(other.id))  # folded: not open
    assert "hidden for its flags until staff decide" in row(other.id)
    services.comment_remove(comment_id=c.id, actor=staff_actor("mod"), reason="Rude")
    assert "[removed]" in row() and "Second words" not in row()
    assert f"/c/{c.id}/vote/" not in row()


def test_german_and_english_readers_get_their_own_words(make_user):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id)
    client = login(Client(), make_user("bob"))
    english = row_of(text_of(client.get(f"/a/{a.id}/", **ENGLISH)), c.id)
    german = row_of(text_of(client.get(f"/a/{a.id}/", **GERMAN)), c.id)
    again = row_of(text_of(client.get(f"/a/{a.id}/", **ENGLISH)), c.id)
    assert ">reply</a>" in english and ">flag</a>" in english and 'title="Vote up"' in english
    assert ">antworten</a>" in german and ">melden</a>" in german
    assert 'title="Dafür stimmen"' in german and ">reply</a>" not in german
    assert ">reply</a>" in again and ">antworten</a>" not in again


def test_the_kept_rows_are_bounded(make_user, monkeypatch):
    ann = make_user("ann")
    a = article(ann)
    made = [comment(ann, a.id, f"Comment number {n}") for n in range(8)]
    monkeypatch.setattr(rows._comments, "max_entries", 5)
    page = text_of(login(Client(), make_user("bob")).get(f"/a/{a.id}/"))
    assert all(f"Comment number {n}" in page for n in range(8))
    assert all(f'id="c{c.id}"' in page for c in made)
    assert len(rows._comments) <= 5


def test_the_author_keeps_delete_after_the_edit_window_and_no_one_else_gets_it(make_user, settings):
    settings.ARTICLES_COMMENT_EDIT_SECONDS = 0  # editable by no one: "mine" alone differs
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    c = comment(ann, a.id)
    ann_row = row_of(text_of(login(Client(), ann).get(f"/a/{a.id}/")), c.id)
    bob_row = row_of(text_of(login(Client(), bob).get(f"/a/{a.id}/")), c.id)
    assert f'href="/c/{c.id}/delete/"' in ann_row and "/edit/" not in ann_row
    assert f"/c/{c.id}/flag/" not in ann_row
    assert f"/c/{c.id}/delete/" not in bob_row and f'href="/c/{c.id}/flag/"' in bob_row


def test_the_threads_bytes_are_put_into_the_page_whole_and_in_place(make_user):
    """The thread comes into the encoded page as UTF-8 (rows.splice): every character of
    the comments as written, no mark left, on the article page and a permalink page (two
    threads: the comment itself and its replies)."""
    ann = make_user("ann")
    a = article(ann)
    top = comment(ann, a.id, "Grüße aus Köln 🚀 — “quoted” <b>not bold</b>")
    reply = comment(ann, a.id, "Ein Antwort: 😀", parent_id=top.id)
    client = login(Client(), make_user("bob"))
    for path in (f"/a/{a.id}/", f"/a/{a.id}/c/{top.id}/"):
        page = client.get(path).content.decode("utf-8")
        assert "vsthread" not in page
        assert "Grüße aus Köln 🚀 — “quoted” &lt;b&gt;not bold&lt;/b&gt;" in page
        assert "Ein Antwort: 😀" in row_of(page, reply.id)
        assert page.count(f'id="c{top.id}"') == 1 and page.rstrip().endswith("</html>")
        # The thread sits inside its section, before the pager and the end of the page.
        assert page.index('id="comments"') < page.index(f'id="c{reply.id}"')


def test_a_row_is_found_by_the_comment_object_and_by_its_fields(make_user, monkeypatch):
    """The thread's read hands out one object for the same values: its row is found by
    identity. An equal comment made afresh (an archived thread's) finds the same row by
    its fields, and a changed one gets its own."""
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id, "Kept once")
    (read,) = selectors.comment_thread(article_id=a.id, user_id=ann.pk).items
    rendered: list[str] = []
    real = rows._render_parts
    monkeypatch.setattr(
        rows, "_render_parts", lambda *a, **k: rendered.append("x") or real(*a, **k)
    )
    env, viewer = rendering.environment(), rows._CommentViewer(ann)
    made = ("/", "en")
    first = rows._comment_template(env, read, True, True, viewer, made)
    assert rows._comment_template(env, read, True, True, viewer, made) is first
    twin = replace(read)
    assert twin is not read and twin == read
    assert rows._comment_template(env, twin, True, True, viewer, made) is first
    assert len(rendered) == 1
    changed = rows._comment_template(env, replace(read, votes=1), True, True, viewer, made)
    assert changed is not first and len(rendered) == 2
    assert f'id="c{c.id}"' in b"".join(first.parts).decode()
