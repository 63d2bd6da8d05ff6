"""The search index (postings:<word>) is written by the same script as each article write,
and the audit, check_votes --repair and reindex_search bring book-written data into it."""

from __future__ import annotations

import contextlib
import io
import random
import threading
import time

import pytest
from django.core.management import CommandError, call_command

from articles.errors import ArticleNotFound, Conflict
from articles.operations import audit
from articles.store import keys, scripts, search, selectors, services
from articles.store.connection import get_connection
from tests import factories
from tests.actors import member_actor, staff_actor
from tests.harness import run_together

WEEK = 604_800


def post(now: int, title: str, link: str = "", text: str = "", user_id: int = 1) -> int:
    return factories.article(user_id, title, link, text=text or "body", now=now, poster_name="u").id


def members(conn, word: str) -> set[bytes]:
    return conn.smembers(keys.postings(word))


def search_problems() -> list[audit.Problem]:
    return [p for p in audit.invariant_audit() if p.kind in audit.SEARCH_KINDS]


def test_posting_indexes_title_text_and_link_host_and_keeps_no_list_of_them(conn, now):
    article_id = post(now, "Redis Streams", "https://antirez.com/x", "Consumer groups")
    assert not conn.hexists("article:1", "words")  # made again from the fields when needed
    for word in ("antirez", "consumer", "groups", "redis", "streams"):
        assert members(conn, word) == {str(article_id).encode()}  # the id: an intset
        assert conn.object("encoding", keys.postings(word)) == b"intset"


def test_editing_moves_the_article_between_word_sets(conn, now):
    post(now, "Redis Streams", "https://antirez.com/x")
    services.article_edit(
        article_id=1, title="Valkey streams", link="https://e.org/", actor=staff_actor("s")
    )
    assert members(conn, "redis") == set() and members(conn, "antirez") == set()
    assert members(conn, "valkey") == {b"1"} and members(conn, "streams") == {b"1"}
    assert not conn.exists("postings:redis")  # an emptied set is gone, not left behind
    assert search_problems() == []


def test_deleting_removes_every_entry(conn, now):
    post(now, "Redis Streams", "https://antirez.com/x")
    post(now, "Redis lists", "https://e.org/2")
    services.article_delete(article_id=1, now=now, actor=member_actor(1, ""))
    assert members(conn, "redis") == {b"2"}
    assert conn.keys("postings:*") and not conn.exists("postings:streams", "postings:antirez")
    assert search_problems() == []


def test_each_write_sends_one_script_so_no_crash_can_split_article_and_index(conn, now):
    """Ensure the article and its index entries are written by one EVALSHA: between any two
    commands the app sends, both are written or neither (MONITOR shows what ran where)."""
    # Load the scripts first, so the calls watched are not NOSCRIPT retries.
    post(now, "Warm up", "https://e.org/warm")
    services.article_edit(
        article_id=1, title="Warm", link="https://e.org/w", actor=staff_actor("s")
    )
    services.article_delete(article_id=1, actor=staff_actor("s", pk=1))
    seen: list[dict] = []
    ready = threading.Event()

    def watch() -> None:
        with get_connection().monitor() as monitor:
            ready.set()
            for command in monitor.listen():
                seen.append(command)
                if command["command"].startswith("ECHO done"):
                    return

    watcher = threading.Thread(target=watch)
    watcher.start()
    ready.wait(5)
    time.sleep(0.1)
    post(now, "Redis streams", "https://antirez.com/x")
    services.article_edit(
        article_id=2, title="Valkey streams", link="https://e.org/", actor=staff_actor("s")
    )
    services.article_delete(article_id=2, actor=staff_actor("s", pk=1))
    conn.echo("done")
    watcher.join(10)
    index_writes = [c for c in seen if c["command"].split()[0] in ("SADD", "SREM")]
    assert {c["command"].split()[1] for c in index_writes} >= {"postings:redis", "postings:valkey"}
    assert all(c["client_type"] == "lua" for c in index_writes)
    article_writes = [c for c in seen if c["command"].split()[0] in ("HSET", "DEL")]
    assert article_writes and all(c["client_type"] == "lua" for c in article_writes)
    sent = [c["command"].split()[0] for c in seen if c["client_type"] != "lua"]
    # What the app itself sends: reads, the id INCRBY, and one script per write; no
    # write of the article or of the index outside a script.
    writes = {"SADD", "SREM", "HSET", "HDEL", "DEL", "ZADD", "ZREM", "SET", "EXPIREAT"}
    assert not writes & set(sent), sent
    assert "EVAL" not in sent
    # One write script each, in order; any other script sent is a read (a page's rows).
    write_scripts = [scripts.POST.sha, scripts.EDIT.sha, scripts.DELETE.sha]
    shas = [c.split()[1] for c in (c["command"] for c in seen if c["client_type"] != "lua")
            if c.startswith("EVALSHA")]  # fmt: skip
    assert [sha for sha in shas if sha in write_scripts] == write_scripts


