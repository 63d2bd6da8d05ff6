"""Restore a backup written by export_articles into an empty store."""

from __future__ import annotations

import contextlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from articles import backup
from articles.errors import InvalidInput
from articles.management.progress import Timer, bar


class Command(BaseCommand):
    help = (
        "Import a JSON-lines backup of export_articles. Each article is restored atomically. "
        "Refuses a store that already holds data unless --force is given."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("input", help="the file to read, or - for stdin")
        parser.add_argument(
            "--force",
            action="store_true",
            help="import into a store that is not empty (articles with the same id are replaced)",
        )

    def handle(self, *args: Any, input: str, force: bool, **options: Any) -> None:
        if not force and not backup.store_is_empty():
            raise CommandError(
                "The store is not empty; import only into an empty store, or pass --force "
                "to replace articles with the same ids."
            )
        counts: Counter[str] = Counter()
        with contextlib.ExitStack() as stack:
            source = sys.stdin
            if input != "-":
                source = stack.enter_context(Path(input).open(encoding="utf-8"))
            timer, shown = Timer(), stack.enter_context(bar(unit="record", desc="import"))
            for number, line in enumerate(source, start=1):
                if not line.strip():
                    continue
                try:
                    kind = backup.store_import_record(record=json.loads(line))
                except (ValueError, InvalidInput) as exc:
                    raise CommandError(f"line {number}: {exc}") from None
                counts[kind] += 1
                shown.update()
        summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "nothing"
        timing = timer.summary(counts.total(), "records")
        self.stdout.write(self.style.SUCCESS(f"Imported {summary} {timing}."))
