"""Comment search (issue 24): comment_postings:<word> kept exact by every write that changes
or removes a comment's text, found by comment_search newest first, rebuilt by
reindex_search."""

from __future__ import annotations

import pytest

from articles.errors import EmptySearch
from articles.store import keys, search, selectors, services
from articles.types import Period
from tests import factories
from tests.actors import member_actor, staff_actor

STEMMED = True


@pytest.fixture
def article(now) -> int:
    return factories.article(1, title="A title", now=now).id


def index(conn) -> dict[str, set[str]]:
    """Every comment_postings:<word> set (of ids), as {word: {comment:<id>, ...}}."""
    found = {}
    for raw in conn.scan_iter(match="comment_postings:*"):
        assert conn.object("encoding", raw) == b"intset"
        found[keys.comment_word_of(raw.decode())] = {
            keys.comment(int(m)) for m in conn.smembers(raw)
        }
    return found


def expected(conn) -> dict[str, set[str]]:
    """The index the visible comments' texts give."""
    want: dict[str, set[str]] = {}
    for raw in conn.scan_iter(match="comment:*"):
        if conn.type(raw) != b"hash" or conn.hget(raw, "state"):
            continue
        for word in search.comment_words(conn.hget(raw, "text").decode()):
            want.setdefault(word, set()).add(raw.decode())
    return want


def test_words_are_the_first_distinct_stems_up_to_the_cap(settings):
    text = "Redis clusters and the cluster of redis: shards shard sharding replicas"
    assert search.comment_words(text, 3) == ["cluster", "redi", "shard"]
    assert search.comment_words(text, 0) == []
    settings.ARTICLES_SEARCH_COMMENT_WORDS = 2
    assert search.comment_words(text) == ["cluster", "redi"]


def test_post_edit_delete_keep_the_index_exact(conn, article, now):
    first = factories.comment(2, article, "Sorted sets rank things")
    reply = factories.comment(3, article, "Hashes store fields", first.id)
    assert index(conn) == expected(conn) and "sort" in index(conn)
    assert conn.hget(keys.comment(first.id), "words") is None  # the sets alone hold them
    services.comment_edit(comment_id=reply.id, actor=member_actor(3), text="Streams instead")
    assert index(conn) == expected(conn) and "hash" not in index(conn)
    # a tombstone (it has a reply) is found by no word
    services.comment_delete(comment_id=first.id, actor=member_actor(2))
    assert conn.hget(keys.comment(first.id), "state") == b"deleted"
    assert index(conn) == expected(conn) and "sort" not in index(conn)
    assert conn.hget(keys.comment(first.id), "words") is None
    # removing the reply removes the tombstone above it too
    services.comment_remove(comment_id=reply.id, actor=staff_actor(), reason="spam")
    assert index(conn) == {} and expected(conn) == {}


def test_purging_an_article_and_forgetting_an_account(conn, article, now):
    other = factories.article(4, title="Other", link="https://example.org/b", now=now).id
    factories.comment(2, article, "Pipelines batch commands")
    kept = factories.comment(2, other, "Pipelines again")
    services.user_forget(user_id=2, name="two")  # the text stays: so does the index
    assert index(conn) == expected(conn) and "pipelin" in index(conn)
    services.article_delete(article_id=article, actor=staff_actor(), reason="spam")
    services.article_purge(article_id=article)
    assert (
        index(conn)
        == expected(conn)
        == {"pipelin": {keys.comment(kept.id)}, "again": {keys.comment(kept.id)}}
    )


def test_zero_words_turns_comment_search_off(conn, article, settings):
    settings.ARTICLES_SEARCH_COMMENT_WORDS = 0
    factories.comment(2, article, "Nothing indexed here")
    assert index(conn) == {}
    assert selectors.comment_search(q="indexed").count == 0