def test_an_edit_racing_a_changed_index_retries_instead_of_leaving_stale_words(conn, now):
    """Ensure the scripts check the title, text and link the words they were given were made
    from: a stale read is refused, whatever else matches."""
    from articles.store import scripts
    from articles.types import Status

    post(now, "Redis streams")  # text "body", no link
    words = search.article_words("Redis streams", "body", "")
    for stale in (["Redis stream", "body", ""], ["Redis streams", "bodies", ""]):
        reply = scripts.EDIT(
            keys=["article:1", "article:1", "modlog:", "article:1", "article:1", "article:1",
                  "article:1", *map(keys.postings, words), "postings:other"],
            args=["article:1", "Other", "", "", "", "", "", 10, "", "", WEEK,
                  " ".join(words), "other", "body", "body", "", *stale],
            client=conn,
        )  # fmt: skip
        assert Status(int(reply[0])) is Status.RETRY
        reply = scripts.DELETE(
            keys=["article:1", "voted:1", "voted_down:1", "score:", "time:", "good:",
                  "submitted:1", "article:1", "modlog:", "votes:", "purge:", "comments_all:1",
                  "comments:1", "comments_new:1", *keys.PERIOD_KEYS, "removed:", "article:1",
                  *map(keys.postings, words)],
            args=["article:1", "", "", "user:1", "", "", 10, "", "", WEEK, " ".join(words),
                  "", "", *stale],
            client=conn,
        )  # fmt: skip
        assert Status(int(reply[0])) is Status.RETRY
        reply = scripts.REINDEX(
            keys=["article:1", "postings:other"], args=["article:1", "other", *stale], client=conn
        )
        assert Status(int(reply[0])) is Status.RETRY
        reply = scripts.UNINDEX(
            keys=["postings:redis", "article:1"], args=[1, "redis", *stale], client=conn
        )
        assert Status(int(reply[0])) is Status.RETRY
    assert conn.hget("article:1", "title") == b"Redis streams"
    assert members(conn, "redis") == {b"1"} and not conn.exists("postings:other")


def test_the_audit_reports_and_repair_fixes_unindexed_and_stale_entries(conn, now):
    post(now, "Redis streams", "https://e.org/1")
    post(now, "Python lists", "https://e.org/2")
    # As the book's code would leave it: a hash with no words, and an entry of a gone article.
    conn.hset(
        "article:3",
        mapping={
            "title": "Redis hashes",
            "link": "http://e.org/3",
            "poster": "user:1",
            "time": now,
            "votes": 1,
        },
    )
    conn.zadd("score:", {"article:3": now + 432})
    conn.zadd("time:", {"article:3": now})
    conn.sadd("voted:3", "user:1")
    conn.expireat("voted:3", now + WEEK)
    conn.sadd("postings:ghost", 99)
    conn.sadd("postings:python", 1)
    found = {(p.kind, p.article_id) for p in search_problems()}
    assert found == {("search_unindexed", 3), ("search_stale", 99), ("search_stale", 1)}
    with pytest.raises(CommandError, match="invariants broken"):
        call_command("check_votes", stdout=io.StringIO())
    call_command("check_votes", "--repair", stdout=io.StringIO())
    assert audit.invariant_audit() == []
    assert members(conn, "redis") == {b"1", b"3"}
    assert not conn.exists("postings:ghost") and members(conn, "python") == {b"2"}


