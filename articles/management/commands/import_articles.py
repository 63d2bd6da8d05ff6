"""Restore a backup written by export_articles: all of it or nothing."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from articles.errors import ArticlesError
from articles.management.progress import Timer, bar
from articles.operations import backup


class Command(BaseCommand):
    help = (
        "Import a JSON-lines backup of export_articles. The whole file is checked first, then "
        "written in short steps into an empty scratch database (ARTICLES_RESTORE_DB) that one "
        "atomic swap makes the store, id counter included: a bad or truncated file changes "
        "nothing, and readers see the old store until the swap. Refuses a store that already "
        "holds data unless --force is given."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("input", help="the file to read, or - for stdin")
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace the whole store with the backup: everything the store held before "
            "(articles, links, submissions, moderation log) is deleted in the same step",
        )

    def handle(self, *args: Any, input: str, force: bool, **options: Any) -> None:
        with contextlib.ExitStack() as stack:
            source: IO[str] = sys.stdin
            if input != "-":
                source = stack.enter_context(Path(input).open(encoding="utf-8"))
            timer, shown = Timer(), stack.enter_context(bar(unit="record", desc="import"))
            try:
                counts = backup.store_restore(records=_records(source, shown), replace=force)
            except backup.StoreNotEmpty:
                raise CommandError(
                    "The store is not empty; import only into an empty store, or pass --force "
                    "to replace everything in it with the backup."
                ) from None
            except backup.ScratchInUse as exc:
                raise CommandError(
                    f"Redis database {exc.db} (ARTICLES_RESTORE_DB), where an import stages, "
                    f"holds {exc.size} keys: another import is running or one was interrupted, "
                    "or another program uses it. If no import is running and the keys are an "
                    f"import's (restore:staging is one of them), empty it (redis-cli -n {exc.db} "
                    "FLUSHDB); else set ARTICLES_RESTORE_DB to an empty database. Nothing was "
                    "imported."
                ) from None
            except ArticlesError as exc:
                raise CommandError(f"{exc.message} Nothing was imported.") from None
        summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "nothing"
        timing = timer.summary(sum(counts.values()), "records")
        self.stdout.write(self.style.SUCCESS(f"Imported {summary} {timing}."))


def _records(source: IO[str], shown: Any) -> Iterator[tuple[int, object]]:
    for number, line in enumerate(source, start=1):
        if not line.strip():
            continue
        shown.update()
        try:
            yield number, json.loads(line)
        except ValueError as exc:
            raise CommandError(f"line {number}: not JSON ({exc}). Nothing was imported.") from None
