"""Search: the words of a query intersected in Redis, ordered by score, time or votes."""

from __future__ import annotations

import hashlib
import logging

from django.utils.translation import gettext

from articles import conf, validation
from articles.errors import (
    EmptySearch,
    InvalidInput,
)
from articles.operations.embedded import SET_LISTPACK_MAX
from articles.store import clock, keys, replicas, scripts, search
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.selectors._common import _bounds, _page
from articles.store.selectors.archived import merged_comment_search, merged_search
from articles.store.selectors.comments import _comment_rows
from articles.types import (
    Comment,
    CommentSearchPage,
    Period,
    SearchOrder,
    SearchPage,
)

logger = logging.getLogger("articles.store.selectors")  # the package's one logger


# search.lua's bounds: it builds a result (ZINTERSTORE) only when that costs at most
# SEARCH_BUILD_MAX member operations (the smallest candidate set's size, times 3 with an
# exclusion, 5 with a period too), else walks the ranking SEARCH_STEP members a call, up
# to SEARCH_STEPS calls a page. Measured at 100k articles on a busy machine: a build of
# a set of 6,000 took 3-9 ms (a sorted-set insert per result), a walk ~0.7 µs a member,
# so a call stays within ~1.5-3 ms inside Redis. A word's set of at most SET_LISTPACK_MAX
# members (a listpack on Redis 7.2+, where each membership test scans it) is read into a
# table once a call instead of asked member by member.
SEARCH_BUILD_MAX = 2_000
SEARCH_STEP = 2_000
SEARCH_STEPS = 6
_SEARCH_ORDER = {SearchOrder.SCORE: "score", SearchOrder.NEWEST: "time", SearchOrder.VOTES: "votes"}


@replicas.reads
def article_search(
    *,
    q: str,
    order: SearchOrder = SearchOrder.SCORE,
    group: str | None = None,
    period: Period = Period.ALL,
    page: int | str = 1,
    user_id: int | None = None,
    now: float | None = None,
) -> SearchPage:
    """Articles holding every word of `q` and none of its `-words`, 25 a page, by score,
    newest or net votes, optionally in a group and posted in the last day/week/month/year.
    The script builds the cached intersection when that is cheap, else walks the ranking
    a bounded step a call (search.lua): up to SEARCH_STEPS calls, usually one, then one
    call for the page's hashes. Past the cheap cases the count may be an estimate
    (`count_exact`), and a page the steps did not fill is marked (`complete`): asking
    again goes on. An unknown group finds nothing.
    Raises EmptySearch (nothing to look for), InvalidInput (q too long, too many words,
    a bad group name or page)."""
    query = _parsed(q)
    name = validation.clean_group_name(group, "group") if group else ""
    number, start, stop = _bounds(page)
    earliest = "" if period.seconds is None else str(int(clock.now(now)) - period.seconds)
    # The slot's content names the period, not its start: like top:<period>, a cached
    # result's window is at most the cache's lifetime old.
    spelled = f"{order.value}|{name}|{period.value}|{query.canonical}"
    digest = hashlib.blake2b(spelled.encode(), digest_size=8).digest()
    slot = int.from_bytes(digest, "big") % conf.search_cache_slots()
    cache = keys.search_cache(slot)
    scratch = keys.search_scratch(slot)
    terms = [*query.include, *query.exclude]
    # Archived articles' postings are in the database: the page is merged from the top
    # `stop + 1` of both (bounded by the page's depth), so Redis is asked from rank 0.
    archive_on = conf.archive_after() is not None
    reply = _stepped(
        keys=[
            cache,
            keys.search_cache_query(slot),
            scratch,
            keys.SCORE,
            keys.TIME,
            keys.VOTES,
            keys.group(name) if name else scratch,
            keys.SEARCH_STEMMER,
            *map(keys.postings, terms),
            *(keys.postings(query.typed.get(word, word)) for word in terms),
            *(keys.search_union(slot, i) for i in range(len(terms))),
            keys.VOTES if period is Period.ALL else keys.period_votes(period.value),
            keys.PERIOD_STATE,
        ],
        args=[
            spelled,
            conf.search_cache_seconds(),
            0 if archive_on else start,
            stop,
            _SEARCH_ORDER[order],
            len(query.include),
            earliest,
            conf.search_language(),
            SEARCH_BUILD_MAX,
            SEARCH_STEP,
            "" if period is Period.ALL else period.value,
            SET_LISTPACK_MAX,
            keys.POSTING_PREFIX,
        ],
    )
    if archive_on:
        members, count = merged_search(
            get_connection(),
            list(reply[4:]),
            int(reply[1]),
            order=_SEARCH_ORDER[order],
            include=query.include,
            exclude=query.exclude,
            group=name,
            earliest=earliest,
            start=start,
            stop=stop,
        )
        found = _page(members, number, count, user_id)
    else:
        found = _page(reply[4:], number, int(reply[1]), user_id)
    return SearchPage(
        found.items,
        found.number,
        found.count,
        found.per_page,
        words=query.include,
        excluded=query.exclude,
        count_exact=reply[2] == 1,
        complete=reply[3] == 0,
    )


