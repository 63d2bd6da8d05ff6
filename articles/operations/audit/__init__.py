"""The invariant audit of the store (check_votes) and the repairs of --repair.

Reads in batches with SCAN, never KEYS; each repair is one MULTI/EXEC under WATCH.
Bad data never stops it: a key of the wrong type is reported ("wrong_type") and neither
read further nor written; a count or time that is not one is reported, and a repair
mends it only from what is still known elsewhere (the voter sets, the time: index).

One module per family of invariants, each check a function with one job: article_checks
(the article and its indexes), groups, indexes (links:, submitted:<pk>), search_index,
comment_search (comment_postings:<word>, with its own re-read and repair),
comments (their rules), comment_lists (their lists and voter sets), rankings (the kept
top of each period, its backfill and repair), group_rankings (the groups' kept rankings,
their backfill and repair), domains (the sites' indexes, their backfill and repair),
karma (each user's comment karma), article_karma (each user's kept article karma, its
backfill and repair; figures: what the two share), personal (the readers' own lists),
inboxes (the replies inboxes), flags (the flags and the staff queue), live (the
live events stream's type and length), archive (archived rows against their rankings,
and what the other checks say of archived articles); confirm
re-reads
each suspect atomically (comment_confirm for the comments), runner composes them, and
repairs (comment_repairs for the comments) mends what they find.
"""

from articles.operations.audit.archive import ARCHIVE_KINDS
from articles.operations.audit.article_checks import ARTICLE_KINDS
from articles.operations.audit.article_karma import (
    ARTICLE_KARMA_KINDS,
    article_karma_audit,
    article_karma_backfill,
    article_karma_repair,
)
from articles.operations.audit.comment_repairs import comment_repair, comments_repair_all
from articles.operations.audit.comment_search import (
    COMMENT_SEARCH_KINDS,
    comment_search_audit,
    comment_search_repair,
)
from articles.operations.audit.comments import COMMENT_KINDS
from articles.operations.audit.common import INDEX_TYPES, REPORT_ONLY_KINDS, Problem
from articles.operations.audit.domains import DOMAIN_KINDS, domain_backfill, domain_entries_repair
from articles.operations.audit.flags import FLAG_KINDS, flags_audit, flags_repair
from articles.operations.audit.group_rankings import (
    GROUP_RANK_KINDS,
    group_backfill,
    group_rank_audit,
    group_repair,
)
from articles.operations.audit.groups import group_memberships
from articles.operations.audit.inboxes import INBOX_KINDS, inbox_audit, inbox_repair
from articles.operations.audit.indexes import INDEX_KINDS
from articles.operations.audit.karma import KARMA_KINDS, comment_karma_audit, comment_karma_repair
from articles.operations.audit.live import LIVE_KINDS
from articles.operations.audit.personal import PERSONAL_KINDS, personal_audit, personal_repair
from articles.operations.audit.rankings import TOP_KINDS, top_audit, top_backfill, top_repair
from articles.operations.audit.repairs import (
    Repaired,
    article_groups_set,
    article_repair,
    group_register,
    index_entries_repair,
    search_index_repair,
)
from articles.operations.audit.runner import comment_audit, invariant_audit
from articles.operations.audit.search_index import SEARCH_KINDS, search_index_audit

__all__ = [
    "ARCHIVE_KINDS",
    "ARTICLE_KARMA_KINDS",
    "ARTICLE_KINDS",
    "COMMENT_KINDS",
    "COMMENT_SEARCH_KINDS",
    "DOMAIN_KINDS",
    "FLAG_KINDS",
    "GROUP_RANK_KINDS",
    "INBOX_KINDS",
    "INDEX_KINDS",
    "INDEX_TYPES",
    "KARMA_KINDS",
    "LIVE_KINDS",
    "PERSONAL_KINDS",
    "REPORT_ONLY_KINDS",
    "SEARCH_KINDS",
    "TOP_KINDS",
    "Problem",
    "Repaired",
    "article_groups_set",
    "article_karma_audit",
    "article_karma_backfill",
    "article_karma_repair",
    "article_repair",
    "comment_audit",
    "comment_karma_audit",
    "comment_karma_repair",
    "comment_repair",
    "comment_search_audit",
    "comment_search_repair",
    "comments_repair_all",
    "domain_backfill",
    "domain_entries_repair",
    "flags_audit",
    "flags_repair",
    "group_backfill",
    "group_memberships",
    "group_rank_audit",
    "group_register",
    "group_repair",
    "inbox_audit",
    "inbox_repair",
    "index_entries_repair",
    "invariant_audit",
    "personal_audit",
    "personal_repair",
    "search_index_audit",
    "search_index_repair",
    "top_audit",
    "top_backfill",
    "top_repair",
]
