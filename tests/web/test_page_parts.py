"""The parts of every page kept per language (articles.web.parts) and the article hashes
kept decoded (selectors): each page still gets its own navigation mark, search query,
language and counts."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from articles.models import Profile
from articles.store import services
from articles.types import Vote
from articles.web import rendering
from tests.factories import article

pytestmark = pytest.mark.django_db


def current_links(html: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)" aria-current="page"', html)


def search_value(html: str) -> str:
    match = re.search(r'<input type="search" name="q"[^>]* value="([^"]*)"', html)
    assert match, "no search box"
    return match.group(1)


def test_each_page_marks_its_own_link_though_the_navigation_is_kept():
    client = Client()
    assert current_links(client.get("/new/").content.decode()) == ["/new/"]
    assert current_links(client.get("/").content.decode()) == ["/"]
    assert current_links(client.get("/new/").content.decode()) == ["/new/"]
    assert current_links(client.get("/groups/").content.decode()) == ["/groups/"]


def test_the_search_page_shows_its_query_and_no_other_page_keeps_it():
    client = Client()
    found = client.get("/search/", {"q": 'redis "<b>'}).content.decode()
    assert search_value(found) == "redis &quot;&lt;b&gt;"
    assert search_value(client.get("/new/").content.decode()) == ""
    assert search_value(client.get("/search/", {"q": "other"}).content.decode()) == "other"


def test_each_language_gets_its_own_parts():
    client = Client()
    english = client.get("/new/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    german = client.get("/new/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    again = client.get("/new/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert ">Groups</a>" in english and ">Gruppen</a>" in german
    assert ">Gruppen</a>" not in again and 'data-vote-up="' not in again
    assert 'data-vote-up="' in german  # the scripts' words, in German only


def test_a_kept_decoded_article_gives_way_to_its_new_counts(make_user):
    poster, voter = make_user(), make_user()
    a = article(poster)
    client = Client()

    def points() -> str:
        html = client.get("/new/").content.decode()
        row = re.search(rf'id="a{a.id}".*?data-field="net">(-?\d+)<', html, re.S)
        assert row
        return row.group(1)

    assert points() == points() == "1"
    services.article_vote(article_id=a.id, user_id=voter.pk, direction=Vote.UP)
    assert points() == "2"
    services.article_vote(article_id=a.id, user_id=voter.pk, direction=Vote.DOWN)
    assert points() == "0"


def test_a_kept_date_text_is_of_its_own_language_and_time_zone():
    day = date(2026, 11, 26)
    with translation.override("de"):
        assert rendering.date_filter(day, "D j M") == "Do 26 Nov"
    with translation.override("en"):
        assert rendering.date_filter(day, "D j M") == "Thu 26 Nov"
    instant = datetime(2026, 11, 26, 23, 30, tzinfo=UTC)
    with timezone.override(ZoneInfo("UTC")):
        assert rendering.date_filter(instant, "j H:i") == "26 23:30"
    with timezone.override(ZoneInfo("Europe/Berlin")):
        assert rendering.date_filter(instant, "j H:i") == "27 00:30"


def test_a_user_page_reads_the_user_and_their_about_text_in_one_query(make_user):
    person = make_user()
    Profile.objects.update_or_create(user=person, defaults={"about": "Writes <b>tests</b>."})
    with CaptureQueriesContext(connection) as queries:
        page = Client().get(f"/u/{person.get_username()}/").content.decode()
    assert "Writes &lt;b&gt;tests&lt;/b&gt;." in page or "Writes <b>tests</b>." in page
    profile_table = Profile._meta.db_table
    reads = [q["sql"] for q in queries.captured_queries if profile_table in q["sql"]]
    assert len(reads) == 1 and "JOIN" in reads[0], reads
    bare = make_user()  # no profile row: an empty "about", still one query
    assert Client().get(f"/u/{bare.get_username()}/").status_code == 200
