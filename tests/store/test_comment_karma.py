"""Comment karma (comment_karma:<pk>): the net votes on a user's visible comments, kept by
every script that moves them, read with article karma in one round trip, audited and
rebuilt by check_votes --repair."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from articles.operations import audit
from articles.store import selectors, services
from articles.types import Vote
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.harness import run_together

ANN = 1


def _karma(user_id: int = ANN) -> int:
    return selectors.user_karmas(user_id=user_id)[1]


@pytest.mark.usefixtures("audited")
def test_votes_on_a_comment_move_its_authors_comment_karma_in_the_same_step(conn):
    a = factories.article(9)
    c = factories.comment(ANN, a.id)
    assert _karma() == 0 and conn.exists("comment_karma:1") == 0
    services.comment_vote(comment_id=c.id, user_id=2, vote=Vote.UP)
    services.comment_vote(comment_id=c.id, user_id=3, vote=Vote.UP)
    assert _karma() == 2 and conn.get("comment_karma:1") == b"2"
    services.comment_vote(comment_id=c.id, user_id=2, vote=Vote.DOWN)  # up -> down: -2
    assert _karma() == 0 and conn.exists("comment_karma:1") == 0  # gone at 0
    services.comment_vote(comment_id=c.id, user_id=2, vote=Vote.DOWN)  # unchanged
    services.comment_vote(comment_id=c.id, user_id=3, vote=Vote.NONE)
    assert _karma() == -1
    assert selectors.user_karmas(user_id=ANN) == (0, -1)  # ann posted no article
    assert selectors.user_karmas(user_id=9) == (1, 0)


def test_both_karmas_are_one_round_trip(round_trips):
    a = factories.article(ANN)
    services.comment_vote(comment_id=factories.comment(ANN, a.id).id, user_id=2, vote=Vote.UP)
    assert round_trips(lambda: selectors.user_karmas(user_id=ANN)) == (1, (1, 1))


@pytest.mark.usefixtures("audited")
def test_a_deleted_or_removed_comment_takes_its_votes_out_of_the_karma():
    a = factories.article(9)
    kept, tombstone, gone = (factories.comment(ANN, a.id, f"c{n}") for n in range(3))
    factories.comment(2, a.id, "a reply keeps its parent as a tombstone", parent_id=tombstone.id)
    for c in (kept, tombstone, gone):
        services.comment_vote(comment_id=c.id, user_id=5, vote=Vote.UP)
    assert _karma() == 3
    services.comment_delete(comment_id=tombstone.id, actor=member_actor(ANN))
    services.comment_remove(comment_id=gone.id, actor=staff_actor("mod"), reason="spam")
    assert _karma() == 1


@pytest.mark.usefixtures("audited")
def test_deleting_the_article_takes_its_comments_votes_out_of_the_karma():
    a, b = factories.article(9), factories.article(9, link="https://example.org/b")
    for article in (a, b):
        c = factories.comment(ANN, article.id)
        services.comment_vote(comment_id=c.id, user_id=5, vote=Vote.UP)
    services.article_delete(article_id=a.id, actor=staff_actor("mod"), reason="off topic")
    assert _karma() == 1


@pytest.mark.usefixtures("audited")
def test_deleting_accounts_takes_their_karma_and_their_votes_away(conn, db):
    ann, bob = factories.user("ann"), factories.user("bob")
    a = factories.article(9)
    mine, theirs = factories.comment(ann, a.id), factories.comment(bob, a.id)
    services.comment_vote(comment_id=mine.id, user_id=bob.pk, vote=Vote.UP)
    services.comment_vote(comment_id=theirs.id, user_id=ann.pk, vote=Vote.DOWN)
    assert (_karma(ann.pk), _karma(bob.pk)) == (1, -1)
    services.user_forget(user_id=bob.pk, name="bob")  # his vote withdrawn, his comment unowned
    assert (_karma(ann.pk), _karma(bob.pk)) == (0, 0)
    assert conn.exists(f"comment_karma:{bob.pk}") == 0


def test_concurrent_votes_on_one_users_comments_count_exactly():
    a = factories.article(9)
    comments = [factories.comment(ANN, a.id, f"c{n}").id for n in range(4)]

    def voter(n: int) -> None:
        for cid in comments:
            services.comment_vote(comment_id=cid, user_id=100 + n, vote=Vote.UP)
            if n % 3 == 0:
                services.comment_vote(comment_id=cid, user_id=100 + n, vote=Vote.DOWN)

    run_together(voter, 12)
    assert _karma() == 4 * (8 - 4)  # 8 voters up, 4 switched to down
    assert audit.invariant_audit() == []


def test_the_audit_finds_a_figure_that_disagrees_and_the_repair_rebuilds_it(conn):
    """Ensure a store written before comment karma existed gets it from check_votes
    --repair, and a wrong or unreadable figure is put right from the comments."""
    a = factories.article(9)
    for author in (1, 2, 3):
        c = factories.comment(author, a.id)
        for voter in range(10, 10 + author):
            services.comment_vote(comment_id=c.id, user_id=voter, vote=Vote.UP)
    conn.delete("comment_karma:1")
    conn.set("comment_karma:2", "7")
    conn.set("comment_karma:3", "three")
    conn.set("comment_karma:4", "5")  # a user with no comments at all
    found = sorted((p.kind, p.entry) for p in audit.invariant_audit())
    assert found == [("comment_karma", f"comment_karma:{n}") for n in (1, 2, 3, 4)]
    call_command("check_votes", "--repair")
    assert audit.invariant_audit() == []
    assert [_karma(n) for n in (1, 2, 3, 4)] == [1, 2, 3, 0]
    assert conn.exists("comment_karma:4") == 0


def test_a_figure_of_the_wrong_type_is_reported_and_left_and_votes_go_on(conn):
    a = factories.article(9)
    c = factories.comment(ANN, a.id)
    conn.lpush("comment_karma:1", "x")
    services.comment_vote(comment_id=c.id, user_id=2, vote=Vote.UP)  # never fails for it
    assert [p.kind for p in audit.invariant_audit()] == ["wrong_type"]
    assert audit.comment_karma_repair() == 0
    assert conn.type("comment_karma:1") == b"list"


def test_a_users_list_of_the_wrong_type_is_reported_by_the_comment_audit_not_here(conn):
    a = factories.article(9)
    services.comment_vote(comment_id=factories.comment(ANN, a.id).id, user_id=2, vote=Vote.UP)
    conn.delete("user_comments:1")
    conn.set("user_comments:1", "x")
    assert audit.comment_karma_audit() == []
    assert audit.comment_karma_repair() == 0
    assert conn.get("comment_karma:1") == b"1"
