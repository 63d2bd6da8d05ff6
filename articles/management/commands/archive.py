"""Take out of Redis what articles whose voting closed no longer need: their link entries
always, and with ARTICLES_ARCHIVE_AFTER set the articles themselves, to the database."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from articles import conf
from articles.store import archive


class Command(BaseCommand):
    help = (
        "Release the duplicate-link entries of the articles whose voting closed, then, with "
        "ARTICLES_ARCHIVE_AFTER set, archive the articles posted longer ago than that, oldest "
        "first, in bounded batches: their rows go to the database, then their hash, "
        "comments and search postings leave Redis (rankings stay). Pages read them as "
        "before. Safe to run again and to interrupt; run it hourly."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch",
            type=int,
            default=archive.BATCH,
            help=f"articles written to the database a transaction ({archive.BATCH})",
        )
        parser.add_argument("--limit", type=int, default=None, help="at most this many articles")
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would be archived, change nothing"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress lines")

    def handle(
        self, *args: Any, batch: int, limit: int | None, dry_run: bool, no_progress: bool, **_: Any
    ) -> None:
        began = time.monotonic()
        if not dry_run:
            walked, released = archive.links_close(limit=limit)
            self.stdout.write(
                f"{released} link entr{'y' if released == 1 else 'ies'} of closed articles "
                f"released ({walked} closed article(s) walked past)."
            )
        if conf.archive_after() is None:
            self.stdout.write("Archiving is off (ARTICLES_ARCHIVE_AFTER): nothing archived.")
            return

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
