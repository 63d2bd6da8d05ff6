"""The replies inbox against a real Redis: who gets a reply, the bound, unread counts and
marking read, deleted replies, forgetting an account, and the round trips."""

from __future__ import annotations

import threading

import pytest

from articles.errors import InvalidInput
from articles.store import keys, selectors, services
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.store.test_selectors import counting  # noqa: F401 - a fixture

POSTER, ALICE, BOB = 1, 2, 3


@pytest.fixture
def article(now) -> int:
    return factories.article(POSTER, title="A title", poster_name="poster", now=now).id


def say(article_id: int, user_id: int, text: str = "hello", parent: int | None = None):
    return factories.comment(user_id, article_id, text, parent)


def inbox_ids(user_id: int) -> list[int]:
    return [r.comment.id for r in selectors.inbox_page(user_id=user_id).items]


def test_a_top_level_comment_goes_to_the_posters_inbox_and_a_reply_to_the_parents_author(
    article, audited
):
    top = say(article, ALICE)
    reply = say(article, BOB, parent=top.id)
    assert inbox_ids(POSTER) == [top.id]
    assert inbox_ids(ALICE) == [reply.id]
    assert inbox_ids(BOB) == []
    page = selectors.inbox_page(user_id=ALICE)
    assert page.unread == 1 and page.count == 1 and page.items[0].unread
    assert page.items[0].comment.article_title == "A title"
    assert selectors.inbox_unread(user_id=POSTER) == 1


def test_no_one_is_told_of_their_own_comment_or_reply(article, conn):
    top = say(article, POSTER)
    say(article, POSTER, parent=top.id)
    assert selectors.inbox_unread(user_id=POSTER) == 0
    assert not conn.exists(keys.inbox(POSTER), keys.inbox_state(POSTER))


def test_a_repeated_post_with_its_idempotency_key_adds_no_second_entry(article):
    for _ in range(2):
        factories.comment(ALICE, article, "same", idempotency_key="k1")
    assert selectors.inbox_unread(user_id=POSTER) == 1


def test_the_inbox_keeps_its_newest_replies_only(article, settings, conn):
    settings.ARTICLES_INBOX_SIZE = 3
    made = [say(article, ALICE, f"c{n}").id for n in range(5)]
    assert conn.zcard(keys.inbox(POSTER)) == 3
    assert inbox_ids(POSTER) == made[:1:-1]
    assert selectors.inbox_unread(user_id=POSTER) == 3


def test_marking_read_goes_up_to_the_number_given_and_never_back(article):
    first, second = say(article, ALICE, "one"), say(article, BOB, "two")
    numbers = {r.comment.id: r.number for r in selectors.inbox_page(user_id=POSTER).items}
    assert services.inbox_mark_read(user_id=POSTER, up_to=numbers[first.id]) == 1
    page = selectors.inbox_page(user_id=POSTER)
    assert [(r.comment.id, r.unread) for r in page.items] == [(second.id, True), (first.id, False)]
    assert services.inbox_mark_read(user_id=POSTER) == 0
    assert services.inbox_mark_read(user_id=POSTER, up_to=0) == 0  # never back
    third = say(article, ALICE, "three")
    assert [r.comment.id for r in selectors.inbox_page(user_id=POSTER).items if r.unread] == [
        third.id
    ]


def test_mark_all_read_with_the_newest_shown_leaves_a_later_reply_unread(article):
    say(article, ALICE, "seen")
    shown = selectors.inbox_page(user_id=POSTER)
    say(article, BOB, "arrived meanwhile")
    assert services.inbox_mark_read(user_id=POSTER, up_to=shown.newest) == 1
    # A number past the newest marks no reply that has yet to come.
    services.inbox_mark_read(user_id=POSTER, up_to=10**9)
    later = say(article, BOB, "later still")
    assert [r.comment.id for r in selectors.inbox_page(user_id=POSTER).items if r.unread] == [
        later.id
    ]


@pytest.mark.parametrize("bad", [-1, True, "3"])
def test_a_bad_number_is_refused_and_changes_nothing(article, bad):
    say(article, ALICE)
    with pytest.raises(InvalidInput):
        services.inbox_mark_read(user_id=POSTER, up_to=bad)
    assert selectors.inbox_unread(user_id=POSTER) == 1


