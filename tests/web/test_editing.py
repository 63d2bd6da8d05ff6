"""Editing and deleting articles: the poster's own (while voting is open) and staff's, the
moderation log's tombstones, and rate-limited forms that keep what was typed."""

from __future__ import annotations

import re
import time

import pytest
from django.test import Client

from articles.errors import ArticleNotFound, InvalidInput, NotAllowed
from articles.store import clock, keys, selectors, services
from tests.actors import member_actor, staff_actor
from tests.factories import article
from tests.web.forms import login, post, text_of

pytestmark = pytest.mark.django_db

WEEK = 604_800


def text_post(user, title: str = "Sorted sets", text: str = "About zsets.", **kw):  # type: ignore[no-untyped-def]
    return article(user, title=title, link="", text=text, **kw)


@pytest.fixture
def csrf_client() -> Client:
    return Client(enforce_csrf_checks=True)


def found(q: str) -> list[int]:
    return [a.id for a in selectors.article_search(q=q).items]


def indexed(conn, word: str) -> set[bytes]:  # type: ignore[no-untyped-def]
    return conn.smembers(keys.postings(word))


# --- the store ---------------------------------------------------------------------------


def test_a_poster_edits_title_and_text_in_one_step_and_search_follows(conn, make_user, settings):
    settings.ARTICLES_SEARCH_LANGUAGE = ""  # the index word for word, as typed
    ann = make_user("ann")
    a = text_post(ann, title="Sorted sets", text="Skiplists inside")
    assert indexed(conn, "skiplists") == {b"1"}
    edited = services.article_edit(
        article_id=a.id,
        title="Hyperloglog counts",
        text="Cardinality estimates",
        actor=member_actor(ann.pk, "ann"),
    )
    assert (edited.title, edited.text) == ("Hyperloglog counts", "Cardinality estimates")
    assert edited.edited is not None and abs(edited.edited - time.time()) < 5
    assert indexed(conn, "skiplists") == set() and indexed(conn, "sorted") == set()
    assert found("cardinality") == [a.id] and found("hyperloglog") == [a.id]
    assert not conn.hexists(keys.article(a.id), "words")  # made from the fields, not kept
    assert conn.llen(keys.MODLOG) == 0  # a poster's own edit is not moderation


def test_a_poster_may_not_edit_after_voting_closes_nor_others_nor_the_link(make_user):
    ann, bob = make_user("ann"), make_user("bob")
    closed = text_post(ann, now=time.time() - WEEK - 5)
    open_ = article(ann)
    mine = {"actor": member_actor(ann.pk, "ann")}
    with pytest.raises(NotAllowed, match="closed"):
        services.article_edit(article_id=closed.id, title="Late", **mine)
    with pytest.raises(NotAllowed):
        services.article_edit(
            article_id=open_.id, title="Theirs", actor=member_actor(bob.pk, "bob")
        )
    with pytest.raises(NotAllowed, match="link"):
        services.article_edit(article_id=open_.id, title="X", link="https://e.org/new", **mine)
    assert selectors.article_get(article_id=closed.id).title == "Sorted sets"
    assert selectors.article_get(article_id=open_.id).title == "Hello world"
    # Sending the link unchanged is no link change.
    same = services.article_edit(article_id=open_.id, title="Y", link=open_.link, **mine)
    assert same.title == "Y"


def test_staff_edit_a_texts_body_at_any_time_and_it_is_logged(conn, make_user):
    closed = text_post(make_user("ann"), now=time.time() - WEEK - 5)
    services.article_edit(
        article_id=closed.id,
        title="Sorted sets",
        text="Cleaned up.",
        reason="spam",
        actor=staff_actor("mod"),
    )
    assert selectors.article_get(article_id=closed.id).text == "Cleaned up."
    entry = selectors.modlog_page().items[0]
    assert (entry.actor, entry.action, entry.reason) == ("mod", "edit", "spam")


def test_an_article_left_with_neither_link_nor_text_is_refused_and_unchanged(make_user):
    ann = make_user("ann")
    a = text_post(ann)
    with pytest.raises(InvalidInput) as info:
        services.article_edit(
            article_id=a.id, title="T", text="", actor=member_actor(ann.pk, "ann")
        )
    assert info.value.field == "text"
    assert selectors.article_get(article_id=a.id).text == "About zsets."
    with pytest.raises(ArticleNotFound):
        services.article_edit(article_id=999, title="T", actor=staff_actor("mod"))


# --- the poster's pages ------------------------------------------------------------------


