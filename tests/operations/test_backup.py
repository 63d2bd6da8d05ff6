"""Backup and restore: export_articles, then import_articles into an empty store, loses
nothing the audit or a listing can see."""

from __future__ import annotations

import io
import json
import logging
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from articles.operations import audit, backup
from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.types import NewPost, Order, Period, Vote
from tests import links
from tests.actors import staff_actor

log = logging.getLogger("reliability")
# Each test ends with the invariant audit finding nothing on the session's store.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("audited")]

GROUPS = ["books", "cats", "redis"]


def _populate() -> None:
    """Open and closed articles, up and down votes, good ones, groups, links, modlog."""
    now = time.time()
    for name in GROUPS:
        services.group_create(
            name=name, description=f"All about {name} — ünïcode", actor=staff_actor("mod")
        )
    ids = []
    for i in range(40):
        # A few were posted 8 days ago: their voter sets have already expired.
        posted = now - 8 * 86_400 if i % 10 == 0 else now - i * 3_600
        article = services.article_post(
            NewPost(
                user_id=1 + i % 7,
                poster_name=f"poster{i % 7}",
                title=f"Article {i} <b>&amp;</b> ✓",
                link=f"https://example.org/{i}" if i % 3 else "",
                text="" if i % 3 else f"text {i}\nsecond line",
                groups=[GROUPS[i % 3]] + ([GROUPS[(i + 1) % 3]] if i % 4 == 0 else []),
                now=posted,
            )
        )
        ids.append((article.id, posted))
    for n, (article_id, posted) in enumerate(ids):
        if now >= posted + 604_800:
            continue
        for user in range(10, 10 + n % 9):
            services.article_vote(
                article_id=article_id,
                user_id=user,
                direction=Vote.DOWN if user % 4 == 0 else Vote.UP,
                now=now,
            )
    services.article_groups_update(
        article_id=ids[5][0], add=["cats"], remove=["books"], actor=staff_actor("m")
    )
    services.article_delete(article_id=ids[7][0], reason="spam", actor=staff_actor("mod", pk=0))


def _listings() -> dict[str, object]:
    def ids(page):  # type: ignore[no-untyped-def]
        return [(a.id, a.score, a.votes, a.downvotes, a.title, a.groups) for a in page.items]

    seen: dict[str, object] = {}
    for order in Order:
        seen[f"all-{order.value}"] = ids(selectors.article_list(order=order, page=1))
        seen[f"all-{order.value}-2"] = ids(selectors.article_list(order=order, page=2))
        for name in GROUPS:
            seen[f"{name}-{order.value}"] = ids(
                selectors.group_article_list(name=name, order=order)
            )
    seen["top-week"] = ids(selectors.top_article_list(period=Period.WEEK))
    seen["good"] = [a.id for a in selectors.good_article_page().items]
    seen["groups"] = selectors.group_list()
    seen["modlog"] = selectors.modlog_page()
    seen["stats"] = selectors.stats_daily(days=10)
    seen["user1"] = ids(selectors.user_article_list(poster_id=1))
    return seen


def _export(path: Path) -> list[dict[str, object]]:
    call_command("export_articles", output=str(path), stderr=io.StringIO())
    return [json.loads(line) for line in path.read_text().splitlines()]


def _comparable(records: list[dict[str, object]]) -> list[dict[str, object]]:
    """Records without the export time, voter-set expiry rounded to the second."""
    out = []
    for record in records:
        record = dict(record)
        record.pop("exported_at_ms", None)
        for key in ("up_expire_at_ms", "down_expire_at_ms"):
            if record.get(key) is not None:
                record[key] = round(record[key] / 1000)  # type: ignore[operator]
        out.append(record)
    return out


@override_settings(ARTICLES_GOOD_ARTICLE_VOTES=5)
def test_export_then_import_into_an_empty_store_loses_nothing(tmp_path: Path):
    _populate()
    assert audit.invariant_audit() == []
    before = _listings()
    counter = get_connection().get(keys.ARTICLE_IDS)
    first = _export(tmp_path / "backup.jsonl")
    articles = [r for r in first if r["type"] == "article"]
    assert len(articles) == 39
    assert any(r["down"] for r in articles) and any(r["good"] for r in articles)
    assert all(r["up_expire_at_ms"] for r in articles if r["up"])

    get_connection().flushdb()
    assert backup.store_is_empty()
    out = io.StringIO()
    call_command("import_articles", str(tmp_path / "backup.jsonl"), stdout=out)
    assert "39 article" in out.getvalue()

    assert audit.invariant_audit() == []
    assert _listings() == before
    assert get_connection().get(keys.ARTICLE_IDS) == counter
    second = _export(tmp_path / "again.jsonl")
    assert _comparable(second) == _comparable(first)
    # The restored store takes new posts and votes; ids are not reused.
    new = services.article_post(NewPost(user_id=3, poster_name="c", title="after", text="t"))
    assert new.id == int(counter) + 1
    voters = sum(len(r["up"]) + len(r["down"]) for r in articles)  # type: ignore[arg-type]
    log.info(f"backup: {len(first)} records, {len(articles)} articles, {voters} votes restored")
    assert audit.invariant_audit() == []
    get_connection().flushdb()  # audited under GOOD = 5; the autouse audit runs at 200