def test_a_deleted_or_removed_reply_leaves_the_inbox_and_its_count(article, conn, audited):
    top = say(article, ALICE)
    kept = say(article, BOB, parent=top.id)
    gone = say(article, BOB, "oops", parent=top.id)
    say(article, POSTER, parent=gone.id)  # so `gone` stays as a tombstone
    removed = say(article, BOB, "spam", parent=top.id)
    services.comment_delete(comment_id=gone.id, actor=member_actor(BOB, "u3"))
    services.comment_remove(comment_id=removed.id, actor=staff_actor(), reason="spam")
    assert inbox_ids(ALICE) == [kept.id]
    assert selectors.inbox_unread(user_id=ALICE) == 1
    assert conn.zcard(keys.inbox(ALICE)) == 1


def test_deleting_an_article_takes_its_comments_out_of_every_inbox(article, conn, now):
    other = factories.article(BOB, title="Other", link="https://example.org/o", now=now).id
    kept = say(other, ALICE, "stays")
    top = say(article, ALICE)
    say(article, BOB, parent=top.id)
    say(article, POSTER, parent=top.id)
    services.article_delete(article_id=article, actor=staff_actor(), reason="spam")
    services.cleanups_resume()
    assert selectors.inbox_page(user_id=POSTER).items == []
    assert not conn.exists(keys.inbox(POSTER), keys.inbox_state(POSTER))
    assert not conn.exists(keys.inbox(ALICE), keys.inbox_state(ALICE))
    assert inbox_ids(BOB) == [kept.id]


def test_a_reply_gone_without_a_deletion_is_left_out_when_read(article, conn):
    """Ensure an entry naming no comment (data lost, written by others) is never shown."""
    say(article, ALICE)
    conn.zadd(keys.inbox(POSTER), {"comment:999": 99, "not-a-comment": 98})
    assert [r.comment.author_name for r in selectors.inbox_page(user_id=POSTER).items] == ["u2"]


def test_forgetting_an_account_deletes_its_inbox_and_sends_it_nothing_more(article, conn):
    top = say(article, ALICE)
    say(article, BOB, parent=top.id)
    services.user_forget_begin(user_id=ALICE, name="u2")
    services.user_forget(user_id=ALICE)
    assert not conn.exists(keys.inbox(ALICE), keys.inbox_state(ALICE))
    say(article, BOB, "to no one", parent=top.id)
    assert not conn.exists(keys.inbox(ALICE), keys.inbox_state(ALICE))


def test_the_digest_lists_unread_replies_not_yet_sent(article):
    say(article, ALICE, "one")
    items, newest = selectors.inbox_digest_replies(user_id=POSTER)
    assert [r.comment.text for r in items] == ["one"]
    services.inbox_mark_digested(user_id=POSTER, up_to=newest)
    assert selectors.inbox_digest_replies(user_id=POSTER)[0] == []
    say(article, BOB, "two")
    assert [r.comment.text for r in selectors.inbox_digest_replies(user_id=POSTER)[0]] == ["two"]
    services.inbox_mark_read(user_id=POSTER)
    assert selectors.inbox_digest_replies(user_id=POSTER)[0] == []  # read: not sent


def test_concurrent_replies_each_get_one_entry_and_the_count_is_exact(article):
    def post(n: int) -> None:
        for i in range(10):
            say(article, 100 + n, f"{n}-{i}")

    threads = [threading.Thread(target=post, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    page = selectors.inbox_page(user_id=POSTER, per_page=100)
    assert page.unread == page.count == 80
    assert sorted(r.number for r in page.items) == list(range(1, 81))


def test_a_post_reads_its_inbox_owner_in_the_ids_round_trip(article, counting):  # noqa: F811
    top = say(article, ALICE)
    assert counting(lambda: say(article, BOB, parent=top.id)) == 2
    assert counting(lambda: selectors.inbox_unread(user_id=ALICE)) == 1
    assert counting(lambda: selectors.inbox_page(user_id=ALICE)) == 1
    assert counting(lambda: services.inbox_mark_read(user_id=ALICE)) == 1


def test_the_inbox_key_names_are_pinned():
    assert keys.inbox(7) == "inbox:7" and keys.inbox_state(7) == "inbox_state:7"
    assert (keys.INBOX_SCAN, keys.INBOX_STATE_SCAN) == ("inbox:*", "inbox_state:*")
    with pytest.raises(ValueError):
        keys.inbox(0)


def test_replies_to_a_comment_left_as_a_tombstone_leave_its_authors_inbox(article, conn, audited):
    """Ensure no entry outlives its comment: a tombstone names no author, so a reply to it
    deleted later could not be found in that inbox."""
    top = say(article, ALICE)
    reply = say(article, BOB, parent=top.id)
    services.comment_delete(comment_id=top.id, actor=member_actor(ALICE, "u2"))
    assert inbox_ids(ALICE) == [] and not conn.exists(keys.inbox(ALICE))
    services.comment_delete(comment_id=reply.id, actor=member_actor(BOB, "u3"))