def test_search_finds_visible_comments_newest_first(conn, article, clock):
    old = factories.comment(2, article, "Redis streams are logs", now=clock.now())
    clock.advance(10)
    new = factories.comment(3, article, "Streams with consumer groups", now=clock.now())
    clock.advance(10)
    factories.comment(4, article, "Consumer lag of streams", now=clock.now())
    found = selectors.comment_search(q="stream -lag", now=clock.now())
    assert [c.id for c in found.items] == [new.id, old.id] and found.count == 2
    assert found.words == ("stream",) and found.excluded == ("lag",)
    assert found.items[0].article_title == "A title"
    assert selectors.comment_search(q="consumer", page=2).items == []
    with pytest.raises(EmptySearch):
        selectors.comment_search(q="the")
    recent = selectors.comment_search(q="streams", period=Period.DAY, now=clock.now() + 86_401)
    assert recent.count == 0


def test_a_search_page_is_two_round_trips(conn, article, round_trips):
    for user in range(2, 8):
        factories.comment(user, article, f"Replication lag {user}")
    selectors.comment_search(q="lag")  # the scripts loaded once (no NOSCRIPT below)
    trips, found = round_trips(lambda: selectors.comment_search(q="replication", user_id=2))
    assert trips == 2 and len(found.items) == 6


def test_reindex_indexes_old_comments_and_drops_stale_entries(conn, article, settings):
    settings.ARTICLES_SEARCH_COMMENT_WORDS = 0
    a = factories.comment(2, article, "Written before comment search")
    settings.ARTICLES_SEARCH_COMMENT_WORDS = 16
    conn.sadd("comment_postings:ghost", a.id, 999)
    seen, changed, dropped = services.comment_search_rebuild(batch=1)
    assert (seen, changed, dropped) == (1, 1, 2)
    assert index(conn) == expected(conn) and "written" in index(conn)
    assert services.comment_search_rebuild() == (1, 0, 0)


def test_reindex_moves_comments_from_the_former_index_and_searches_find_them(conn, article):
    """A store written before comment_postings:<word> (cidx:<word>, sets of comment:<id>)
    is searched again once the rebuild has run, and its former sets are gone."""
    from articles.operations import audit

    made = [factories.comment(2 + n, article, f"Former replication lag {n}").id for n in range(5)]
    for key in conn.keys("comment_postings:*"):  # as the former scripts wrote it
        word = keys.comment_word_of(key.decode())
        conn.sadd(f"cidx:{word}", *(keys.comment(int(m)) for m in conn.smembers(key)))
        conn.delete(key)
    assert selectors.comment_search(q="replication").items == []  # not yet moved
    former = [p for p in audit.invariant_audit() if p.entry == "cidx:*"]
    assert len(former) == 1 and "run manage.py reindex_search" in former[0].detail
    services.comment_search_rebuild(batch=2)
    assert not conn.keys("cidx:*") and index(conn) == expected(conn)
    found = selectors.comment_search(q="replication lag")
    assert [c.id for c in found.items] == made[::-1]
    assert not [p for p in audit.invariant_audit() if p.kind in audit.COMMENT_SEARCH_KINDS]


def test_check_votes_reports_and_repairs_comment_index_faults_both_ways(conn, article):
    from io import StringIO

    from django.core.management import CommandError, call_command

    from articles.operations import audit

    a = factories.comment(2, article, "Lua scripts run atomically")
    b = factories.comment(3, article, "Replicas follow the primary")
    conn.srem("comment_postings:atom", a.id)  # a.id is missing from one of its sets
    for word in ("follow", "primari", "replica"):  # b was written before comment search
        conn.srem(f"comment_postings:{word}", b.id)
    conn.sadd("comment_postings:primari", 999)  # an entry naming a comment that is gone
    conn.sadd("comment_postings:lua", b.id)  # b lacks the word
    found = {
        (p.kind, p.detail.split(",")[0])
        for p in audit.invariant_audit()
        if p.kind in audit.COMMENT_SEARCH_KINDS
    }
    assert found == {
        ("comment_search_unindexed", "missing from comment_postings:atom"),
        ("comment_search_unindexed", "missing from comment_postings:follow"),
        ("comment_search_stale", "comment_postings:primari holds '999'"),
        ("comment_search_stale", f"comment_postings:lua holds '{b.id}'"),
    }
    with pytest.raises(CommandError):
        call_command("check_votes", stdout=StringIO())
    out = StringIO()
    call_command("check_votes", "--repair", stdout=out)
    assert "the audit now finds nothing wrong" in out.getvalue()
    assert index(conn) == expected(conn)


