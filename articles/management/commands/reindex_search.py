"""Rebuild the search indexes (postings:<word>, comment_postings:<word>) from the article
and comment hashes, in batches."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from articles.store import services


class Command(BaseCommand):
    help = (
        "Index every article's words (title, text, link host) and drop index entries of "
        "deleted articles, then the same for comments' words, in batches, while the site "
        "runs. Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch", type=int, default=500, help="articles (comments) a batch (500)"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, batch: int, no_progress: bool, **options: Any) -> None:
        bar = None if no_progress else self._bar
        seen, changed, dropped = services.search_index_rebuild(batch=max(1, batch), progress=bar)
        if bar:
            self.stdout.write("")
        self.stdout.write(
            f"{seen} article(s) read, {changed} reindexed, {dropped} stale entries dropped."
        )
        seen, changed, dropped = services.comment_search_rebuild(batch=max(1, batch), progress=bar)
        if bar:
            self.stdout.write("")
        self.stdout.write(
            f"{seen} comment(s) read, {changed} reindexed, {dropped} stale entries dropped."
        )

    def _bar(self, done: int, total: int) -> None:
        width = 40
        filled = width * done // total if total else width
        self.stdout.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", ending="")
        self.stdout.flush()
