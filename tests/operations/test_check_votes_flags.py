"""The audit of flags: a held article is no ranking's fault, and what disagrees with the
flags (a held article ranked again by other code, a queue entry off its flags) is found
and repaired by check_votes --repair."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command

from articles.operations import audit
from articles.store import keys, services
from articles.types import NewPost
from tests.actors import member_actor


def kinds() -> set[str]:
    return {p.kind for p in audit.invariant_audit()}


def held_article(now: int, settings) -> int:  # type: ignore[no-untyped-def]
    settings.ARTICLES_FLAG_THRESHOLD = 1
    article = services.article_post(
        NewPost(user_id=1, poster_name="u1", title="T", link="https://example.org/", now=now)
    )
    services.item_flag(kind="article", item_id=article.id, actor=member_actor(2), reason="spam")
    return article.id


def test_a_held_article_is_not_missing_from_the_rankings(now, settings):
    held_article(now, settings)
    assert audit.invariant_audit() == []


def test_a_held_article_put_back_in_a_ranking_is_found_and_taken_out(conn, now, settings):
    article_id = held_article(now, settings)
    conn.zincrby(keys.SCORE, 432, keys.article(article_id))  # the book's own vote code
    conn.zadd(keys.GOOD, {keys.article(article_id): now})
    assert kinds() == {"held_ranked"}
    call_command("check_votes", "--repair", stdout=StringIO())
    assert audit.invariant_audit() == []
    assert conn.zscore(keys.SCORE, keys.article(article_id)) is None


def test_a_queue_entry_that_disagrees_with_the_flags_is_found_and_repaired(conn, now, settings):
    article_id = held_article(now, settings)
    member = keys.article(article_id)
    conn.zadd(keys.FLAGGED, {member: 7, "comment:9": 1})
    conn.hset(keys.flags("comment:4"), "user:3", "spam")
    found = {(p.kind, p.member) for p in audit.invariant_audit()}
    assert found == {
        ("flag_count", member),
        ("flag_count", "comment:9"),
        ("flag_count", "comment:4"),
    }
    call_command("check_votes", "--repair", stdout=StringIO())
    assert audit.invariant_audit() == []
    assert conn.zrange(keys.FLAGGED, 0, -1, withscores=True) == [
        (b"article:1", 1.0),
        (b"comment:4", 1.0),
    ]
