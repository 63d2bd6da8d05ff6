"""The audit of the replies inboxes: clean after real use, and each fault reported."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from articles.operations import audit
from articles.store import keys, services
from tests import factories
from tests.actors import member_actor


def inbox_problems() -> list[tuple[str, str | None, str | None]]:
    return [
        (p.kind, p.entry, p.member)
        for p in audit.invariant_audit()
        if p.kind in audit.INBOX_KINDS or (p.entry or "").startswith("inbox")
    ]


@pytest.fixture
def used(now) -> tuple[int, int]:
    """An article by user 1, a comment by 2 and a reply by 3: two inboxes in use."""
    article = factories.article(1, now=now).id
    top = factories.comment(2, article, "hi")
    reply = factories.comment(3, article, "hello", top.id)
    services.inbox_mark_read(user_id=1)
    return top.id, reply.id


def test_inboxes_in_use_deleted_from_and_forgotten_are_clean(used, settings):
    _top, reply = used
    assert audit.invariant_audit() == []
    services.comment_delete(comment_id=reply, actor=member_actor(3, "u3"))
    services.user_forget_begin(user_id=1, name="u1")
    services.user_forget(user_id=1)
    assert audit.invariant_audit() == []


def test_an_entry_naming_a_gone_comment_or_no_comment_is_reported(used, conn):
    conn.zadd(keys.inbox(2), {"comment:77": 1, "nonsense": 1})
    found = inbox_problems()
    assert ("inbox_stale", "inbox:2", "comment:77") in found
    assert ("inbox_bad", "inbox:2", "nonsense") in found


def test_a_deleted_comment_left_in_an_inbox_is_reported(used, conn):
    _top, reply = used
    conn.hset(keys.comment(reply), "state", "deleted")
    assert inbox_problems() == [("inbox_stale", "inbox:2", keys.comment(reply))]


def test_bad_state_a_lone_key_a_wrong_type_and_a_long_inbox_are_reported(used, conn, settings):
    conn.hset(keys.inbox_state(2), "read", "x")
    conn.hset(keys.inbox_state(3), "seq", 1)  # no inbox:3: no one answered user 3
    conn.set(keys.inbox(4), "not a zset")
    conn.zadd(keys.inbox(5), {"comment:1": 1})
    settings.ARTICLES_INBOX_SIZE = 1
    conn.zadd(keys.inbox(1), {"comment:2": 2})
    conn.hset(keys.inbox_state(1), "seq", 2)
    found = {(kind, entry) for kind, entry, _ in inbox_problems()}
    assert found == {
        ("inbox_bad", "inbox_state:2"),
        ("inbox_bad", "inbox_state:3"),
        ("inbox_bad", "inbox:5"),
        ("wrong_type", "inbox:4"),
        ("inbox_long", "inbox:1"),
    }


def test_the_repair_takes_out_entries_naming_no_comment(used, conn):
    top, reply = used
    conn.zadd(keys.inbox(2), {"comment:77": 5})
    conn.hset(keys.inbox_state(2), "seq", 5)
    conn.delete(keys.comment(top))  # by hand: a reply to it is in user 1's inbox
    call_command("check_votes", "--repair", stdout=StringIO())
    assert inbox_problems() == []
    assert conn.zrange(keys.inbox(2), 0, -1) == [keys.comment(reply).encode()]
    assert not conn.exists(keys.inbox(1), keys.inbox_state(1))  # emptied: its state went too


def test_the_repair_trims_an_inbox_longer_than_its_bound(used, conn, settings):
    top, reply = used
    conn.zadd(keys.inbox(3), {keys.comment(reply): 1, keys.comment(top): 2})
    conn.hset(keys.inbox_state(3), "seq", 2)
    settings.ARTICLES_INBOX_SIZE = 1
    call_command("check_votes", "--repair", stdout=StringIO())
    assert inbox_problems() == []
    assert conn.zrange(keys.inbox(3), 0, -1) == [keys.comment(top).encode()]
