"""The live events against a real Redis: each write appends exactly its event in the same
step, a refused or unchanged write appends none, the setting's bound, and the readers of
store/live.py (sync and asyncio)."""

from __future__ import annotations

import asyncio
import json

import pytest
from redis.asyncio.sentinel import SentinelConnectionPool as AsyncSentinelPool

from articles.errors import (
    ArticleNotFound,
    CommentingClosed,
    CommentNotFound,
    InvalidInput,
    VotingClosed,
)
from articles.operations import audit, backup
from articles.operations.audit.live import SLACK
from articles.store import keys, live, services
from articles.store.live import LiveEvent
from articles.types import Vote
from tests import factories
from votesite.settings import sentinel_cache

POSTER, ALICE, BOB = 1, 2, 3
WEEK = 604_800


def events(conn) -> list[dict[str, str]]:
    return [
        {k.decode(): v.decode() for k, v in fields.items()} for _, fields in conn.xrange(keys.LIVE)
    ]


@pytest.fixture
def article(now) -> int:
    return factories.article(POSTER, title="A title", poster_name="poster", now=now).id


def test_a_post_appends_its_post_event(conn, now, audited):
    article_id = factories.article(POSTER, now=now).id
    assert events(conn) == [{"e": "post", "a": str(article_id)}]


def test_a_counted_vote_appends_the_net_votes_and_a_repeat_appends_none(conn, article, now):
    conn.delete(keys.LIVE)
    services.article_vote(article_id=article, user_id=ALICE, direction=Vote.DOWN, now=now)
    services.article_vote(article_id=article, user_id=ALICE, direction=Vote.DOWN, now=now)
    services.article_vote(article_id=article, user_id=BOB, direction=Vote.UP, now=now)
    a = str(article)
    assert events(conn) == [{"e": "vote", "a": a, "n": "0"}, {"e": "vote", "a": a, "n": "1"}]


def test_a_guarded_vote_appends_its_event_and_one_past_its_limit_none(conn, article, now):
    conn.delete(keys.LIVE)
    limit = ("test:limit",)
    cast = services.article_vote_guarded(
        article_id=article,
        user_id=ALICE,
        direction=Vote.UP,
        revoked_since=None,
        limit_keys=limit,
        limit_args=[1, 60],
        now=now,
    )
    assert cast.article().votes == 2
    refused = services.article_vote_guarded(
        article_id=article,
        user_id=BOB,
        direction=Vote.UP,
        revoked_since=None,
        limit_keys=limit,
        limit_args=[1, 60],
        now=now,
    )
    assert refused.reply is None
    assert events(conn) == [{"e": "vote", "a": str(article), "n": "2"}]


def test_refused_writes_append_nothing(conn, article, now):
    conn.delete(keys.LIVE)
    with pytest.raises(VotingClosed):
        services.article_vote(article_id=article, user_id=ALICE, direction=Vote.UP, now=now + WEEK)
    with pytest.raises(ArticleNotFound):
        services.article_vote(article_id=999, user_id=ALICE, direction=Vote.UP, now=now)
    with pytest.raises(ArticleNotFound):
        factories.comment(ALICE, 999)
    with pytest.raises(CommentNotFound):
        factories.comment(ALICE, article, parent_id=999)
    with pytest.raises(InvalidInput):
        factories.comment(ALICE, article, "")
    with pytest.raises(CommentingClosed):
        factories.comment(ALICE, article, now=now + WEEK)
    with pytest.raises(InvalidInput):
        services.inbox_mark_read(user_id=POSTER, up_to=-1)
    assert conn.xlen(keys.LIVE) == 0


def test_a_comment_appends_its_event_and_the_answered_users_inbox_count(conn, article):
    conn.delete(keys.LIVE)
    top = factories.comment(ALICE, article)
    reply = factories.comment(BOB, article, parent_id=top.id)
    own = factories.comment(POSTER, article)  # no one's inbox: the poster's own comment
    a = str(article)
    assert events(conn) == [
        {"e": "comment", "a": a, "c": str(top.id), "p": ""},
        {"e": "inbox", "u": str(POSTER), "n": "1"},
        {"e": "comment", "a": a, "c": str(reply.id), "p": str(top.id)},
        {"e": "inbox", "u": str(ALICE), "n": "1"},
        {"e": "comment", "a": a, "c": str(own.id), "p": ""},
    ]


def test_a_repeated_comment_by_its_idempotency_key_appends_nothing(conn, article):
    factories.comment(ALICE, article, "same", idempotency_key="k1")
    conn.delete(keys.LIVE)
    factories.comment(ALICE, article, "same", idempotency_key="k1")
    assert conn.xlen(keys.LIVE) == 0