def test_reindex_search_rebuilds_everything_and_a_second_run_changes_nothing(conn, now):
    for n in range(30):
        post(now, f"Article number{n} about redis", f"https://e.org/{n}")
    conn.delete(*conn.keys("postings:*"))
    for n in range(1, 31):  # as a store written before kept each article's words
        conn.hset(f"article:{n}", "words", f"article number{n} redis")
    conn.sadd("postings:ghost", 77)
    out = io.StringIO()
    call_command("reindex_search", "--batch", "7", stdout=out)
    text = out.getvalue()
    assert "30/30" in text and "30 reindexed, 1 stale entries dropped" in text
    assert "#" * 40 in text  # the progress bar, filled
    assert search_problems() == []
    assert len(members(conn, "redis")) == 30
    assert not any(conn.hexists(f"article:{n}", "words") for n in range(1, 31))
    out = io.StringIO()
    call_command("reindex_search", "--no-progress", stdout=out)
    assert "30 article(s) read, 0 reindexed, 0 stale entries dropped" in out.getvalue()


def test_reindex_search_moves_a_store_from_the_former_index_and_searches_find_it(conn, now):
    """A store written before postings:<word> (idx:<word>, sets of article:<id> strings)
    is searched again once reindex_search has run, and its former sets are gone."""
    for n in range(12):
        post(now + n, f"Former number{n} about redis", f"https://e.org/{n}")
    for key in conn.keys("postings:*"):  # as the former scripts wrote it
        word = keys.word_of(key.decode())
        conn.sadd(f"idx:{word}", *(f"article:{int(m)}" for m in conn.smembers(key)))
        conn.delete(key)
    assert selectors.article_search(q="redis").count == 0  # not yet moved
    former = [p for p in search_problems() if p.entry == "idx:*"]
    assert len(former) == 1 and "run manage.py reindex_search" in former[0].detail
    call_command("reindex_search", "--no-progress", "--batch", "5", stdout=io.StringIO())
    assert not conn.keys("idx:*")
    assert conn.object("encoding", keys.postings("redis")) == b"intset"
    found = selectors.article_search(q="redis former")
    assert found.count == 12 and [a.id for a in found.items] == list(range(12, 0, -1))
    assert search_problems() == []


# --- several processes at once -------------------------------------------------------

WORDS = ["alpha", "beta", "gamma", "delta", "omega"]


def _worker(seed: int) -> None:
    rng = random.Random(seed)
    mine: list[int] = []
    for _ in range(60):
        title = " ".join(rng.sample(WORDS, 2))
        action = rng.random()
        if action < 0.5 or not mine:
            mine.append(post(int(time.time()), title, user_id=seed + 1))
        elif action < 0.8:
            target = rng.randint(1, max(mine))
            # gone meanwhile, or changed by another writer at once
            with contextlib.suppress(ArticleNotFound, Conflict):
                services.article_edit(
                    article_id=target, title=title, link="", actor=staff_actor("s")
                )
        else:
            target = rng.randint(1, max(mine))
            with contextlib.suppress(ArticleNotFound, Conflict):  # gone meanwhile
                services.article_delete(
                    article_id=target, reason="churn", actor=staff_actor("s", pk=0)
                )


def test_concurrent_posts_edits_and_deletes_keep_the_index_exact(conn):
    run_together(_worker, 4)
    assert search_problems() == []
    for word in WORDS:
        expected = set()
        for member in conn.zrange("time:", 0, -1):
            if word in conn.hget(member, "title").decode().split():
                expected.add(str(keys.article_id_of(member.decode())).encode())
        assert members(conn, word) == expected
    found = selectors.article_search(q="alpha beta")
    assert found.count == len(members(conn, "alpha") & members(conn, "beta"))
