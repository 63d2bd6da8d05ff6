"""The anonymous page cache: shared only by visitors with no session, and never stale for
longer than ARTICLES_ANONYMOUS_PAGE_SECONDS."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.test import Client

from articles.store import scripts, services
from articles.types import Vote
from articles.web import pagecache
from tests import factories

pytestmark = pytest.mark.django_db


def post(title: str, user_id: int = 999) -> int:
    return factories.article(user_id, title, f"https://e.org/{title}").id


@contextmanager
def another_process() -> Iterator[None]:
    """Writes made meanwhile stand for another process's: this one's hook does not hear."""
    scripts.written.disconnect(dispatch_uid="articles-pagecache-written")
    try:
        yield
    finally:
        scripts.written.connect(pagecache._written, dispatch_uid="articles-pagecache-written")


def test_a_visitor_without_session_may_see_a_page_at_most_the_cache_time_old(settings):
    # 2 s, the default: a post from another (forked) process took over 0.5 s once under load.
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 2
    post("first")
    anonymous = Client()
    assert "first" in anonymous.get("/new/").content.decode()
    with another_process():
        post("Second-post")
    assert "Second-post" not in anonymous.get("/new/").content.decode()  # kept
    time.sleep(2.1)
    assert "Second-post" in anonymous.get("/new/").content.decode()


def test_a_logged_in_user_sees_their_own_vote_at_once_whatever_the_cache(settings, make_user):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    article_id = post("voted")
    Client().get("/new/")  # an anonymous copy is kept
    user = make_user()
    client = Client()
    client.force_login(user)
    assert "you voted up" not in client.get("/new/").content.decode()
    services.article_vote(article_id=article_id, user_id=user.pk, direction=Vote.UP)
    page = client.get("/new/").content.decode()
    assert "you voted up" in page and user.get_username() in page


def test_a_page_made_for_a_session_is_never_kept_for_others(settings, make_user):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    post("shared")
    user = make_user()
    client = Client()
    client.force_login(user)
    client.get("/new/")
    page = Client().get("/new/").content.decode()
    assert user.get_username() not in page and "csrfmiddlewaretoken" not in page


def test_the_cache_can_be_turned_off(settings):
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 0
    post("one")
    Client().get("/new/")
    post("two")
    assert "two" in Client().get("/new/").content.decode()


def test_a_page_kept_for_one_language_is_never_shown_in_another(settings):
    """Ensure each language has its own kept page (LocaleMiddleware picks the language per
    visitor), and a write still drops them all."""
    settings.ARTICLES_ANONYMOUS_PAGE_SECONDS = 60
    post("first")
    for language in ("de", "en", "de"):
        assert Client().get("/new/", HTTP_ACCEPT_LANGUAGE=language).status_code == 200
    assert sorted(pagecache._pages) == ["/new/#de", "/new/#en"]
    pagecache.forget("/new/")
    assert list(pagecache._pages) == []
