"""selectors.user_page: a user page's four reads in one round trip, the articles' rows in a
second, answering as the three selectors it stands for."""

from __future__ import annotations

import pytest

from articles.store import selectors, services
from articles.types import Vote
from tests.factories import article, comment

POSTER, READER, OTHER = 31, 32, 33


@pytest.fixture
def posted(conn) -> list[int]:  # type: ignore[no-untyped-def]
    """The poster's 30 articles (a page and a half), voted on and commented, and 12
    comments of theirs."""
    ids = [article(POSTER, f"Article {n}", f"https://example.org/{n}").id for n in range(30)]
    services.article_vote(article_id=ids[0], user_id=OTHER, direction=Vote.UP)
    services.article_vote(article_id=ids[1], user_id=OTHER, direction=Vote.DOWN)
    services.article_vote(article_id=ids[2], user_id=READER, direction=Vote.UP)
    for n in range(12):
        comment(POSTER, ids[n % 3], f"Comment {n}")
    services.article_hide(article_id=ids[-1], user_id=READER)
    return ids


@pytest.mark.parametrize("reader", [None, READER])
@pytest.mark.parametrize("page", [1, 2])
def test_it_reads_what_its_three_selectors_read(posted, reader, page):
    read = selectors.user_page(poster_id=POSTER, page=page, user_id=reader, comments=10)
    assert read.articles == selectors.user_article_list(poster_id=POSTER, page=page, user_id=reader)
    assert (read.karma, read.comment_karma) == selectors.user_karmas(user_id=POSTER)
    assert read.comments == selectors.user_comments(user_id=POSTER, per_page=10)
    assert len(read.comments.items) == 10 and read.comments.count == 12
    assert read.karma == 30 + 1 - 1 + 1  # each poster's own up-vote, then +1 -1 +1
    if reader:
        assert posted[-1] not in [a.id for a in read.articles.items]  # hidden from them
        assert read.articles.count == 29


def test_two_round_trips_whatever_the_reader(posted, round_trips):
    for reader in (None, READER):
        selectors.user_page(poster_id=POSTER, user_id=reader, comments=10)  # scripts loaded
        trips, read = round_trips(
            lambda r=reader: selectors.user_page(poster_id=POSTER, user_id=r, comments=10)
        )
        assert trips == 2 and len(read.articles.items) == 25


def test_scripts_the_server_lacks_are_loaded_and_the_page_read(posted, conn, round_trips):
    """A restarted or flushed server answers NOSCRIPT: the reads go again, once, after
    the scripts are loaded (redis-py's own pipeline would ask SCRIPT EXISTS every time)."""
    expected = selectors.user_page(poster_id=POSTER, user_id=READER, comments=10)
    conn.script_flush()
    assert selectors.user_page(poster_id=POSTER, user_id=READER, comments=10) == expected
    trips, read = round_trips(
        lambda: selectors.user_page(poster_id=POSTER, user_id=READER, comments=10)
    )
    assert trips == 2 and read == expected