def test_marking_read_appends_the_new_unread_count_once(conn, article):
    for n in range(3):
        factories.comment(ALICE, article, f"c{n}")
    conn.delete(keys.LIVE)
    services.inbox_mark_read(user_id=POSTER, up_to=2)
    services.inbox_mark_read(user_id=POSTER, up_to=2)  # moves nothing
    services.inbox_mark_digested(user_id=POSTER, up_to=3)  # changes no unread count
    services.inbox_mark_read(user_id=POSTER)
    assert events(conn) == [
        {"e": "inbox", "u": str(POSTER), "n": "1"},
        {"e": "inbox", "u": str(POSTER), "n": "0"},
    ]


def test_a_counted_comment_vote_appends_its_points_and_a_repeat_none(conn, article, now):
    comment = factories.comment(ALICE, article)
    conn.delete(keys.LIVE)
    for user in (BOB, BOB, POSTER):
        services.comment_vote(comment_id=comment.id, user_id=user, vote=Vote.DOWN, now=now)
    with pytest.raises(VotingClosed):
        services.comment_vote(comment_id=comment.id, user_id=9, vote=Vote.UP, now=now + WEEK)
    a, c = str(article), str(comment.id)
    assert events(conn) == [
        {"e": "cvote", "a": a, "c": c, "n": "-1"},
        {"e": "cvote", "a": a, "c": c, "n": "-2"},
    ]


def test_a_setting_of_zero_writes_no_events(conn, settings, now, audited):
    settings.ARTICLES_LIVE_EVENTS = 0
    article_id = factories.article(POSTER, now=now).id
    services.article_vote(article_id=article_id, user_id=ALICE, direction=Vote.UP, now=now)
    comment = factories.comment(ALICE, article_id)
    services.comment_vote(comment_id=comment.id, user_id=BOB, vote=Vote.UP, now=now)
    services.inbox_mark_read(user_id=POSTER)
    assert not conn.exists(keys.LIVE)


def test_the_writes_keep_the_stream_near_its_setting(conn, settings, article, now):
    settings.ARTICLES_LIVE_EVENTS = 10
    for user in range(10, 400):
        services.article_vote(article_id=article, user_id=user, direction=Vote.UP, now=now)
    assert 10 <= conn.xlen(keys.LIVE) <= 10 + SLACK
    assert [p for p in audit.invariant_audit() if p.kind == "live_too_long"] == []
    settings.ARTICLES_LIVE_EVENTS = 0  # the stream stays as long as it was: reported
    assert [p.kind for p in audit.invariant_audit() if p.entry == keys.LIVE] == ["live_too_long"]


def test_a_stream_key_of_another_type_is_reported_and_refuses_the_writes(conn, article, now):
    conn.delete(keys.LIVE)
    conn.set(keys.LIVE, "x")
    with pytest.raises(Exception, match="live:"):
        services.article_vote(article_id=article, user_id=ALICE, direction=Vote.UP, now=now)
    assert conn.scard(keys.voted(article)) == 1  # refused before any write
    problems = [p for p in audit.invariant_audit() if p.entry == keys.LIVE]
    assert [p.kind for p in problems] == ["wrong_type"]


# --- the readers ---------------------------------------------------------------------


def test_decode_reads_each_kind_and_passes_over_the_malformed():
    def d(**fields: str) -> LiveEvent | None:
        return live.decode(b"5-1", {k.encode(): v.encode() for k, v in fields.items()})

    assert d(e="vote", a="12", n="-5") == LiveEvent("5-1", "vote", article=12, net=-5)
    assert d(e="post", a="13") == LiveEvent("5-1", "post", article=13)
    assert d(e="comment", a="12", c="40", p="") == LiveEvent(
        "5-1", "comment", article=12, comment=40
    )
    assert d(e="comment", a="12", c="40", p="39") == LiveEvent(
        "5-1", "comment", article=12, comment=40, parent=39
    )
    assert d(e="cvote", a="12", c="40", n="3") == LiveEvent(
        "5-1", "cvote", article=12, comment=40, net=3
    )
    assert d(e="inbox", u="7", n="2") == LiveEvent("5-1", "inbox", user=7, unread=2)
    for bad in (
        {"e": "later", "a": "1"},
        {"a": "1"},
        {"e": "vote", "a": "1"},
        {"e": "vote", "a": "x", "n": "1"},
        {"e": "post", "a": "0"},
        {"e": "post", "a": "١٢"},
        {"e": "comment", "a": "1", "c": "2"},
        {"e": "cvote", "a": "1", "c": "2", "n": "1.5"},
        {"e": "inbox", "u": "7", "n": "-1"},
        {"e": "inbox", "u": "", "n": "1"},
    ):
        assert d(**bad) is None, bad
    assert live.decode("5-1", {"e": "post", "a": "3"}) == LiveEvent("5-1", "post", article=3)


