"""The comment pages and forms through Django's test client (CSRF checks on for forms)."""

from __future__ import annotations

import threading
import time
import uuid
from xml.dom import minidom

import pytest
from django.test import Client
from django.urls import reverse

from articles import conf
from articles.store import selectors, services
from articles.types import Vote
from articles.web import pagecache, rows
from tests.actors import member_actor, staff_actor
from tests.factories import article, comment
from tests.web.forms import login, post, text_of

pytestmark = pytest.mark.django_db

WEEK = 604_800


# --- the thread on the article page -----------------------------------------------------


def test_the_article_page_shows_nested_comments_each_collapsible_with_its_parts(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    top = comment(ann, a.id, "Top *level*")
    reply = comment(bob, a.id, "A reply", parent_id=top.id)
    services.comment_vote(comment_id=top.id, user_id=bob.pk, vote=Vote.UP)
    page = text_of(client.get(f"/a/{a.id}/"))
    assert 'id="comments"' in page and "2 comments" in page
    # The reply sits inside the top comment's <details>, so collapsing it hides the reply.
    top_html = page[page.index(f'id="c{top.id}"') :]
    assert top_html.index("<details open>") < top_html.index(f'id="c{reply.id}"')
    assert top_html.index(f'id="c{reply.id}"') < top_html.index("</details>")
    assert "<p>Top <em>level</em></p>" in page
    assert 'href="/u/ann/">ann</a>' in page and 'href="/u/bob/">bob</a>' in page
    assert f'href="/a/{a.id}/c/{top.id}/">permalink</a>' in page
    assert '<b data-field="net">1</b> <span data-field="points">point</span>' in page
    # Logged out: vote arrows and the comment form ask to log in first.
    assert "Log in to comment" in page and f"next=/a/{a.id}/%23comments" in page
    assert f'action="/c/{top.id}/vote/"' not in page


def test_logged_in_users_get_the_form_reply_links_and_vote_forms(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    top = comment(ann, a.id)
    login(client, make_user("bob"))
    page = text_of(client.get(f"/a/{a.id}/"))
    assert f'action="/a/{a.id}/comment/"' in page and 'name="text"' in page
    assert f'action="/c/{top.id}/vote/"' in page
    assert f'class="reply-link" href="/a/{a.id}/c/{top.id}/?next=/a/{a.id}/#reply"' in page
    assert 'id="reply-template"' in page and "comments.js" in page
    # bob may not edit or delete ann's comment, and is not staff.
    assert f"/c/{top.id}/edit/" not in page and f"/c/{top.id}/delete/" not in page
    assert f"/c/{top.id}/remove/" not in page


def test_the_author_sees_edit_and_delete_and_staff_see_remove(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    top = comment(ann, a.id)
    page = text_of(login(client, ann).get(f"/a/{a.id}/"))
    assert f'href="/c/{top.id}/edit/"' in page and f'href="/c/{top.id}/delete/"' in page
    page = text_of(login(client, make_user("mod", staff=True)).get(f"/a/{a.id}/"))
    assert f'href="/c/{top.id}/remove/"' in page
    # Each comment's part is kept per viewer state: what ann and mod saw, bob does not.
    page = text_of(login(client, make_user("bob")).get(f"/a/{a.id}/"))
    assert f"/c/{top.id}/edit/" not in page and f"/c/{top.id}/remove/" not in page


def test_sort_new_lists_newest_first_and_best_by_votes(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    older = comment(ann, a.id, "older one")
    comment(ann, a.id, "newer one")
    services.comment_vote(comment_id=older.id, user_id=bob.pk, vote=Vote.UP)
    best = text_of(client.get(f"/a/{a.id}/"))
    new = text_of(client.get(f"/a/{a.id}/?sort=new"))
    assert best.index("older one") < best.index("newer one")
    assert new.index("newer one") < new.index("older one")
    assert f'href="/a/{a.id}/?sort=new#comments" aria-current="page"' in new
    response = client.get(f"/a/{a.id}/?sort=sideways")
    assert response.status_code == 400 and "<strong>sort</strong>" in text_of(response)


def test_long_threads_have_pages_and_a_page_past_the_end_is_404(client, make_user, settings):
    settings.ARTICLES_COMMENTS_PER_PAGE = 2
    ann = make_user("ann")
    a = article(ann)
    for n in range(5):
        comment(ann, a.id, f"number {n}")
    first = text_of(client.get(f"/a/{a.id}/?sort=new"))
    assert "number 4" in first and "number 2" not in first
    assert "page 1 of 3" in first and "sort=new&amp;page=2#comments" in first
    third = text_of(client.get(f"/a/{a.id}/?sort=new&page=3"))
    assert "number 0" in third and "number 4" not in third
    past = client.get(f"/a/{a.id}/?page=9")
    assert past.status_code == 404 and "no page 9 of these comments" in text_of(past)


def test_replies_past_the_display_depth_get_continue_this_thread(client, make_user, settings):
    settings.ARTICLES_COMMENT_DISPLAY_DEPTH = 2
    ann = make_user("ann")
    a = article(ann)
    chain = [comment(ann, a.id, "depth 0")]
    for depth in range(1, 4):
        chain.append(comment(ann, a.id, f"depth {depth}", parent_id=chain[-1].id))
    page = text_of(client.get(f"/a/{a.id}/"))
    assert "depth 1" in page and "depth 2" not in page
    assert f'<a href="/a/{a.id}/c/{chain[1].id}/">continue this thread →</a>' in page
    # The permalink page counts its levels from the comment it shows.
    deeper = text_of(client.get(f"/a/{a.id}/c/{chain[1].id}/"))
    assert "depth 2" in deeper and "depth 3" not in deeper
    assert f'<a href="/a/{a.id}/c/{chain[2].id}/">continue this thread →</a>' in deeper
    assert "depth 3" in text_of(client.get(f"/a/{a.id}/c/{chain[2].id}/"))


def test_deleted_and_removed_comments_with_replies_leave_tombstones(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    gone = comment(ann, a.id, "will be deleted")
    comment(bob, a.id, "reply one", parent_id=gone.id)
    removed = comment(bob, a.id, "will be removed")
    comment(ann, a.id, "reply two", parent_id=removed.id)
    services.comment_delete(comment_id=gone.id, actor=member_actor(ann.pk))
    services.comment_remove(comment_id=removed.id, reason="spam", actor=staff_actor("mod"))
    page = text_of(client.get(f"/a/{a.id}/"))
    assert "[deleted]" in page and "[removed]" in page
    assert "will be deleted" not in page and "will be removed" not in page
    assert "reply one" in page and "reply two" in page
    login(client, bob)
    permalink = text_of(client.get(f"/a/{a.id}/c/{gone.id}/"))
    assert "This comment is deleted: it takes no new replies." in permalink
    assert 'id="reply"' not in permalink and "reply one" in permalink


def test_commenting_closed_says_so_and_a_post_is_refused_403_keeping_the_text(
    client, make_user, settings
):
    settings.ARTICLES_COMMENT_OPEN_SECONDS = 60
    ann = make_user("ann")
    a = article(ann, now=time.time() - 120)
    login(client, ann)
    page = text_of(client.get(f"/a/{a.id}/"))
    assert "Commenting on this article is closed." in page
    assert f'action="/a/{a.id}/comment/"' not in page
    response = client.post(f"/a/{a.id}/comment/", {"text": "Too late, sadly"})
    assert response.status_code == 403
    assert "closed for comments" in text_of(response)
    assert "Too late, sadly</textarea>" in text_of(response)


# --- posting -------------------------------------------------------------------------------


def test_posting_a_comment_and_a_reply(csrf_client, make_user):
    ann = make_user("ann")
    a = article(ann)
    login(csrf_client, ann)
    response = post(csrf_client, f"/a/{a.id}/comment/", {"text": "First!"}, form_page=f"/a/{a.id}/")
    (top,) = selectors.comment_thread(article_id=a.id).items
    assert response.status_code == 302
    assert response["Location"] == f"/a/{a.id}/?sort=new#c{top.id}"
    assert top.text == "First!" and top.author_name == "ann"
    response = post(
        csrf_client,
        f"/a/{a.id}/comment/",
        {"text": "line one\r\nline two", "parent": top.id},
        form_page=f"/a/{a.id}/c/{top.id}/",
    )
    reply = selectors.comment_thread(article_id=a.id).items[1]
    assert response["Location"] == f"/a/{a.id}/c/{top.id}/?sort=new#c{reply.id}"
    assert reply.parent_id == top.id and reply.text == "line one\nline two"
    assert selectors.article_get(article_id=a.id).comments == 2


def test_a_form_sent_twice_posts_one_comment(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    login(client, ann)
    data = {"text": "Only once", "idempotency_key": "k-123"}
    first = client.post(f"/a/{a.id}/comment/", data)
    second = client.post(f"/a/{a.id}/comment/", data)
    assert first["Location"] == second["Location"]
    assert selectors.article_get(article_id=a.id).comments == 1
    # The same key with another text (back, changed, sent again) asks to send it again.
    changed = client.post(f"/a/{a.id}/comment/", {**data, "text": "Another"})
    assert changed.status_code == 400 and "send it again" in text_of(changed)
    assert 'name="idempotency_key" value="k-123"' not in text_of(changed)
    assert "Another</textarea>" in text_of(changed)


@pytest.mark.parametrize(
    ("text", "message"),
    [("   ", "A comment needs some text."), ("x" * 51, "at most 50 characters")],
)
def test_a_refused_comment_comes_back_400_with_the_text_and_why(
    client, make_user, settings, text, message
):
    settings.ARTICLES_COMMENT_MAX_LENGTH = 50
    ann = make_user("ann")
    a = article(ann)
    login(client, ann)
    response = client.post(f"/a/{a.id}/comment/", {"text": text})
    page = text_of(response)
    assert response.status_code == 400
    assert message in page and "was not posted" in page
    assert f"{text.strip()}</textarea>" in page
    assert selectors.article_get(article_id=a.id).comments == 0


def test_a_reply_too_deep_comes_back_400_naming_the_parent_rule(client, make_user, settings):
    settings.ARTICLES_COMMENT_MAX_DEPTH = 1
    ann = make_user("ann")
    a = article(ann)
    top = comment(ann, a.id)
    child = comment(ann, a.id, parent_id=top.id)
    login(client, ann)
    response = client.post(f"/a/{a.id}/comment/", {"text": "deeper", "parent": child.id})
    assert response.status_code == 400
    assert "nest at most 1 levels deep" in text_of(response)
    assert "deeper</textarea>" in text_of(response)
    # The comment it answers is shown above the form.
    assert f'id="c{child.id}"' in text_of(response)


@pytest.mark.usefixtures("clock")
def test_too_many_comments_answer_429_keeping_the_text(client, make_user, settings):
    settings.ARTICLES_RATE_LIMITS = {"comment": (2, 600)}
    ann = make_user("ann")
    a = article(ann)
    login(client, ann)
    for n in range(2):
        assert client.post(f"/a/{a.id}/comment/", {"text": f"c{n}"}).status_code == 302
    response = client.post(f"/a/{a.id}/comment/", {"text": "the third one"})
    assert response.status_code == 429
    assert response["Retry-After"] == "600"  # the clock stopped as the window began
    assert "Too many comments: at most 2 every 10 minutes" in text_of(response)
    assert "the third one</textarea>" in text_of(response)


def test_posting_needs_a_login_and_csrf(client, csrf_client, make_user):
    a = article(make_user("ann"))
    response = client.post(f"/a/{a.id}/comment/", {"text": "hi"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    login(csrf_client, make_user("bob"))
    assert csrf_client.post(f"/a/{a.id}/comment/", {"text": "hi"}).status_code == 403
    assert selectors.article_get(article_id=a.id).comments == 0


def test_a_comment_on_an_unknown_article_or_parent_is_404(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    login(client, ann)
    assert client.post("/a/999/comment/", {"text": "hi"}).status_code == 404
    assert client.post(f"/a/{a.id}/comment/", {"text": "hi", "parent": 999}).status_code == 404


# --- permalinks ------------------------------------------------------------------------------


def test_a_permalink_shows_the_subthread_with_context_and_the_reply_form(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann, title="The article")
    top = comment(ann, a.id, "the top")
    mid = comment(bob, a.id, "the middle", parent_id=top.id)
    comment(ann, a.id, "the bottom", parent_id=mid.id)
    comment(ann, a.id, "a sibling elsewhere")
    page = text_of(client.get(f"/a/{a.id}/c/{mid.id}/"))
    assert "the middle" in page and "the bottom" in page
    assert "the top" not in page and "a sibling elsewhere" not in page
    assert f'href="/a/{a.id}/c/{top.id}/#c{top.id}">← context' in page
    assert f'href="/a/{a.id}/">The article</a>' in page
    assert "Log in to reply" in page
    page = text_of(login(client, bob).get(f"/a/{a.id}/c/{mid.id}/"))
    assert 'id="reply"' in page and f'name="parent" value="{mid.id}"' in page


def test_unknown_comments_are_404_and_a_wrong_article_redirects(client, make_user):
    ann = make_user("ann")
    a, b = article(ann), article(ann, title="Other", link="https://example.org/b")
    c = comment(ann, a.id)
    assert client.get(f"/a/{a.id}/c/999/").status_code == 404
    assert client.get("/c/999/").status_code == 404
    assert client.get(f"/a/999/c/{c.id}/").status_code == 404
    wrong = client.get(f"/a/{b.id}/c/{c.id}/")
    assert wrong.status_code in (301, 404)
    short = client.get(f"/c/{c.id}/")
    assert short.status_code == 302 and short["Location"] == f"/a/{a.id}/c/{c.id}/"


# --- voting ----------------------------------------------------------------------------------


def test_voting_without_javascript_returns_to_the_comment(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id)
    login(client, make_user("bob"))
    response = client.post(f"/c/{c.id}/vote/", {"direction": "up", "next": f"/a/{a.id}/?sort=new"})
    assert response.status_code == 302
    assert response["Location"] == f"/a/{a.id}/?sort=new#c{c.id}"
    assert selectors.comment_get(comment_id=c.id).votes == 1
    # An off-site next is ignored.
    response = client.post(f"/c/{c.id}/vote/", {"direction": "none", "next": "//evil.example/"})
    assert response["Location"] == f"/c/{c.id}/#c{c.id}"
    assert selectors.comment_get(comment_id=c.id).votes == 0


def test_a_vote_asked_for_json_answers_the_counts(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id)
    login(client, make_user("bob"))
    response = client.post(
        f"/c/{c.id}/vote/", {"direction": "down"}, HTTP_ACCEPT="application/json"
    )
    assert response.json() == {"id": c.id, "votes": 0, "downvotes": 1, "net": -1, "my_vote": "down"}
    page = text_of(client.get(f"/a/{a.id}/"))
    assert "you voted down" in page and 'aria-pressed="true"' in page


def test_vote_errors_are_clear(client, make_user, settings):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id)
    response = client.post(f"/c/{c.id}/vote/", {"direction": "up"}, HTTP_ACCEPT="application/json")
    assert response.status_code == 401 and response.json()["code"] == "login_required"
    login(client, make_user("bob"))
    bad = client.post(f"/c/{c.id}/vote/", {"direction": "sideways"})
    assert bad.status_code == 400 and "<strong>direction</strong>" in text_of(bad)
    assert client.post("/c/999/vote/", {"direction": "up"}).status_code == 404
    old = article(ann, title="Old", link="https://example.org/old", now=time.time() - WEEK - 5)
    settings.ARTICLES_COMMENT_OPEN_SECONDS = 2 * WEEK
    late = comment(ann, old.id)
    closed = client.post(f"/c/{late.id}/vote/", {"direction": "up"})
    assert closed.status_code == 409 and "voting window is over" in text_of(closed)
    assert "Voting closed" in text_of(client.get(f"/a/{old.id}/"))


# --- edit, delete, remove --------------------------------------------------------------------


def test_the_author_edits_within_the_window_and_the_page_says_edited(csrf_client, make_user):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id, "first version")
    login(csrf_client, ann)
    form = text_of(csrf_client.get(f"/c/{c.id}/edit/"))
    assert "first version</textarea>" in form
    response = post(
        csrf_client, f"/c/{c.id}/edit/", {"text": "second version"}, form_page=f"/c/{c.id}/edit/"
    )
    assert response.status_code == 302 and response["Location"] == f"/a/{a.id}/c/{c.id}/"
    page = text_of(csrf_client.get(f"/a/{a.id}/"))
    assert "second version" in page and ">edited</span>" in page
    bad = csrf_client.post(f"/c/{c.id}/edit/", {"text": ""})
    assert bad.status_code == 403  # no CSRF token
    csrf_client.get(f"/c/{c.id}/edit/")
    token = csrf_client.cookies["csrftoken"].value
    bad = csrf_client.post(f"/c/{c.id}/edit/", {"text": "  ", "csrfmiddlewaretoken": token})
    assert bad.status_code == 400 and "A comment needs some text." in text_of(bad)


def test_others_may_not_edit_or_delete_and_the_window_closes(client, make_user, settings):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    c = comment(ann, a.id)
    login(client, bob)
    for url in (f"/c/{c.id}/edit/", f"/c/{c.id}/delete/"):
        assert client.get(url).status_code == 403, url
        assert client.post(url, {"text": "mine now"}).status_code == 403, url
    assert selectors.comment_get(comment_id=c.id).text == "A comment."
    settings.ARTICLES_COMMENT_EDIT_SECONDS = 60
    old = comment(ann, a.id, "old words", now=time.time() - 120)
    login(client, ann)
    response = client.get(f"/c/{old.id}/edit/")
    assert response.status_code == 403 and "edit window is over" in text_of(response)
    assert f"/c/{old.id}/edit/" not in text_of(client.get(f"/a/{a.id}/"))
    assert client.get("/c/999/edit/").status_code == 404
    logged_out = Client().get(f"/c/{c.id}/edit/")
    assert logged_out.status_code == 302 and "/accounts/login/" in logged_out["Location"]


def test_delete_asks_first_then_leaves_a_tombstone_or_nothing(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(ann)
    parent = comment(ann, a.id, "has a reply")
    comment(bob, a.id, "the reply", parent_id=parent.id)
    lonely = comment(ann, a.id, "no replies")
    login(client, ann)
    confirm = text_of(client.get(f"/c/{parent.id}/delete/"))
    assert "Delete your comment?" in confirm and "“[deleted]”" in confirm
    assert selectors.comment_get(comment_id=parent.id).visible  # asking changed nothing
    response = client.post(f"/c/{parent.id}/delete/")
    assert response.status_code == 302
    assert response["Location"] == f"/a/{a.id}/#comments"
    client.post(f"/c/{lonely.id}/delete/")
    page = text_of(client.get(f"/a/{a.id}/"))
    assert "[deleted]" in page and "has a reply" not in page and "no replies" not in page
    assert "the reply" in page
    assert client.get(f"/c/{lonely.id}/delete/").status_code == 404


def test_staff_remove_with_a_reason_logged_and_others_refused(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id, "spam spam")
    login(client, ann)
    assert client.get(f"/c/{c.id}/remove/").status_code == 403
    login(client, make_user("mod", staff=True))
    confirm = client.get(f"/c/{c.id}/remove/")
    assert confirm.status_code == 200 and 'name="reason"' in text_of(confirm)
    missing = client.post(f"/c/{c.id}/remove/", {"reason": ""})
    assert missing.status_code == 400 and "This field is required." in text_of(missing)
    assert selectors.comment_get(comment_id=c.id).visible
    response = client.post(f"/c/{c.id}/remove/", {"reason": "Advertising <b>"})
    assert response.status_code == 302
    assert "spam spam" not in text_of(client.get(f"/a/{a.id}/"))
    modlog = text_of(client.get("/modlog/"))
    assert "Advertising &lt;b&gt;" in modlog


def test_the_log_links_a_removed_comment_while_its_tombstone_stays(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    parent = comment(ann, a.id, "has a reply")
    comment(make_user("bob"), a.id, "the reply", parent_id=parent.id)
    lone = comment(ann, a.id, "no replies")
    login(client, make_user("mod", staff=True))
    for c in (parent, lone):
        assert client.post(f"/c/{c.id}/remove/", {"reason": "off topic"}).status_code == 302
    log = text_of(client.get("/modlog/"))
    assert f'<a href="/a/{a.id}/c/{parent.id}/">comment {parent.id}</a>' in log
    assert client.get(f"/a/{a.id}/c/{parent.id}/").status_code == 200  # a working link
    assert f'comment {lone.id} <span class="muted">(deleted)</span>' in log
    assert f"/c/{lone.id}/" not in log


# --- listings, user pages, feed --------------------------------------------------------------


def test_listings_show_the_comment_count_linking_to_the_thread(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    login(client, ann)  # no anonymous page cache: this is about the row cache
    assert f'href="/a/{a.id}/#comments">0 comments</a>' in text_of(client.get("/new/"))
    comment(ann, a.id)
    # The row cache is keyed by the article as read, its count included: no stale row.
    assert f'href="/a/{a.id}/#comments">1 comment</a>' in text_of(client.get("/new/"))
    comment(ann, a.id)
    assert f'href="/a/{a.id}/#comments">2 comments</a>' in text_of(client.get("/new/"))
    assert f'href="/a/{a.id}/#comments">2 comments</a>' in text_of(client.get(f"/a/{a.id}/"))


def test_a_comment_write_drops_the_kept_anonymous_pages(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    anonymous = Client()
    assert "No comments yet." in text_of(anonymous.get(f"/a/{a.id}/"))
    assert any(k.startswith(f"/a/{a.id}/") for k in pagecache._pages)
    login(client, ann)
    client.post(f"/a/{a.id}/comment/", {"text": "Fresh words"})
    assert "Fresh words" in text_of(anonymous.get(f"/a/{a.id}/"))
    rows.clear()


def test_a_comment_vote_drops_only_its_articles_kept_pages(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id)
    anonymous = Client()
    for url in (f"/a/{a.id}/", f"/a/{a.id}/c/{c.id}/", "/new/"):
        assert anonymous.get(url).status_code == 200
    login(client, make_user("bob")).post(f"/c/{c.id}/vote/", {"direction": "up"})
    # A kept page's key is its path, then the language it is in.
    assert sorted(pagecache._pages) == ["/new/#en"]
    assert '<b data-field="net">1</b>' in text_of(anonymous.get(f"/a/{a.id}/"))


def test_new_comments_page_lists_the_newest_with_their_articles_and_pages(
    client, make_user, settings
):
    ann = make_user("ann")
    a = article(ann, title="Something <b>bold</b>")
    now = time.time()
    for n in range(30):
        comment(ann, a.id, f"comment number {n}", now=now - 30 + n)
    page = text_of(client.get("/comments/"))
    assert 'href="/comments/" aria-current="page">Comments</a>' in page
    assert page.index("comment number 29") < page.index("comment number 28")
    assert "comment number 4" not in page and "page 1 of 2" in page
    assert "Something &lt;b&gt;bold&lt;/b&gt;" in page
    assert "comment number 4" in text_of(client.get("/comments/?page=2"))
    assert client.get("/comments/?page=5").status_code == 404
    assert client.get("/comments/?page=x").status_code == 400


def test_the_user_page_shows_their_recent_comments(client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = article(bob)
    comment(ann, a.id, "ann says hi")
    comment(bob, a.id, "bob says hi")
    page = text_of(client.get("/u/ann/"))
    assert 'id="user-comments-title"' in page
    assert "ann says hi" in page and "bob says hi" not in page
    assert f'href="/a/{a.id}/">Hello world</a>' in page


def test_the_comments_feed_is_valid_atom_linked_from_the_article(client, make_user):
    ann = make_user("ann")
    a = article(ann, title="Feed <me>")
    first = comment(ann, a.id, "Older *one*")
    comment(ann, a.id, "Newer <script>x</script>", parent_id=first.id)
    services.comment_edit(
        comment_id=first.id, text="Older *one*, edited", actor=member_actor(ann.pk)
    )
    response = client.get(f"/feeds/a/{a.id}/comments/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    feed = minidom.parseString(response.content)  # noqa: S318 (our own answer)
    root = feed.documentElement
    assert root.tagName == "feed" and root.getAttribute("xmlns") == "http://www.w3.org/2005/Atom"
    title = root.getElementsByTagName("title")[0].firstChild.data
    assert title == f"{conf.site_name()}: comments on Feed <me>"
    entries = root.getElementsByTagName("entry")
    assert len(entries) == 2
    for entry in entries:
        for tag in ("title", "link", "id", "updated", "published", "author", "summary"):
            assert entry.getElementsByTagName(tag), tag
    summaries = [e.getElementsByTagName("summary")[0].firstChild.data for e in entries]
    assert "&lt;script&gt;" in summaries[0] and "<script>" not in summaries[0]
    assert "<em>one</em>, edited" in summaries[1]
    updated = entries[1].getElementsByTagName("updated")[0].firstChild.data
    published = entries[1].getElementsByTagName("published")[0].firstChild.data
    assert updated >= published
    link = entries[0].getElementsByTagName("link")[0].getAttribute("href")
    assert link.endswith(f"/a/{a.id}/c/{first.id + 1}/")
    page = text_of(client.get(f"/a/{a.id}/"))
    alternate = (
        '<link rel="alternate" type="application/atom+xml" '
        f'title="Comments on Feed &lt;me&gt;" href="/feeds/a/{a.id}/comments/">'
    )
    assert alternate in page
    assert client.get("/feeds/a/999/comments/").status_code == 404


# --- escaping ----------------------------------------------------------------------------------


def test_comment_text_and_names_are_escaped_everywhere(client, make_user):
    evil = make_user('<img src=x onerror=alert("n")>')
    a = article(evil)
    c = comment(evil, a.id, '<script>alert("t")</script> [x](javascript:alert(1)) "quoted"')
    urls = [
        f"/a/{a.id}/",
        f"/a/{a.id}/c/{c.id}/",
        "/comments/",
        reverse("articles:user-detail", args=[evil.username]),
    ]
    for url in urls:
        page = text_of(client.get(url))
        assert "<script>alert" not in page, url
        assert "<img src=x" not in page, url
        assert "javascript:alert" not in page.split("[x](")[0], url
        assert 'href="javascript:' not in page, url
        assert "&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;" in page, url


# A connection's own set-up and health checks, whenever the pool makes or tests one.
_HANDSHAKE = {"PING", "HELLO", "CLIENT", "SELECT", "AUTH"}


def client_commands(conn, call) -> list[str]:  # type: ignore[no-untyped-def]
    """The commands clients sent to Redis while `call` ran (MONITOR; the commands a Lua
    script runs inside its one call, and connection set-up, are left out)."""
    mark, seen, ready = f"end-{uuid.uuid4().hex}", [], threading.Event()

    def watch() -> None:
        with conn.monitor() as monitor:
            ready.set()
            for command in monitor.listen():
                if mark in command["command"]:
                    return
                name = command["command"].split(" ", 1)[0].upper()
                if command.get("client_type") != "lua" and name not in _HANDSHAKE:
                    seen.append(command["command"])

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert ready.wait(5)
    call()
    conn.echo(mark)
    watcher.join(10)
    return seen


def test_a_2000_comment_thread_renders_with_as_many_round_trips_as_a_5_comment_one(
    client, make_user, conn
):
    """The article page sends Redis the same commands whatever the size of its thread (the
    thread is one script call), counted by the server."""
    ann, bob = make_user("ann"), make_user("bob")
    small, big = article(ann, "Small"), article(ann, "Big", link="https://example.org/b")
    for n in range(5):
        comment(bob, small.id, f"small {n}")
    tops = [comment(bob, big.id, f"top {n}").id for n in range(300)]
    parent = tops[0]
    for n in range(1700):  # replies spread under the first 40 top-level comments, and chains
        parent = comment(ann, big.id, f"reply {n}", parent if n % 5 else tops[n % 40]).id
    assert selectors.article_get(article_id=big.id).comments == 2000
    login(client, bob)

    def sent(url: str) -> list[str]:
        assert client.get(url).status_code == 200  # warm: session, scripts, row caches
        return client_commands(conn, lambda: client.get(url))

    small_page, big_page = sent(f"/a/{small.id}/"), sent(f"/a/{big.id}/")
    assert 0 < len(big_page) == len(small_page) <= 3, big_page
    assert len(sent(f"/a/{big.id}/?sort=new&page=2")) == len(small_page)
