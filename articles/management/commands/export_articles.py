"""Write a logical backup of the article store as JSON lines (see import_articles)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from articles.management.progress import Timer, bar
from articles.operations import backup


class Command(BaseCommand):
    help = (
        "Export every article with its vote state (voter sets and expiry), the groups and "
        "their registry, the good-article index, links, stats and moderation log as JSON lines."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", default="-", help="file to write (default stdout)")

    def handle(self, *args: Any, output: str, **options: Any) -> None:
        counts: Counter[str] = Counter()
        skipped: list[str] = []
        with contextlib.ExitStack() as stack:
            target = sys.stdout
            if output != "-":
                target = stack.enter_context(Path(output).open("w", encoding="utf-8"))
            timer, shown = Timer(), stack.enter_context(bar(unit="record", desc="export"))
            for record in backup.store_export(skipped=skipped.append):
                target.write(json.dumps(record, sort_keys=True) + "\n")
                counts[str(record["type"])] += 1
                shown.update()
        summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
        for problem in skipped:
            self.stderr.write(self.style.WARNING(f"Skipped: {problem}"))
        timing = timer.summary(counts.total(), "records")
        skips = f" Skipped {len(skipped)}." if skipped else ""
        self.stderr.write(f"Exported {summary} {timing}.{skips}")
