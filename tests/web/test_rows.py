"""The listing rows kept per (article, version, viewer state): what a viewer sees of a row
is theirs (vote, CSRF token, page path), and never another viewer's."""

from __future__ import annotations

import re
import time

import pytest
from django.test import Client

from articles.store import services
from articles.types import Vote
from articles.web import rows
from tests.factories import article

pytestmark = pytest.mark.django_db


def logged_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def row_of(html: str, article_id: int) -> str:
    match = re.search(rf'<article class="item" id="a{article_id}".*?</article>', html, re.S)
    assert match, f"no row for article {article_id}"
    return match.group(0)


def test_a_viewer_sees_their_own_vote_at_once_though_the_row_was_kept(make_user):
    poster, voter = make_user(), make_user()
    a = article(poster)
    client = logged_in(voter)
    before = row_of(client.get("/new/").content.decode(), a.id)
    assert 'aria-pressed="false"' in before and "you voted" not in before
    services.article_vote(article_id=a.id, user_id=voter.pk, direction=Vote.UP)
    after = row_of(client.get("/new/").content.decode(), a.id)
    assert "voted-up" in after and "you voted up" in after and 'value="none"' in after
    services.article_vote(article_id=a.id, user_id=voter.pk, direction=Vote.DOWN)
    again = row_of(client.get("/new/").content.decode(), a.id)
    assert "voted-down" in again and "you voted down" in again


def test_each_viewer_gets_their_own_csrf_token_in_a_shared_row(make_user):
    """Ensure two users with the same vote state (one kept row) each get their own token."""
    poster = make_user()
    a = article(poster)
    tokens = []
    for user in (make_user(), make_user()):
        client = logged_in(user)
        html = client.get("/new/").content.decode()
        row = row_of(html, a.id)
        in_row = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', row)
        in_page = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
        # one a form (the vote's, the reader's save and hide), each this viewer's
        assert len(in_row) == row.count("<form") == 2 and set(in_page) == set(in_row)
        tokens.append(in_row[0])
    assert tokens[0] != tokens[1]
    assert len(rows._rows) == 1  # one row served both


def test_the_vote_form_returns_to_the_page_it_is_on(make_user):
    poster, voter = make_user(), make_user()
    a = article(poster)
    client = logged_in(voter)
    for path in ("/new/", "/top/?period=week&amp;x=1", f"/u/{poster.username}/"):
        url = path.replace("&amp;", "&")
        row = row_of(client.get(url).content.decode(), a.id)
        assert f'name="next" value="{path}"' in row
    anonymous = Client()
    row = row_of(anonymous.get("/top/?period=day").content.decode(), a.id)
    assert "?next=/top/%3Fperiod%3Dday" in row


def test_staff_and_visitors_each_see_their_own_kind_of_row(make_user):
    poster = make_user()
    a = article(poster)
    staff = row_of(logged_in(make_user(staff=True)).get("/new/").content.decode(), a.id)
    plain = row_of(logged_in(make_user()).get("/new/").content.decode(), a.id)
    visitor = row_of(Client().get("/new/").content.decode(), a.id)
    assert "moderate" in staff and "moderate" not in plain and "moderate" not in visitor
    assert "vote-form" in plain and "vote-form" not in visitor and "Log in to vote" in visitor


def test_a_changed_article_is_a_new_row(make_user):
    poster, voter = make_user(), make_user()
    a = article(poster)
    client = logged_in(poster)
    assert '<b data-field="net">1</b>' in row_of(client.get("/new/").content.decode(), a.id)
    services.article_vote(article_id=a.id, user_id=voter.pk, direction=Vote.UP)
    assert '<b data-field="net">2</b>' in row_of(client.get("/new/").content.decode(), a.id)


def test_a_title_that_looks_like_a_slot_stays_text(make_user):
    """Ensure only the template's own slots are filled: text that resembles one is escaped."""
    poster = make_user()
    title = '<script>x</script> vsrowpath: vsrowcsrf <input name="csrfmiddlewaretoken">'
    a = article(poster, title=title)
    client = logged_in(make_user())
    for _ in range(2):  # rendered, then from the kept row
        row = row_of(client.get("/new/").content.decode(), a.id)
        assert "<script>" not in row and "&lt;script&gt;" in row
        # one a form: the vote's, and the reader's save and hide
        assert row.count('name="csrfmiddlewaretoken"') == row.count("<form") == 2


def test_the_posting_time_reads_as_djangos_naturaltime():
    from django.contrib.humanize.templatetags.humanize import naturaltime

    from articles.types import Article

    now = time.time()
    for age in (5, 90, 150, 2 * 3600 + 30, 3 * 86400 + 4000):
        a = Article(1, "t", "", "", "user:1", "u", now - age, 1, 0, 0.0, (), now + 1)
        assert rows.ago(a, now) == str(naturaltime(a.posted_at))
        assert rows.ago(a, now) == str(naturaltime(a.posted_at))  # and from the memo


def test_kept_rows_are_bounded(make_user, monkeypatch):
    monkeypatch.setattr(rows._rows, "max_entries", 3)
    poster = make_user()
    for i in range(5):
        article(poster, title=f"t{i}", link=f"https://example.org/{i}")
    Client().get("/new/?x=1")  # a query string: past the anonymous page cache
    assert len(rows._rows) == 3
