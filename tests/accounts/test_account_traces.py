"""Deleting an account leaves nothing in the store that names it: not its name, not its
user:<pk>, in any key or value, nor in the moderation log the API serves."""

from __future__ import annotations

import io
import json
import re

import pytest
import redis
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from articles.operations import audit
from articles.store import keys, people, selectors, services
from articles.types import DELETED_NAME, Vote
from tests.actors import staff_actor
from tests.factories import article, comment

NAME = "zorblax7"  # a name no other text in the store holds


def dump(conn: redis.Redis) -> dict[str, str]:
    """Every key of the store and its whole value, as text."""
    found = {}
    for raw in conn.scan_iter(count=1000):
        key = raw.decode()
        kind = conn.type(key).decode()
        read = {
            "string": lambda k: conn.get(k),
            "hash": lambda k: conn.hgetall(k),
            "list": lambda k: conn.lrange(k, 0, -1),
            "set": lambda k: conn.smembers(k),
            "zset": lambda k: conn.zrange(k, 0, -1, withscores=True),
            "stream": lambda k: conn.xrange(k),  # live:, the live events
        }[kind]
        value = read(key)
        found[key] = repr(value)
    return found


@pytest.fixture
def traces(make_user):  # type: ignore[no-untyped-def]
    """An account with articles, comments (one with a reply, one removed by staff), votes
    on articles and comments, and moderation log entries naming it as actor and author."""
    zorb = make_user(NAME, staff=True)
    bob, mod = make_user("bob"), make_user("mod", staff=True)
    own = article(zorb, "A first post", "https://example.org/z1")
    article(zorb, "A second post", "https://example.org/z2")
    other = article(bob, "Bob's post", "https://example.org/b")
    downed = article(bob, "Bob's other post", "https://example.org/b2")
    services.article_vote(article_id=other.id, user_id=zorb.pk, direction=Vote.UP)
    services.article_vote(article_id=downed.id, user_id=zorb.pk, direction=Vote.DOWN)
    services.article_vote(article_id=own.id, user_id=bob.pk, direction=Vote.UP)
    top = comment(zorb, other.id, "My comment")
    comment(bob, other.id, "A reply to it", parent_id=top.id)
    removed = comment(zorb, other.id, "Something staff remove")
    bobs = comment(bob, own.id, "Bob on zorb's post")
    services.comment_vote(comment_id=bobs.id, user_id=zorb.pk, vote=Vote.DOWN)
    services.comment_vote(comment_id=top.id, user_id=bob.pk, vote=Vote.UP)
    services.comment_remove(comment_id=removed.id, reason="off topic", actor=staff_actor("mod"))
    services.group_create(name="zorbs", description="made by zorb", actor=staff_actor(NAME))
    services.article_groups_update(
        article_id=other.id, add=["zorbs"], reason="fits", actor=staff_actor(NAME)
    )
    return zorb, bob, mod, other, downed, top


def test_a_deleted_account_is_named_nowhere_in_the_store_or_the_modlog(conn, traces):
    zorb, _, _, other, downed, top = traces
    pk = zorb.pk
    member = re.compile(rf"user:{pk}(?![0-9])")
    assert any(member.search(v) or NAME in v for v in dump(conn).values())
    assert NAME in json.dumps(APIClient().get("/api/modlog/").json())
    assert audit.invariant_audit() == []

    people.account_delete(user=zorb)

    for key, value in dump(conn).items():
        assert not member.search(key + value), key
        assert NAME not in key + value, key
    log = APIClient().get("/api/modlog/").json()
    assert NAME not in json.dumps(log) and not member.search(json.dumps(log))
    actions = [(e["action"], e["actor"]) for e in log["results"]]
    assert ("groups", DELETED_NAME) in actions and ("comment_remove", "mod") in actions
    removal = next(e for e in log["results"] if e["action"] == "comment_remove")
    assert removal["details"]["author_name"] == DELETED_NAME
    assert removal["details"]["author"] == ""
    # Its votes are withdrawn: counts equal the voter sets, the scores follow.
    assert selectors.article_get(article_id=other.id).votes == 1  # bob's own
    assert selectors.article_get(article_id=downed.id).downvotes == 0
    # Its comments stay, by nobody; the thread keeps its shape.
    kept = selectors.comment_get(comment_id=top.id)
    assert kept.author_name == DELETED_NAME and kept.author_id is None
    assert kept.votes == 1
    assert not conn.exists(keys.FORGET)
    assert audit.invariant_audit() == []


def test_an_account_deletion_stopped_half_way_is_finished_by_the_repair(conn, traces, monkeypatch):
    """Ensure the queue taken in the deletion's transaction outlives a failure of the
    steps after it, and check_votes --repair finishes them."""
    zorb, _, _, other, _, _ = traces
    pk = zorb.pk

    def outage(**kw: object) -> None:
        raise redis.ConnectionError("the store went away")

    monkeypatch.setattr("articles.store.services.accounts.user_forget", outage)
    people.account_delete(user=zorb)  # the deletion stands
    assert not get_user_model().objects.filter(pk=pk).exists()
    assert conn.hget(keys.FORGET, str(pk)) == NAME.encode()
    monkeypatch.undo()
    call_command("check_votes", "--repair", stdout=io.StringIO())
    member = re.compile(rf"user:{pk}(?![0-9])")
    for key, value in dump(conn).items():
        assert not member.search(key + value) and NAME not in key + value, key
    assert selectors.article_get(article_id=other.id).votes == 1
    assert audit.invariant_audit() == []


def test_a_queued_account_that_still_exists_is_dropped_not_forgotten(conn, make_user):
    dave = make_user("dave")
    a = article(dave, "Mine", "https://example.org/d")
    services.user_forget_begin(user_id=dave.pk, name="dave")  # its deletion rolled back
    assert people.forget_pending() == 0
    assert not conn.exists(keys.FORGET)
    assert selectors.article_get(article_id=a.id).poster_name == "dave"


def test_forgetting_many_items_and_votes_goes_in_bounded_steps(conn, make_user, monkeypatch):
    monkeypatch.setattr("articles.store.services.accounts.CLEANUP_BATCH", 3)
    dave, erin = make_user("dave"), make_user("erin")
    pk = dave.pk
    mine = [article(dave, f"Post {n}", f"https://example.org/{n}") for n in range(7)]
    theirs = [article(erin, f"Erin {n}", f"https://example.org/e{n}") for n in range(7)]
    for a in theirs:
        services.article_vote(article_id=a.id, user_id=dave.pk, direction=Vote.UP)
        comment(dave, a.id, "hi")
    people.account_delete(user=dave)
    assert all(selectors.article_get(article_id=a.id).poster_name == DELETED_NAME for a in mine)
    assert all(selectors.article_get(article_id=a.id).votes == 1 for a in theirs)
    assert not conn.exists(keys.submitted(pk), keys.user_comments(pk))
    assert audit.invariant_audit() == []