def test_the_reindex_search_command_indexes_comments_too(conn, article, settings):
    from io import StringIO

    from django.core.management import call_command

    settings.ARTICLES_SEARCH_COMMENT_WORDS = 0
    factories.comment(2, article, "Old comment text")
    settings.ARTICLES_SEARCH_COMMENT_WORDS = 16
    out = StringIO()
    call_command("reindex_search", "--no-progress", stdout=out)
    assert "1 comment(s) read, 1 reindexed, 0 stale entries dropped." in out.getvalue()
    assert index(conn) == expected(conn) != {}


def test_a_former_words_field_is_taken_out_with_its_entries(conn, article):
    """A comment written when its hash kept its words (`words`) leaves the sets that field
    names when it is deleted, and a reindex drops the field and the entries its text no
    longer gives."""
    a = factories.comment(2, article, "Lua scripts run atomically")
    b = factories.comment(3, article, "Replicas follow the primary")
    for made in (a, b):
        conn.hset(keys.comment(made.id), "words", "former " + " ".join(search.comment_words(
            conn.hget(keys.comment(made.id), "text").decode())))  # fmt: skip
        conn.sadd("comment_postings:former", made.id)
    services.comment_delete(comment_id=a.id, actor=member_actor(2))
    assert index(conn)["former"] == {keys.comment(b.id)}
    assert services.comment_reindex(comment_id=b.id) is True
    assert conn.hget(keys.comment(b.id), "words") is None
    assert index(conn) == expected(conn) and "former" not in index(conn)


def test_a_removal_racing_a_changed_text_retries_instead_of_leaving_stale_words(conn, article):
    """Ensure the scripts check the state and text the words they were given were made
    from: a stale read is refused, and nothing is written."""
    import hashlib

    from articles.store import scripts
    from articles.types import Status

    a = factories.comment(2, article, "Sorted sets rank things")
    member = keys.comment(a.id)
    stale = hashlib.sha1(b"\nSorted sets rank thing", usedforsecurity=False).hexdigest()
    words = " ".join(search.comment_words("Sorted sets rank thing"))
    before = index(conn)
    replies = [
        scripts.COMMENT_EDIT(
            keys=[member], args=["user:2", "Other", "", 900, "other", words, stale], client=conn
        ),
        scripts.COMMENT_DELETE(
            keys=[member, keys.COMMENTS, keys.MODLOG],
            args=["author", "user:2", "", "", 10, words, stale],
            client=conn,
        ),
        scripts.COMMENT_REINDEX(keys=[member], args=["index", stale, "other"], client=conn),
        scripts.COMMENT_REINDEX(
            keys=[member, "comment_postings:sort"], args=["drop", "sort", stale], client=conn
        ),
    ]
    assert [Status(int(r[0])) for r in replies] == [Status.RETRY] * 4
    assert conn.hget(member, "text") == b"Sorted sets rank things" and index(conn) == before
    # a batch stops at the comment (its article gone, as delete.lua leaves it to a purge)
    conn.delete(keys.article(article))
    reply = scripts.ARTICLE_PURGE(
        keys=[keys.article_comments_all(article), keys.COMMENTS, keys.PURGE, keys.article(article)],
        args=[keys.article(article), 25, member, stale, words],
        client=conn,
    )
    assert int(reply[1]) == 1 and conn.exists(member) and index(conn) == before
    services.article_purge(article_id=article)  # read again: done
    assert not conn.exists(member) and index(conn) == {}