def test_import_refuses_a_store_that_is_not_empty_unless_forced(tmp_path: Path):
    services.group_create(name="books", actor=staff_actor())
    a = services.article_post(
        NewPost(user_id=1, poster_name="a", title="A", text="t", groups=["books"])
    )
    _export(tmp_path / "b.jsonl")
    with pytest.raises(CommandError, match="not empty"):
        call_command("import_articles", str(tmp_path / "b.jsonl"), stdout=io.StringIO())
    services.article_vote(article_id=a.id, user_id=2, direction=Vote.UP)
    call_command("import_articles", str(tmp_path / "b.jsonl"), force=True, stdout=io.StringIO())
    assert selectors.article_get(article_id=a.id).votes == 1  # the backup's state
    assert audit.invariant_audit() == []


def test_force_replaces_the_whole_store_and_leaves_nothing_of_it_behind(tmp_path: Path):
    """Ensure --force means "the store afterwards is exactly the backup": the old store's
    moderation log, links and submissions go with it, and the audit finds nothing stale."""
    services.group_create(name="books", actor=staff_actor("mod-of-backup"))
    services.article_post(NewPost(user_id=1, poster_name="a", title="A", link="https://a.example/"))
    backup_records = _export(tmp_path / "b.jsonl")
    get_connection().flushdb()
    # Another store: more articles (ids 1-3), by other users, other links, its own modlog.
    services.group_create(name="cats", actor=staff_actor("mod-of-store"))
    for i in range(3):
        services.article_post(
            NewPost(user_id=5, poster_name="e", title=f"E{i}", link=f"https://e.example/{i}")
        )
    call_command("import_articles", str(tmp_path / "b.jsonl"), force=True, stdout=io.StringIO())
    conn = get_connection()
    assert audit.invariant_audit() == []
    assert not conn.exists(keys.submitted(5), keys.group("cats"), keys.article(2))
    assert links.entries(conn) == links.index_of(
        {r["link"]: r["member"] for r in backup_records if r["type"] == "link"}
    )
    assert [e.actor for e in selectors.modlog_page().items] == ["mod-of-backup"]
    assert _comparable(_export(tmp_path / "again.jsonl")) == _comparable(backup_records)
    assert services.article_post(NewPost(user_id=1, poster_name="a", title="n", text="t")).id == 2


def _bad_file(tmp_path: Path, records: list[dict[str, object]], name: str, tail: str = "") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return str(path)


def test_a_malformed_record_anywhere_stops_the_import_before_anything_is_written(tmp_path: Path):
    services.group_create(name="books", actor=staff_actor())
    services.article_post(
        NewPost(user_id=1, poster_name="a", title="A", text="t", groups=["books"])
    )
    services.article_post(
        NewPost(user_id=1, poster_name="a", title="B", text="t", groups=["books"])
    )
    records = _export(tmp_path / "b.jsonl")
    arts = [r for r in records if r["type"] == "article"]
    arts[1]["groups"] = ["books", "../etc"]  # a hostile or damaged file
    get_connection().flushdb()
    with pytest.raises(CommandError, match="line 4"):
        call_command("import_articles", _bad_file(tmp_path, records, "bad.jsonl"))
    conn = get_connection()
    assert conn.dbsize() == 0  # not even the records before the bad one
    assert backup.store_is_empty()


