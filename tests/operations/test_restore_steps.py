"""An import is written in bounded steps into a scratch database and swapped in at once:
no step holds Redis for the whole backup, and a reader sees the old store or the whole
backup, never a part of it."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from articles.errors import Conflict
from articles.operations import audit, backup
from articles.operations.backup import restore
from articles.store import keys, services
from articles.store.connection import get_connection
from articles.types import NewPost, Vote
from tests.harness import threads_together

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("audited")]

ARTICLES = 400
SCRATCH = 15


def _populate(count: int, *, first_user: int = 1) -> None:
    now = time.time()
    for i in range(count):
        article = services.article_post(
            NewPost(
                user_id=first_user + i % 5,
                poster_name=f"poster{i % 5}",
                title=f"Article {i} about redis",
                link=f"https://example.org/{first_user}/{i}",
                text="",
                groups=[],
                now=now - i,
            )
        )
        for voter in range(100, 100 + i % 4):
            services.article_vote(article_id=article.id, user_id=voter, direction=Vote.UP, now=now)


def _backup(tmp_path: Path) -> Path:
    _populate(ARTICLES)
    path = tmp_path / "backup.jsonl"
    call_command("export_articles", output=str(path), stderr=io.StringIO())
    get_connection().flushdb()
    return path


def _calls(command: str) -> int:
    stats: dict[str, Any] = get_connection().info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


def _scratch_size() -> int:
    with get_connection().pipeline(transaction=True) as pipe:
        pipe.execute_command("SELECT", SCRATCH)
        pipe.dbsize()
        pipe.execute_command("SELECT", 0)
        return int(pipe.execute()[1])


def test_an_import_is_written_in_steps_of_a_bounded_size(tmp_path: Path, monkeypatch):
    path = _backup(tmp_path)
    monkeypatch.setattr(restore, "RESTORE_BATCH", 100)
    execs, selects = _calls("exec"), _calls("select")
    call_command("import_articles", str(path), stdout=io.StringIO())
    steps = _calls("exec") - execs
    # Each article is several commands (hash, rankings, voters, link): one step of the
    # whole backup (what the import was) is a single EXEC.
    assert steps >= 4 * ARTICLES // 100, steps
    # Every step but the swap SELECTs the scratch database and then the store's again.
    assert _calls("select") - selects >= 2 * (steps - 1)
    assert get_connection().zcard(keys.TIME) == ARTICLES
    assert get_connection().exists(keys.RESTORE_STAGING) == 0
    for _ in range(100):  # the old store is emptied in Redis' own thread
        if _scratch_size() == 0:
            break
        time.sleep(0.01)
    assert _scratch_size() == 0


def test_a_reader_sees_the_old_store_or_the_whole_backup_never_a_part(tmp_path: Path, monkeypatch):
    path = _backup(tmp_path)
    _populate(7, first_user=50)
    monkeypatch.setattr(restore, "RESTORE_BATCH", 20)
    seen: set[int] = set()
    done = threading.Event()

    def importing() -> None:
        try:
            call_command("import_articles", str(path), force=True, stdout=io.StringIO())
        finally:
            done.set()

    def reading() -> None:
        conn = get_connection()
        while not done.is_set():
            seen.add(conn.zcard(keys.TIME))

    threads_together(lambda i: (importing, reading)[i](), 2)
    assert seen <= {7, ARTICLES} and ARTICLES in seen, seen
    assert get_connection().zcard(keys.TIME) == ARTICLES


def test_a_post_while_the_import_stages_fails_the_swap_and_changes_nothing(
    tmp_path: Path, monkeypatch
):
    path = _backup(tmp_path)
    _populate(3, first_user=50)
    before = get_connection().zrange(keys.TIME, 0, -1)
    staged = restore._Staging.step

    def step_then_post(self: Any) -> None:
        staged(self)
        if not get_connection().exists("posted-once"):
            get_connection().set("posted-once", 1)
            _populate(1, first_user=90)

    monkeypatch.setattr(restore._Staging, "step", step_then_post)
    with pytest.raises(Conflict):
        backup.store_restore(records=_records(path), replace=True)
    get_connection().delete("posted-once")
    after = get_connection().zrange(keys.TIME, 0, -1)
    assert len(after) == len(before) + 1 and set(before) < set(after)
    assert _scratch_size() == 0


def test_an_import_refuses_a_scratch_database_in_use_and_writes_nothing(tmp_path: Path):
    path = _backup(tmp_path)
    with get_connection().pipeline(transaction=True) as pipe:
        pipe.execute_command("SELECT", SCRATCH)
        pipe.set("someone-elses", 1)
        pipe.execute_command("SELECT", 0)
        pipe.execute()
    with pytest.raises(CommandError, match=r"Redis database 15 \(ARTICLES_RESTORE_DB\).* 1 keys"):
        call_command("import_articles", str(path), stdout=io.StringIO())
    assert get_connection().dbsize() == 0
    assert _scratch_size() == 1  # not ours: left as it was


def test_without_a_scratch_database_the_import_is_one_step(tmp_path: Path, settings):
    path = _backup(tmp_path)
    settings.ARTICLES_RESTORE_DB = None
    execs = _calls("exec")
    call_command("import_articles", str(path), stdout=io.StringIO())
    assert _calls("exec") - execs == 1
    assert get_connection().zcard(keys.TIME) == ARTICLES
    assert audit.invariant_audit() == []


def _records(path: Path) -> Iterator[tuple[int, object]]:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        yield number, json.loads(line)
