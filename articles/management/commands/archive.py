"""Move articles whose voting closed to the database (ARTICLES_ARCHIVE_AFTER), in batches."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from articles import conf
from articles.store import archive


class Command(BaseCommand):
    help = (
        "Archive the articles posted more than ARTICLES_ARCHIVE_AFTER seconds ago, oldest "
        "first, in bounded batches: their rows go to the database, then their hash, "
        "comments and search postings leave Redis (rankings stay). Pages read them as "
        "before. Safe to run again and to interrupt; run it hourly."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch", type=int, default=archive.BATCH, help=f"articles a batch ({archive.BATCH})"
        )
        parser.add_argument("--limit", type=int, default=None, help="at most this many articles")
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would be archived, change nothing"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress lines")

    def handle(
        self, *args: Any, batch: int, limit: int | None, dry_run: bool, no_progress: bool, **_: Any
    ) -> None:
        if conf.archive_after() is None:
            raise CommandError("Archiving is off: set ARTICLES_ARCHIVE_AFTER (seconds).")
        began = time.monotonic()

        def progress(done: archive.Progress) -> None:
            if not no_progress:
                self.stdout.write(
                    f"\r{done.archived} archived, {done.changed} left (changed), "
                    f"{done.comments} comments, {done.batches} batches",
                    ending="",
                )
                self.stdout.flush()

        done = archive.archive(batch=max(1, batch), limit=limit, dry_run=dry_run, progress=progress)
        if not no_progress:
            self.stdout.write("")
        took = time.monotonic() - began
        verb = "would be archived" if dry_run else "archived"
        self.stdout.write(
            f"{done.archived} article(s) {verb}, {done.changed} left for a later run "
            f"(changed while read), {done.comments} comment(s) moved, in {took:.1f} s."
        )
