"""A user page keeps the account it shows for ARTICLES_PEOPLE_SECONDS
(people.person_named): no query for it while kept, at most that late for a change made in
another process, at once for its owner and for a change made in this one."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from articles.models import Profile
from articles.store import people

pytestmark = pytest.mark.django_db


def page(client: Client, person: Any) -> str:
    answer = client.get(f"/u/{person.get_username()}/")
    assert answer.status_code == 200
    return answer.content.decode()


def elsewhere(person: Any, about: str) -> None:
    """A change as another process makes it: this one hears no signal of it."""
    Profile.objects.filter(user_id=person.pk).update(about=about)


@pytest.fixture
def people_pages(settings: Any, make_user: Any) -> tuple[Any, Client]:
    settings.ARTICLES_PEOPLE_SECONDS = 60
    author = make_user()
    people.account_update(user=author, about="First words")
    reader = Client()
    reader.force_login(make_user())
    return author, reader


def test_a_kept_account_is_read_without_a_query(people_pages):
    author, reader = people_pages
    assert "First words" in page(reader, author)
    with CaptureQueriesContext(connection) as queries:
        assert "First words" in page(reader, author)
    assert not [q for q in queries if "articles_profile" in q["sql"]]


def test_a_change_made_elsewhere_shows_once_the_account_expires(settings, people_pages):
    author, reader = people_pages
    settings.ARTICLES_PEOPLE_SECONDS = 0.3
    assert "First words" in page(reader, author)
    elsewhere(author, "Second words")
    assert "First words" in page(reader, author)  # kept: at most 0.3 s late
    time.sleep(0.35)
    assert "Second words" in page(reader, author)


def test_the_owner_sees_their_own_page_as_it_is(people_pages):
    author, reader = people_pages
    assert "First words" in page(reader, author)
    elsewhere(author, "Second words")
    owner = Client()
    owner.force_login(author)
    assert "Second words" in page(owner, author)


def test_a_save_in_this_process_drops_the_kept_account(people_pages):
    author, reader = people_pages
    assert "First words" in page(reader, author)
    people.account_update(user=author, about="Second words")
    assert "Second words" in page(reader, author)


def test_nothing_is_kept_with_the_setting_off(settings, people_pages):
    author, reader = people_pages
    settings.ARTICLES_PEOPLE_SECONDS = 0
    assert "First words" in page(reader, author)
    elsewhere(author, "Second words")
    assert "Second words" in page(reader, author)


def test_an_unknown_name_is_a_404_and_a_new_account_shows_at_once(people_pages, make_user):
    _, reader = people_pages
    assert reader.get("/u/nobody-yet/").status_code == 404
    newcomer = make_user("nobody-yet")
    assert page(reader, newcomer)