@pytest.mark.parametrize("cut", ["before-counter", "mid-line", "no-header"])
def test_a_truncated_file_changes_nothing_and_the_next_post_gets_a_new_id(tmp_path: Path, cut: str):
    """Ensure a file cut short restores nothing (no store without its id counter), and the
    whole file then restores with its counter, so the next post is a new article."""
    for i in range(3):
        services.article_post(NewPost(user_id=1, poster_name="a", title=f"A{i}", text="t"))
    records = _export(tmp_path / "b.jsonl")
    get_connection().flushdb()
    if cut == "before-counter":
        path = _bad_file(tmp_path, records[:-1], "cut.jsonl")
    elif cut == "mid-line":
        path = _bad_file(tmp_path, records[:-2], "cut.jsonl", tail=json.dumps(records[-2])[:9])
    else:
        path = _bad_file(tmp_path, records[1:], "cut.jsonl")
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_articles", path, stdout=io.StringIO())
    assert get_connection().dbsize() == 0
    call_command("import_articles", str(tmp_path / "b.jsonl"), stdout=io.StringIO())
    new = services.article_post(NewPost(user_id=2, poster_name="b", title="new", text="t"))
    assert (new.id, new.title) == (4, "new")
    assert selectors.article_list(order=Order.TIME, page=1).items[0].title == "new"


def test_export_skips_and_names_what_import_would_refuse_and_its_file_restores(tmp_path: Path):
    """Ensure a bad group name or broken index in the store neither crashes the export nor
    makes its file impossible to restore: export leaves it out and says so."""
    services.group_create(name="books", actor=staff_actor())
    for i in range(3):
        services.article_post(
            NewPost(user_id=1, poster_name="a", title=f"A{i}", text="t", groups=["books"])
        )
    conn = get_connection()
    conn.hset(keys.GROUPS, "Not A Slug", "registered by hand")
    conn.sadd("group:../etc", keys.article(1))
    conn.rpush("links:abc", "a list, not a hash")
    conn.delete(keys.article(2))
    conn.set(keys.article(2), "a string, not a hash")
    conn.set(keys.STATS_VOTES, "not a hash")
    err = io.StringIO()
    call_command("export_articles", output=str(tmp_path / "b.jsonl"), stderr=err)
    for named in ("Not A Slug", "group:../etc", "links:", "article 2", "stats:votes"):
        assert named in err.getvalue()
    conn.flushdb()
    out = io.StringIO()
    call_command("import_articles", str(tmp_path / "b.jsonl"), stdout=out)
    assert "2 article" in out.getvalue()
    assert conn.hkeys(keys.GROUPS) == [b"books"]
    assert services.article_post(NewPost(user_id=1, poster_name="a", title="n", text="t")).id == 4


def _vote_for_a_while(seconds: float) -> None:
    import random

    rng = random.Random(7)
    end = time.monotonic() + seconds
    # The ids of articles known to exist: a post's INCR retried under load skips an id.
    posted = list(range(1, int(get_connection().get(keys.ARTICLE_IDS)) + 1))
    while time.monotonic() < end:
        if rng.random() < 0.05:
            article = services.article_post(
                NewPost(user_id=rng.randint(1, 9), poster_name="w", title="n", text="t")
            )
            posted.append(article.id)
            continue
        services.article_vote(
            article_id=rng.choice(posted),
            user_id=rng.randint(1, 200),
            direction=rng.choice(list(Vote)),
        )


def test_an_export_taken_while_votes_pour_in_restores_to_a_consistent_store(tmp_path: Path):
    import multiprocessing

    for i in range(30):
        services.article_post(NewPost(user_id=1 + i % 5, poster_name="p", title=f"a{i}", text="t"))
    ctx = multiprocessing.get_context("fork")
    writers = [ctx.Process(target=_vote_for_a_while, args=(3.0,)) for _ in range(2)]
    for writer in writers:
        writer.start()
    time.sleep(0.3)
    exports = 0
    try:
        while any(w.is_alive() for w in writers):
            records = _export(tmp_path / "live.jsonl")
            exports += 1
    finally:
        for writer in writers:
            writer.join(timeout=30)
    assert all(w.exitcode == 0 for w in writers)
    get_connection().flushdb()
    call_command("import_articles", str(tmp_path / "live.jsonl"), stdout=io.StringIO())
    assert audit.invariant_audit() == []
    articles = [r for r in records if r["type"] == "article"]
    for record in articles:
        restored = selectors.article_get(article_id=record["id"])  # type: ignore[arg-type]
        assert (restored.votes, restored.downvotes) == (len(record["up"]), len(record["down"]))
    newest = max(r["id"] for r in articles)  # type: ignore[type-var]
    assert (
        services.article_post(NewPost(user_id=1, poster_name="p", title="x", text="t")).id > newest
    )
    log.info(f"backup: {exports} exports taken under load, last one restored consistently")