def _stepped(*, keys: list[str], args: list[object]) -> list:
    """search.lua's reply for one page: a walk does a bounded step a call, so a page is
    called for up to SEARCH_STEPS times (each call short: other clients run between), then
    answered as far as it got (a later call goes on from there)."""
    for _ in range(SEARCH_STEPS):
        reply = scripts.SEARCH(keys=keys, args=args, client=get_connection())
        raise_for_status(reply)
        if reply[3] == 0:
            break
    return reply


def _parsed(q: object) -> search.Query:
    """The query of `q`. Raises EmptySearch, InvalidInput naming q."""
    if not isinstance(q, str):
        raise InvalidInput("q", gettext("A search is text."))
    try:
        return search.parse_query(q)
    except search.QueryError as exc:
        if exc.empty:
            raise EmptySearch(str(exc)) from None
        raise InvalidInput("q", str(exc)) from None


@replicas.reads
def comment_search(
    *,
    q: str,
    period: Period = Period.ALL,
    page: int | str = 1,
    user_id: int | None = None,
    now: float | None = None,
) -> CommentSearchPage:
    """Visible comments holding every word of `q` (among their first
    ARTICLES_SEARCH_COMMENT_WORDS distinct words) and none of its `-words`, newest first,
    25 a page, optionally posted in the last day/week/month/year. search.lua's machinery
    over comment_postings:<word>, with comments: (every visible comment by post time) as its order:
    the script (up to SEARCH_STEPS calls, as for articles), then one of the page's comments.
    With comment search off (ARTICLES_SEARCH_COMMENT_WORDS 0) it finds nothing.
    Raises EmptySearch, InvalidInput (q, page)."""
    query = _parsed(q)
    number, start, stop = _bounds(page)
    per_page = stop - start + 1
    if not conf.search_comment_words():
        return CommentSearchPage([], number, 0, per_page, words=query.include)
    earliest = "" if period.seconds is None else str(int(clock.now(now)) - period.seconds)
    spelled = f"comments|newest|{period.value}|{query.canonical}"
    digest = hashlib.blake2b(spelled.encode(), digest_size=8).digest()
    slot = int.from_bytes(digest, "big") % conf.search_cache_slots()
    scratch = keys.search_scratch(slot)
    terms = [keys.comment_postings(word) for word in (*query.include, *query.exclude)]
    archive_on = conf.archive_after() is not None  # as article_search: merged, from rank 0
    reply = _stepped(
        keys=[
            keys.search_cache(slot),
            keys.search_cache_query(slot),
            scratch,
            keys.COMMENTS,  # no points order across the site: score: is unused
            keys.COMMENTS,
            keys.COMMENTS,  # nor votes:
            scratch,  # no group
            keys.SEARCH_STEMMER,
            *terms,
            *terms,  # no sets of words as typed: comments were indexed with stems
            *(keys.search_union(slot, i) for i in range(len(terms))),
            keys.COMMENTS,  # no ranking by votes
            keys.PERIOD_STATE,
        ],
        args=[
            spelled,
            conf.search_cache_seconds(),
            0 if archive_on else start,
            stop,
            "time",
            len(query.include),
            earliest,
            conf.search_language(),
            SEARCH_BUILD_MAX,
            SEARCH_STEP,
            "",
            SET_LISTPACK_MAX,
            keys.COMMENT_POSTING_PREFIX,
        ],
    )
    members, count = list(reply[4:]), int(reply[1])
    if archive_on:
        members, count = merged_comment_search(
            get_connection(),
            members,
            count,
            include=query.include,
            exclude=query.exclude,
            earliest=earliest,
            start=start,
            stop=stop,
        )
    found = _comments_of([keys.text(m) for m in members], user_id)
    return CommentSearchPage(
        found,
        number,
        count,
        per_page,
        words=query.include,
        excluded=query.exclude,
        count_exact=reply[2] == 1,
        complete=reply[3] == 0,
    )


def _comments_of(members: list[str], user_id: int | None) -> list[Comment]:
    """The comments `members` names, in that order, with their articles' titles and the
    viewer's vote (one script call); one gone or deleted since the search was cached is
    left out."""
    if not members:
        return []
    found = _comment_rows(members, "members", 0, len(members) - 1, user_id)
    return [c for c in found.items if not c.state]
