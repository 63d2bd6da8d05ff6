"""check_votes covers the readers' own lists: their type, their cap, their members."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from articles.operations import audit
from articles.store import keys, services
from articles.types import Vote
from tests import factories


def check_votes(*args: str) -> str:
    out = StringIO()
    call_command("check_votes", *args, stdout=out)
    return out.getvalue()


def test_lists_written_by_the_site_pass_the_audit(now, audited):
    a = factories.article(1, now=now)
    c = factories.comment(2, a.id)
    services.article_hide(article_id=a.id, user_id=3)
    services.article_save(article_id=a.id, user_id=3)
    services.comment_save(comment_id=c.id, user_id=3)
    services.article_vote(article_id=a.id, user_id=3, direction=Vote.UP)
    assert audit.personal_audit() == []


def test_a_list_past_its_cap_or_with_a_foreign_member_is_reported_and_repaired(conn, now):
    a = factories.article(1, now=now)
    conn.zadd(keys.hidden(3), {f"article:{i}": i for i in range(1, keys.HIDDEN_KEEP + 3)})
    conn.zadd(keys.saved_comments(3), {"article:1": 1, "comment:x": 2})
    conn.zadd(keys.upvoted(4), {keys.article(a.id): 5, "user:4": 6})
    found = {(p.kind, p.entry, p.member) for p in audit.personal_audit()}
    assert found == {
        ("personal_over_cap", "hidden:3", None),
        ("personal_bad_member", "saved_comments:3", "article:1"),
        ("personal_bad_member", "saved_comments:3", "comment:x"),
        ("personal_bad_member", "upvoted:4", "user:4"),
    }
    with pytest.raises(CommandError):
        check_votes()
    assert "personal_over_cap" in check_votes("--repair")
    assert audit.personal_audit() == []
    assert conn.zcard(keys.hidden(3)) == keys.HIDDEN_KEEP
    assert conn.zscore(keys.hidden(3), "article:1") is None  # the oldest went
    assert conn.zrange(keys.upvoted(4), 0, -1) == [keys.article(a.id).encode()]


def test_a_list_of_the_wrong_type_is_reported_and_left_alone(conn):
    conn.set(keys.saved(5), "oops")
    conn.set("saved:not-a-user", "not ours")
    problems = audit.personal_audit()
    assert [(p.kind, p.entry) for p in problems] == [("wrong_type", "saved:5")]
    with pytest.raises(CommandError):
        check_votes("--repair")
    assert conn.get(keys.saved(5)) == b"oops"
