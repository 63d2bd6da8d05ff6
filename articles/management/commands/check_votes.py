"""Audit every invariant of SPEC §1 over the whole store, and optionally repair it."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from articles.management.progress import Timer, bar
from articles.operations import audit
from articles.store import people, services


class Command(BaseCommand):
    help = (
        "Check score, vote counts, voter sets, their expiry, the good-article index, "
        "group fields, the duplicate-link index, the posters' and sites' indexes and the "
        "search index of every article, the comments' orderings, counts, voter sets and "
        "parent links, and each user's article and comment karma; "
        "--repair fixes what is wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--repair", action="store_true", help="fix every problem found")

    def handle(self, *args: Any, repair: bool, **options: Any) -> None:
        if repair:  # deletions stopped between their bounded steps: finish them first
            purged, forgotten = services.cleanups_resume(), people.forget_pending()
            if purged or forgotten:
                self.stdout.write(
                    f"Finished {purged} article deletion(s), {forgotten} account deletion(s)."
                )
            # A store written before the kept rankings (or by the book's code) gets them.
            if copied := audit.top_backfill():
                self.stdout.write(f"Ranked {copied:,} article(s) in the kept top of each period.")
            # ... and the groups' kept rankings, so no reader fills one.
            if filled := audit.group_backfill():
                self.stdout.write(f"Ranked {filled:,} member(s) in the groups' kept rankings.")
            # ... and its sites' indexes (domain:<d>), a bounded batch a step.
            if indexed := audit.domain_backfill():
                self.stdout.write(f"Indexed {indexed:,} article(s) under their sites.")
            # ... and each poster's kept article karma (article_karma:<pk>), in bounded steps.
            if built := audit.article_karma_backfill():
                self.stdout.write(f"Kept the article karma of {built:,} user(s).")
        timer, audited = Timer(), 0
        with bar(unit="article", desc="audit") as shown:

            def progress(done: int, total: int) -> None:
                nonlocal audited
                shown.total = total
                shown.update(done - audited)
                audited = done

            problems = audit.invariant_audit(progress=progress)
        self._report(problems)
        kinds = Counter(p.kind for p in problems)
        summary = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "none"
        self.stdout.write(
            f"Audited {audited:,} article(s) {timer.summary(audited, 'articles')}; "
            f"{len(problems)} problem(s): {summary}"
        )
        if not problems:
            return
        if not repair:
            raise CommandError("invariants broken; run again with --repair to fix them")
        self._repair(problems)
        remaining = audit.invariant_audit()
        if remaining:
            # What the store no longer knows how to mend (a key of the wrong type, a time
            # or count with nothing left to take it from): left as it is, for a person.
            self.stdout.write("Left for a person to decide:")
            self._report(remaining)
            raise CommandError(f"{len(remaining)} problem(s) remain after repair")
        self.stdout.write(self.style.SUCCESS("Repaired; the audit now finds nothing wrong."))

    def _report(self, problems: list[audit.Problem]) -> None:
        for problem in problems:
            where = (
                f"article {problem.article_id}"
                if problem.article_id
                else f"group {problem.group}"
                if problem.group
                else str(problem.entry)
            )
            self.stdout.write(f"{problem.kind:<20} {where}: {problem.detail}")

    def _repair(self, problems: list[audit.Problem]) -> None:
        for problem in problems:
            if problem.kind == "unregistered_group" and problem.group:
                audit.group_register(name=problem.group)
        by_article: dict[int, set[str]] = defaultdict(set)
        for problem in problems:
            if problem.article_id is not None and problem.kind not in (
                audit.INDEX_KINDS
                | audit.REPORT_ONLY_KINDS
                | audit.SEARCH_KINDS
                | audit.TOP_KINDS
                | audit.DOMAIN_KINDS
                | audit.KARMA_KINDS
                | audit.ARTICLE_KARMA_KINDS
                | audit.FLAG_KINDS
                | audit.ARCHIVE_KINDS  # for manage.py archive or a person: never a removal
            ):
                by_article[problem.article_id].add(problem.kind)
        memberships = audit.group_memberships() if by_article else {}
        for article_id, kinds in sorted(by_article.items()):
            groups = memberships.get(article_id, set())
            done = audit.article_repair(article_id=article_id, groups=groups)
            if done != "removed" and "groups_field" in kinds:
                audit.article_groups_set(article_id=article_id, groups=groups)
        audit.index_entries_repair(p for p in problems if p.kind in audit.INDEX_KINDS)
        audit.search_index_repair(p for p in problems if p.kind in audit.SEARCH_KINDS)
        audit.domain_entries_repair(p for p in problems if p.kind in audit.DOMAIN_KINDS)
        audit.personal_repair(p for p in problems if p.kind in audit.PERSONAL_KINDS)
        audit.comment_search_repair(p for p in problems if p.kind in audit.COMMENT_SEARCH_KINDS)
        if any(p.kind in audit.COMMENT_KINDS for p in problems):
            audit.comments_repair_all()
        # Found again, after the comments' repairs (which may move their counts and lists).
        audit.comment_karma_repair()
        # Found again, after the repairs of votes: and submitted:<pk>, which move no figure.
        audit.article_karma_repair()
        audit.flags_repair([p for p in problems if p.kind in audit.FLAG_KINDS])
        # Last, and found again: the repairs above may have rewritten votes:, which the
        # kept periods follow, and removed comments that inboxes still name.
        audit.top_repair()
        audit.group_repair()  # after the articles' repairs, which may rewrite score:/time:
        audit.inbox_repair()