def test_the_poster_edits_on_a_form_and_the_article_says_edited(csrf_client, make_user):
    ann = make_user("ann")
    a = text_post(ann)
    login(csrf_client, ann)
    page = text_of(csrf_client.get(f"/a/{a.id}/"))
    assert f'href="/a/{a.id}/edit/"' in page and f'href="/a/{a.id}/delete/"' in page
    assert "<dt>Edited</dt>" not in page
    form = text_of(csrf_client.get(f"/a/{a.id}/edit/"))
    assert 'name="title"' in form and 'name="text"' in form and "About zsets." in form
    response = post(csrf_client, f"/a/{a.id}/edit/", {"title": "New title", "text": "New text"})
    assert response.status_code == 302 and response["Location"] == f"/a/{a.id}/"
    page = text_of(csrf_client.get(f"/a/{a.id}/"))
    assert "New title" in page and "New text" in page and "<dt>Edited</dt>" in page


def test_a_link_posts_edit_form_has_no_text_and_keeps_the_link(csrf_client, make_user):
    ann = make_user("ann")
    a = article(ann)
    login(csrf_client, ann)
    form = text_of(csrf_client.get(f"/a/{a.id}/edit/"))
    assert 'name="text"' not in form and 'name="link"' not in form
    post(csrf_client, f"/a/{a.id}/edit/", {"title": "Renamed", "link": "https://evil.example/"})
    after = selectors.article_get(article_id=a.id)
    assert (after.title, after.link) == ("Renamed", "https://example.org/a")


def test_a_bad_edit_comes_back_with_its_errors_and_what_was_typed(csrf_client, make_user):
    ann = make_user("ann")
    a = text_post(ann)
    login(csrf_client, ann)
    response = post(csrf_client, f"/a/{a.id}/edit/", {"title": "Kept title", "text": ""})
    assert response.status_code == 400
    assert "Give a link, a text, or both." in text_of(response)
    assert 'value="Kept title"' in text_of(response)
    assert selectors.article_get(article_id=a.id).title == "Sorted sets"


def test_others_and_late_posters_get_403_and_no_links(csrf_client, client, make_user):
    ann, bob = make_user("ann"), make_user("bob")
    a = text_post(ann)
    closed = text_post(ann, title="Old", now=time.time() - WEEK - 5)
    login(client, bob)
    assert f'href="/a/{a.id}/edit/"' not in text_of(client.get(f"/a/{a.id}/"))
    for url in (f"/a/{a.id}/edit/", f"/a/{a.id}/delete/"):
        assert client.get(url).status_code == 403
        assert client.post(url, {"title": "Mine"}).status_code == 403
    login(client, ann)
    assert f'href="/a/{closed.id}/edit/"' not in text_of(client.get(f"/a/{closed.id}/"))
    refused = client.get(f"/a/{closed.id}/edit/")
    assert refused.status_code == 403 and "while voting is open" in text_of(refused)
    assert selectors.article_get(article_id=a.id).title == "Sorted sets"
    anonymous = csrf_client.get(f"/a/{a.id}/edit/")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_the_poster_deletes_after_a_confirmation_page(csrf_client, make_user, conn):
    ann = make_user("ann")
    a = text_post(ann)
    login(csrf_client, ann)
    confirm = csrf_client.get(f"/a/{a.id}/delete/")
    assert confirm.status_code == 200 and "Delete your article?" in text_of(confirm)
    assert selectors.article_get(article_id=a.id).id == a.id  # asking deletes nothing
    response = post(csrf_client, f"/a/{a.id}/delete/", {})
    assert response.status_code == 302 and response["Location"] == "/u/ann/"
    with pytest.raises(ArticleNotFound):
        selectors.article_get(article_id=a.id)
    assert conn.llen(keys.MODLOG) == 0


# --- staff -------------------------------------------------------------------------------


def test_staff_deletion_asks_for_a_reason_then_logs_it(csrf_client, make_user):
    a = text_post(make_user("ann"))
    login(csrf_client, make_user("mod", staff=True))
    assert f'href="/staff/a/{a.id}/delete/"' in text_of(csrf_client.get(f"/a/{a.id}/"))
    url = f"/staff/a/{a.id}/delete/"
    confirm = csrf_client.get(url)
    assert confirm.status_code == 200 and 'name="reason"' in text_of(confirm)
    refused = post(csrf_client, url, {"reason": "  "})
    assert refused.status_code == 400 and "required" in text_of(refused)
    assert selectors.article_get(article_id=a.id).id == a.id
    done = post(csrf_client, url, {"reason": "Off topic"})
    assert done.status_code == 302
    with pytest.raises(ArticleNotFound):
        selectors.article_get(article_id=a.id)
    entry = selectors.modlog_page().items[0]
    assert (entry.action, entry.reason) == ("delete", "Off topic")


