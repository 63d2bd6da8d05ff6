"""/inbox/ and the header's unread count: the journey reply -> unread -> read without
JavaScript, privacy, paging, bad input, the header's cost, and Redis down."""

from __future__ import annotations

import re

import pytest

from articles.store import keys, selectors, services
from tests.factories import article, comment
from tests.harness import redis_down
from tests.web.forms import login, post, text_of
from tests.web.test_comment_views import client_commands

pytestmark = pytest.mark.django_db

CARD = re.compile(r'<article class="comment-card[^"]*" id="c(\d+)">')
BADGE = re.compile(
    r'class="inbox-link[^"]*" href="/inbox/"[^>]*>.*?>Inbox</span> <span class="badge">(\d+)'
)


def badge(page: str) -> int:
    found = BADGE.search(page)
    return int(found.group(1)) if found else 0


def test_a_reply_shows_as_unread_in_the_header_and_the_inbox_until_marked_read(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann, title="Sorted <sets>")
    mine = comment(ann, a.id, "my own comment")
    first = comment(bob, a.id, "on your article")
    second = comment(bob, a.id, "on your comment", mine.id)
    login(client, ann)
    home = text_of(client.get("/"))
    assert badge(home) == 2
    assert (
        '<span class="visually-hidden"> unread replies</span>' in home
    )  # said to a screen reader, not by colour alone
    page = text_of(client.get("/inbox/"))
    assert [int(c) for c in CARD.findall(page)] == [second.id, first.id]
    assert page.count('class="inbox-item unread"') == 2
    assert "Sorted &lt;sets&gt;" in page and f"/a/{a.id}/c/{second.id}/" in page
    assert badge(text_of(client.get("/inbox/"))) == 2  # looking marks nothing read

    newest = selectors.inbox_page(user_id=ann.pk).newest
    marked = post(client, "/inbox/read/", {"up_to": newest}, form_page="/inbox/")
    assert marked.status_code == 302 and marked["Location"] == "/inbox/"
    after = text_of(client.get("/inbox/"))
    assert badge(after) == 0 and "All read." in after and "Mark all read" not in after
    assert "Your replies are marked read." in after
    assert 'class="inbox-item unread"' not in after and len(CARD.findall(after)) == 2


def test_marking_read_leaves_a_reply_that_arrived_after_the_page_unread(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    comment(bob, a.id, "seen")
    login(client, ann)
    shown = text_of(client.get("/inbox/"))
    up_to = re.search(r'name="up_to" value="(\d+)"', shown).group(1)  # type: ignore[union-attr]
    late = comment(bob, a.id, "arrived meanwhile")
    post(client, "/inbox/read/", {"up_to": up_to}, form_page="/inbox/")
    page = selectors.inbox_page(user_id=ann.pk)
    assert [r.comment.id for r in page.items if r.unread] == [late.id]


def test_the_inbox_is_private_and_needs_a_login(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    comment(bob, article(ann).id, "for ann only")
    response = client.get("/inbox/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert client.post("/inbox/read/").status_code == 302
    login(client, bob)
    page = text_of(client.get("/inbox/"))
    assert "for ann only" not in page and "No replies yet." in page
    assert client.get("/inbox/")["Cache-Control"].startswith("max-age=0")


def test_the_inbox_pages_25_a_page(client, make_user, settings):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    ids = [comment(bob, a.id, f"reply {n}").id for n in range(27)]
    login(client, ann)
    first, second = client.get("/inbox/"), client.get("/inbox/?page=2")
    assert [int(c) for c in CARD.findall(text_of(first))] == ids[::-1][:25]
    assert [int(c) for c in CARD.findall(text_of(second))] == ids[1::-1]
    assert 'rel="next" href="/inbox/?page=2"' in text_of(first)
    assert client.get("/inbox/?page=9").status_code == 404
    assert client.get("/inbox/?page=x").status_code == 400


@pytest.mark.parametrize("bad", ["-1", "x", "1e3", "\uff19"])
def test_a_bad_number_is_a_400_and_marks_nothing(client, make_user, bad):
    ann, bob = make_user("ann"), make_user("bob")
    comment(bob, article(ann).id, "hi")
    login(client, ann)
    assert client.post("/inbox/read/", {"up_to": bad}).status_code == 400
    assert selectors.inbox_unread(user_id=ann.pk) == 1


def test_mark_read_without_a_number_marks_every_reply(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    comment(bob, article(ann).id, "hi")
    login(client, ann)
    assert client.post("/inbox/read/").status_code == 302
    assert selectors.inbox_unread(user_id=ann.pk) == 0


def test_the_header_count_costs_one_script_call_and_none_for_visitors(client, make_user, conn):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    comment(bob, a.id, "hi")
    url = f"/a/{a.id}/"
    client.get(url)
    anonymous = client_commands(conn, lambda: client.get(url))
    login(client, ann)
    client.get(url)  # the session's user kept, the scripts loaded
    logged_in = client_commands(conn, lambda: client.get(url))
    # The count is read in the kept session's own check (credential_epoch:<pk> with it):
    # the page makes the two round trips it made before, the check and its thread.
    counted = [c for c in logged_in if c.startswith("EVALSHA") and keys.inbox(ann.pk) in c]
    assert len(counted) == 1 and keys.credential_epoch(ann.pk) in counted[0], logged_in
    assert len(logged_in) == 2, logged_in
    assert not any(keys.inbox(ann.pk) in c for c in anonymous)


def test_without_a_kept_session_the_count_is_one_script_call(client, make_user, conn, settings):
    settings.ARTICLES_SESSION_CACHE_SECONDS = 0
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    comment(bob, a.id, "hi")
    login(client, ann)
    client.get(f"/a/{a.id}/")
    sent = client_commands(conn, lambda: client.get(f"/a/{a.id}/"))
    counted = [c for c in sent if keys.inbox(ann.pk) in c]
    assert len(counted) == 1 and "count" in counted[0], sent
    assert badge(text_of(client.get(f"/a/{a.id}/"))) == 1


def test_with_redis_down_the_inbox_is_a_503_and_other_pages_lose_only_the_count(client, make_user):
    ann = make_user("ann")
    login(client, ann)
    with redis_down():
        assert client.get("/inbox/").status_code == 503
        assert client.post("/inbox/read/").status_code == 503
        settings_page = client.get("/accounts/settings/")
    assert settings_page.status_code == 200 and "Inbox" in text_of(settings_page)


def test_the_digest_choice_is_off_by_default_and_saved_on_the_account_page(client, make_user):
    from articles.store import people

    ann = make_user("ann")
    login(client, ann)
    page = text_of(client.get("/accounts/settings/"))
    assert (
        'name="inbox_digest"' in page and "checked" not in page.split('name="inbox_digest"')[1][:40]
    )
    assert people.profile_of(ann).inbox_digest is False
    data = {"about": "", "email": "ann@example.org"}
    post(client, "/accounts/settings/", {**data, "inbox_digest": "on"})
    assert people.profile_of(ann).inbox_digest is True
    post(client, "/accounts/settings/", data)
    assert people.profile_of(ann).inbox_digest is False


def test_a_reply_deleted_since_is_not_in_the_inbox(client, make_user):
    from tests.actors import member_actor

    ann, bob = make_user("ann"), make_user("bob")
    gone = comment(bob, article(ann).id, "regret")
    services.comment_delete(comment_id=gone.id, actor=member_actor(bob.pk, "bob"))
    login(client, ann)
    page = text_of(client.get("/inbox/"))
    assert "regret" not in page and badge(page) == 0
