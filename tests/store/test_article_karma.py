"""Article karma (article_karma:<pk>): the net votes on a user's articles that still exist,
kept by every script that moves them, read with one GET, audited, backfilled in bounded
steps and repaired by check_votes --repair."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from django.core.management import call_command

from articles.operations import audit
from articles.store import keys, scripts, selectors, services
from articles.store.selectors import articles as article_selectors
from articles.types import NewPost, Status, Vote
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.harness import run_together

ANN, BOB = 1, 2


def _sum(conn, user_id: int = ANN) -> int:
    """The brute-force karma: votes: scores of every article in submitted:<pk>."""
    members = conn.zrange(keys.submitted(user_id), 0, -1)
    return sum(int(conn.zscore(keys.VOTES, m) or 0) for m in members)


def _kept(conn, user_id: int = ANN) -> int | None:
    value = conn.get(keys.article_karma(user_id))
    return None if value is None else int(value)


def _check(conn, expected: int, user_id: int = ANN) -> None:
    """The read, the kept figure and the brute-force sum all agree."""
    assert _sum(conn, user_id) == expected
    assert selectors.user_karma(user_id=user_id) == expected
    assert _kept(conn, user_id) in (
        (expected,) if conn.exists(keys.submitted(user_id)) else (None,)
    )


def _link(n: int) -> str:
    return f"https://example.org/k{n}"


@pytest.mark.usefixtures("audited")
def test_posts_votes_withdrawals_deletes_and_holds_keep_the_figure_equal_to_the_sum(conn):
    a1 = factories.article(ANN, "one", _link(1))
    assert _kept(conn) == 1  # the poster's own up-vote, kept from the first post on
    a2 = factories.article(ANN, "two", _link(2))
    factories.article(BOB, "bob's", _link(3))
    _check(conn, 2)
    for voter in (10, 11, 12):
        services.article_vote(article_id=a1.id, user_id=voter, direction=Vote.UP)
    services.article_vote(article_id=a2.id, user_id=13, direction=Vote.DOWN)
    _check(conn, 4 + 0)
    services.article_vote(article_id=a1.id, user_id=10, direction=Vote.DOWN)  # up -> down
    services.article_vote(article_id=a1.id, user_id=11, direction=Vote.NONE)
    services.article_vote(article_id=a1.id, user_id=11, direction=Vote.NONE)  # unchanged
    _check(conn, 1 + 0)
    # A voter's account goes: its open votes are withdrawn (votes_withdraw.lua).
    services.user_forget(user_id=12, name="gone")
    _check(conn, 0 + 0)
    # Held for its flags: out of votes:, so out of the karma; a dismissal puts it back.
    for flagger in (20, 21, 22):
        services.item_flag(
            kind="article", item_id=a1.id, actor=member_actor(flagger), reason="spam"
        )
    _check(conn, 0)
    services.article_vote(article_id=a1.id, user_id=23, direction=Vote.UP)  # counts in the hash
    _check(conn, 0)
    services.flag_dismiss(kind="article", item_id=a1.id, actor=staff_actor("mod"))
    _check(conn, 1 + 0)
    services.article_delete(article_id=a2.id, actor=member_actor(ANN))
    _check(conn, 1)
    services.article_delete(article_id=a1.id, actor=staff_actor("mod"), reason="spam")
    _check(conn, 0)
    assert conn.exists(keys.article_karma(ANN)) == 0  # no article left: no figure
    factories.article(ANN, "again", _link(4))
    _check(conn, 1)
    assert _kept(conn, BOB) == 1


@pytest.mark.usefixtures("audited")
def test_guarded_and_pipelined_writes_keep_it_too(conn):
    """The site's vote by a kept credential (vote_guarded.lua) and the batch writers
    (load_demo's article_post_many and article_vote_many) run the same scripts."""
    made = services.article_post_many(
        posts=[NewPost(ANN, "ann", f"t{n}", _link(n)) for n in range(3)]
    )
    services.article_vote_many(votes=[(i, 9, Vote.DOWN, None) for i in made])
    _check(conn, 0)
    services.article_vote_guarded(
        article_id=made[0], user_id=10, direction=Vote.UP, revoked_since=None
    )
    _check(conn, 1)


@pytest.mark.usefixtures("audited")
def test_forgetting_the_account_takes_its_figure_away(conn, monkeypatch):
    monkeypatch.setattr("articles.store.services.accounts.CLEANUP_BATCH", 2)
    posted = [factories.article(ANN, f"t{n}", _link(n)) for n in range(5)]
    services.article_vote(article_id=posted[0].id, user_id=7, direction=Vote.UP)
    _check(conn, 6)
    # One bounded batch: the figure follows the articles that left submitted:<pk>.
    reply = scripts.USER_FORGET(
        keys=[keys.submitted(ANN), keys.VOTES],
        args=[keys.user(ANN), "[deleted]", "poster poster_name", 2],
        client=conn,
    )
    assert list(reply[1:]) == [2, 3]
    assert _kept(conn) == _sum(conn) == 3
    services.user_forget(user_id=ANN, name="ann")
    assert conn.exists(keys.article_karma(ANN), keys.submitted(ANN)) == 0
    assert selectors.user_karma(user_id=ANN) == 0


def test_the_read_is_one_get_whatever_the_number_of_articles(conn, round_trips):
    """Fails on the summing read: 2,000 articles were 2,000 ZSCOREs inside one script."""
    for n in range(2000):
        factories.article(ANN, f"t{n}", _link(n))
    services.article_vote(article_id=1, user_id=9, direction=Vote.DOWN)
    selectors.user_karmas(user_id=ANN)  # the script is loaded
    conn.config_resetstat()
    assert round_trips(lambda: selectors.user_karmas(user_id=ANN)) == (1, (1999, 0))
    stats = conn.info("commandstats")
    run = {name.removeprefix("cmdstat_"): s["calls"] for name, s in stats.items()}
    run.pop("config|resetstat", None)
    # the figures' TYPEs and the GET of the one present; no command reads the articles
    assert run == {"evalsha": 1, "type": 2, "get": 1}


def test_a_store_without_figures_is_served_bounded_and_check_votes_builds_them(
    conn, monkeypatch, caplog
):
    """A store written before the figure existed (or by the book's code): reads sum at
    most KARMA_SUM_MAX articles, writes keep no figure, and --repair builds each one in
    bounded steps."""
    for n in range(6):
        factories.article(ANN, f"t{n}", _link(n))
    factories.article(BOB, "bob's", _link(99))
    services.article_vote(article_id=1, user_id=9, direction=Vote.UP)
    conn.delete(keys.article_karma(ANN), keys.article_karma(BOB))
    assert audit.invariant_audit() == []  # not kept yet is no fault
    assert selectors.user_karmas(user_id=ANN) == (7, 0)  # summed: 6 <= KARMA_SUM_MAX
    services.article_vote(article_id=2, user_id=9, direction=Vote.UP)
    factories.article(ANN, "more", _link(7))  # an unkept figure is not started by a post
    assert conn.exists(keys.article_karma(ANN)) == 0
    monkeypatch.setattr(article_selectors, "KARMA_SUM_MAX", 4)
    with caplog.at_level(logging.WARNING, logger="articles.store.selectors"):
        assert selectors.user_karma(user_id=ANN) == 4  # the newest 4 only, and said so
    assert "check_votes --repair" in caplog.text
    monkeypatch.setattr(audit.article_karma, "FILL_STEP", 3)
    out = io.StringIO()
    call_command("check_votes", "--repair", stdout=out)
    assert "Kept the article karma of 2 user(s)." in out.getvalue()
    assert (_kept(conn), _kept(conn, BOB)) == (9, 1)
    assert selectors.user_karma(user_id=ANN) == 9
    assert conn.exists(keys.ARTICLE_KARMA_FILL) == 0
    assert audit.invariant_audit() == []


def _fill_step(conn, step: int = 2) -> list[int]:
    reply = scripts.KARMA_FILL(
        keys=[keys.article_karma(ANN), keys.submitted(ANN), keys.VOTES, keys.ARTICLE_KARMA_FILL],
        args=[ANN, step],
        client=conn,
    )
    assert reply[0] == Status.OK
    return [int(x) for x in reply[1:]]


@pytest.mark.usefixtures("audited")
def test_writes_between_fill_steps_leave_the_sum(conn):
    """Votes, deletes and posts on both sides of the fill's cursor while it runs."""
    posted = [factories.article(ANN, f"t{n}", _link(n)) for n in range(7)]
    conn.delete(keys.article_karma(ANN))
    assert _fill_step(conn) == [0, 2]  # articles 0 and 1 counted
    assert _fill_step(conn) == [0, 2]  # 2 and 3
    services.article_vote(article_id=posted[0].id, user_id=9, direction=Vote.UP)  # counted
    services.article_vote(article_id=posted[5].id, user_id=9, direction=Vote.UP)  # not yet
    services.article_delete(article_id=posted[3].id, actor=member_actor(ANN))  # the cursor's
    services.article_delete(article_id=posted[6].id, actor=member_actor(ANN))
    factories.article(ANN, "new", _link(50))
    services.article_vote(article_id=posted[1].id, user_id=9, direction=Vote.DOWN)
    assert _fill_step(conn) == [0, 2]  # 4 and 5, after the deleted cursor
    assert _fill_step(conn) == [1, 1]  # the new one: done
    assert _kept(conn) == _sum(conn) == 2 + 0 + 1 + 1 + 2 + 1  # 0, 1, 2, 4, 5, new
    assert _fill_step(conn) == [1, 0]  # kept: nothing more to do


def test_the_audit_reports_a_wrong_figure_and_the_repair_writes_the_sum(conn):
    for who, n in ((ANN, 1), (BOB, 2), (3, 3)):
        factories.article(who, f"t{n}", _link(n))
    services.article_vote(article_id=1, user_id=9, direction=Vote.UP)
    conn.set(keys.article_karma(ANN), "99")
    conn.set(keys.article_karma(BOB), "two")
    conn.set(keys.article_karma(4), "5")  # a user with no article at all
    found = sorted((p.kind, p.entry) for p in audit.invariant_audit())
    assert found == [("article_karma", keys.article_karma(n)) for n in (ANN, BOB, 4)]
    call_command("check_votes", "--repair", stdout=io.StringIO())
    assert audit.invariant_audit() == []
    assert [selectors.user_karma(user_id=n) for n in (ANN, BOB, 3, 4)] == [2, 1, 1, 0]
    assert _kept(conn, 4) == 0


def test_a_figure_of_the_wrong_type_is_reported_and_left_and_votes_go_on(conn):
    a = factories.article(ANN)
    conn.delete(keys.article_karma(ANN))
    conn.lpush(keys.article_karma(ANN), "x")
    services.article_vote(article_id=a.id, user_id=2, direction=Vote.UP)  # never fails for it
    assert selectors.user_karma(user_id=ANN) == 2  # summed as an unkept one
    assert [p.kind for p in audit.invariant_audit()] == ["wrong_type"]
    assert audit.article_karma_repair() == 0
    assert conn.type(keys.article_karma(ANN)) == b"list"
    conn.delete(keys.article_karma(ANN))


def test_concurrent_votes_on_one_users_articles_count_exactly(conn):
    posted = [factories.article(ANN, f"t{n}", _link(n)).id for n in range(4)]

    def voter(n: int) -> None:
        for article_id in posted:
            services.article_vote(article_id=article_id, user_id=100 + n, direction=Vote.UP)
            if n % 3 == 0:
                services.article_vote(article_id=article_id, user_id=100 + n, direction=Vote.DOWN)

    run_together(voter, 12)
    assert selectors.user_karma(user_id=ANN) == _sum(conn) == 4 * (1 + 8 - 4)
    assert audit.invariant_audit() == []


def test_a_restore_keeps_every_posters_figure(conn, tmp_path: Path):
    a = factories.article(ANN, "one", _link(1))
    factories.article(ANN, "two", _link(2))
    services.article_vote(article_id=a.id, user_id=9, direction=Vote.DOWN)
    factories.article(BOB, "bob's", _link(3))
    path = tmp_path / "backup.jsonl"
    call_command("export_articles", output=str(path), stderr=io.StringIO())
    conn.flushdb()
    call_command("import_articles", str(path), stdout=io.StringIO())
    assert (_kept(conn), _kept(conn, BOB)) == (1, 1)
    assert audit.invariant_audit() == []