def test_a_replay_is_exclusive_bounded_and_skips_the_malformed(conn, now):
    ids = [factories.article(POSTER, link=f"https://example.org/{n}", now=now).id for n in range(4)]
    conn.xadd(keys.LIVE, {"e": "unknown"})
    entry_ids = [i.decode() for i, _ in conn.xrange(keys.LIVE)]

    async def replays() -> list[live.Replay]:
        client = live.async_client()
        try:
            return [
                await live.areplay(client, entry_ids[0], 2),
                await live.areplay(client, entry_ids[2], 10),
                await live.areplay(client, entry_ids[-1], 10),
                await live.areplay(client, entry_ids[0].split("-")[0], 1),
            ]
        finally:
            await client.aclose()

    first, rest, none, bare = asyncio.run(replays())
    assert [e.article for e in first.events] == ids[1:3]
    assert first.reload  # more came than the bound
    assert [e.article for e in rest.events] == ids[3:]  # the unknown one passed over
    assert not rest.reload
    assert none == live.Replay([], False)
    assert bare.events[0].id == entry_ids[0]  # a bare time: that millisecond's events too
    with pytest.raises(ValueError):
        asyncio.run(live.areplay(live.async_client(), "12-x", 1))


def test_an_empty_stream_has_no_ids_and_replays_nothing(conn):
    async def read() -> tuple[str | None, live.Replay]:
        client = live.async_client()
        try:
            return await live.anewest_id(client), await live.areplay(client, "0", 5)
        finally:
            await client.aclose()

    assert asyncio.run(read()) == (None, live.Replay([], False))


def test_the_async_readers_replay_and_wait_for_new_events(conn, now):
    first = factories.article(POSTER, link="https://example.org/1", now=now).id

    async def scenario() -> tuple[live.Batch, live.Batch, live.Batch, str | None]:
        client = live.async_client(block_ms=2000)
        try:
            replay = await live.aread(client, "0", 50, 10)
            quiet = await live.aread(client, replay.last_id, 50, 10)
            waiting = asyncio.create_task(live.aread(client, replay.last_id, 5000, 10))
            await asyncio.sleep(0.05)
            second = services.article_vote  # a write from another client, while it waits
            await asyncio.to_thread(
                second, article_id=first, user_id=ALICE, direction=Vote.UP, now=now
            )
            woken = await asyncio.wait_for(waiting, 5)
            return replay, quiet, woken, await live.anewest_id(client)
        finally:
            await client.aclose()

    replay, quiet, woken, newest = asyncio.run(scenario())
    assert [(e.kind, e.article) for e in replay.events] == [("post", first)]
    assert quiet == live.Batch([], replay.last_id)
    assert [(e.kind, e.article, e.net) for e in woken.events] == [("vote", first, 2)]
    assert newest == woken.last_id


def test_an_export_leaves_the_events_out_and_a_restore_starts_without_them(conn, article, db):
    """The events describe writes, not data: a backup has none, a restored store starts
    with none (an open page resumes from a point older than any kept: it reloads)."""
    assert conn.xlen(keys.LIVE) == 1
    records = list(backup.store_export())
    assert "live" not in json.dumps(records)
    backup.store_restore(records=enumerate(records), replace=True)
    assert not conn.exists(keys.LIVE)
    assert conn.exists(keys.article(article))


def test_the_async_client_takes_the_stores_address_and_outlasts_a_block(settings):
    settings.ARTICLES_REDIS_ALIAS = None
    settings.ARTICLES_REDIS_URL = "redis://:secret@redis.example:6390/3"
    settings.ARTICLES_REDIS_OPTIONS = {"socket_timeout": 1.0, "socket_connect_timeout": 0.25}
    client = live.async_client(block_ms=15_000)  # builds; connects only when used
    given = client.connection_pool.connection_kwargs
    assert (given["host"], given["port"], given["db"]) == ("redis.example", 6390, 3)
    assert given["password"] == "secret" and given["socket_connect_timeout"] == 0.25
    assert given["socket_timeout"] == 20.0


def test_the_async_client_follows_the_stores_sentinels(settings):
    settings.CACHES = {
        **settings.CACHES,
        "live-sentinel": sentinel_cache("votesite", [("sentinel.example", 26390)], 2),
    }
    settings.ARTICLES_REDIS_ALIAS = "live-sentinel"
    client = live.async_client(block_ms=1000)  # builds; asks the sentinels only when used
    pool = client.connection_pool
    assert isinstance(pool, AsyncSentinelPool) and pool.service_name == "votesite"
    assert pool.connection_kwargs["db"] == 2
    sentinel = pool.sentinel_manager.sentinels[0].connection_pool.connection_kwargs
    assert (sentinel["host"], sentinel["port"]) == ("sentinel.example", 26390)