def test_staff_edit_a_text_posts_body_on_the_staff_page(csrf_client, make_user):
    a = text_post(make_user("ann"))
    login(csrf_client, make_user("mod", staff=True))
    page = f"/staff/a/{a.id}/"
    assert 'name="text"' in text_of(csrf_client.get(page))
    data = {"title": "Sorted sets", "link": "", "text": "Edited by staff.", "reason": "typo"}
    assert post(csrf_client, page, data).status_code == 302
    assert selectors.article_get(article_id=a.id).text == "Edited by staff."
    link_post = article(make_user("bob"))
    assert 'name="text"' not in text_of(csrf_client.get(f"/staff/a/{link_post.id}/"))


# --- the moderation log ------------------------------------------------------------------


def test_the_log_shows_deleted_articles_and_groups_as_tombstones(client, make_user):
    ann = make_user("ann")
    services.group_create(name="redis", actor=staff_actor("mod"))
    services.group_create(name="gone", actor=staff_actor("mod"))
    kept = article(ann, title="Kept one", groups=["redis", "gone"])
    dropped = article(ann, title="Dropped one", link="https://example.org/b")
    services.article_edit(
        article_id=kept.id, title="Kept one", reason="r", actor=staff_actor("mod")
    )
    services.article_groups_update(article_id=kept.id, remove=["redis"], actor=staff_actor("mod"))
    services.article_delete(article_id=dropped.id, reason="spam", actor=staff_actor("mod", pk=0))
    services.group_delete(name="gone", reason="unused", actor=staff_actor("mod"))
    log = text_of(client.get("/modlog/"))
    assert f'<a href="/a/{kept.id}/">article {kept.id}</a>' in log
    assert f'href="/a/{dropped.id}/"' not in log
    assert f'article {dropped.id} <span class="muted">(deleted)</span>' in log
    assert "“Dropped one”" in log
    assert '\u2212<a href="/g/redis/">redis</a>' in log  # a minus sign: taken off
    assert '<a href="/g/redis/">group redis</a>' in log
    assert 'href="/g/gone/"' not in log
    assert 'group gone <span class="muted">(deleted)</span>' in log


def test_the_log_page_knows_which_of_its_targets_still_exist(make_user, conn):
    ann = make_user("ann")
    services.group_create(name="redis", actor=staff_actor("mod"))
    for n in range(5):
        a = article(ann, title=f"A{n}", link=f"https://example.org/{n}", groups=["redis"])
        services.article_delete(article_id=a.id, reason="spam", actor=staff_actor("mod", pk=0))
    page = selectors.modlog_page()
    assert len(page.items) == 6 and page.articles == frozenset()
    assert page.groups == frozenset({"redis"})


# --- rate-limited forms ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (1, "in 1 second"),
        (45, "in 45 seconds"),
        (2608, "in 43 minutes"),
        (2640, "in 44 minutes"),
        (5400, "in 2 hours"),
        (3 * 3600, "in 3 hours"),
    ],
)
def test_waits_are_said_in_words(seconds, words):
    assert clock.in_words(seconds) == words


def test_a_rate_limited_post_keeps_what_was_typed(csrf_client, make_user, settings, clock):
    login(csrf_client, make_user("ann"))
    settings.ARTICLES_RATE_LIMITS = {"post": (0, 3600)}
    clock.advance(16 * 60)
    data = {"title": "Typed with care", "link": "", "text": "Two\nlines of text"}
    response = post(csrf_client, "/submit/", data)
    assert response.status_code == 429
    assert response["Retry-After"] == str(44 * 60)
    page = text_of(response)
    assert 'value="Typed with care"' in page and "Two\nlines of text</textarea>" in page
    said = r"Too many posts: at most 0 every hour\. Try again in 44 minutes"
    assert re.search(said, page)
    assert not re.search(r"again in \d+ s\b", page)
    assert selectors.article_list().count == 0


@pytest.mark.usefixtures("clock")
def test_a_rate_limited_sign_up_keeps_the_name(csrf_client, settings):
    settings.ARTICLES_RATE_LIMITS = {"signup": (0, 3600)}
    data = {"username": "newcomer", "password1": "x-Secret-98765", "password2": "x-Secret-98765"}
    response = post(csrf_client, "/signup/", data)
    assert response.status_code == 429 and response["Retry-After"] == "3600"
    page = text_of(response)
    assert 'value="newcomer"' in page and "Too many sign-ups" in page and "Try again in" in page
