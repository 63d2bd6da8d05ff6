"""The Lua scripts of the store, each loaded once (Sentry-style) and run with client=.

Every write of content (articles, votes, groups, comments) runs one of these scripts, so
this is where a write is seen whatever surface made it (pages, API, staff, commands):
after each run of a write script, `written` is sent (sender: the script's name). The
process's own caches of pages listen (articles.web.pagecache). A script queued in a
pipeline is announced when queued: its write lands with the batch, within the listeners'
own staleness bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from importlib.resources import files
from typing import Any

from django.dispatch import Signal
from django.utils.translation import gettext
from redis.client import Pipeline
from redis.commands.core import Script
from redis.exceptions import NoScriptError

from articles.errors import (
    ArticleNotFound,
    ArticlesError,
    CommentingClosed,
    CommentNotFound,
    CommentTooDeep,
    Conflict,
    DuplicateLink,
    EditWindowClosed,
    GroupExists,
    GroupNotFound,
    IdempotencyKeyReused,
    NotAllowed,
    StoreCorrupt,
    VotingClosed,
)
from articles.operations import metrics
from articles.store import keys
from articles.types import Period, Status

# importlib.resources, not a path beside __file__: the scripts load from a wheel or zip too.
_LUA = files("articles.store") / "lua"
# The status enum, as the Lua table S every script answers with (S.OK, S.NOT_FOUND, ...):
# one definition, in types.Status, so Lua and Python cannot drift apart.
_STATUS = "local S = {" + ", ".join(f"{s.name} = {s.value}" for s in Status) + "}\n"
# The kept periods, as the Lua table PERIODS ({name, seconds} in keys.PERIODS' order, the
# order of keys.PERIOD_KEYS): their lengths are types.Period's, not a second copy.
_PERIODS = (
    "local PERIODS = {" + ", ".join(f"{{'{p}', {Period(p).seconds}}}" for p in keys.PERIODS) + "}\n"
)
# The cap of a voter's list of up-voted articles, which vote.lua keeps (keys.UPVOTED_KEEP).
_UPVOTED = f"local UPVOTED_KEEP = {keys.UPVOTED_KEEP}\n"
_LIB = _STATUS.encode() + _PERIODS.encode() + _UPVOTED.encode() + (_LUA / "_lib.lua").read_bytes()


# Sent after each run of a script that writes content; sender: the script's name, reply:
# its reply (a list opening with its Status), or None when unknown.
written = Signal()


# Every script of the store by its SHA1: what run_queued loads when a server lacks one.
_BY_SHA: dict[str, TimedScript] = {}


class TimedScript(Script):
    """A script whose every run is timed into articles_script_seconds{script=name}, and,
    if it `writes` content, announced by `written`."""

    def __init__(self, name: str, source: bytes, *, writes: bool) -> None:
        # bytes: with no client yet, redis-py's Script refuses a str source.
        super().__init__(None, source)  # type: ignore[arg-type]
        self.name, self.writes = name, writes
        self.seconds = metrics.SCRIPT_SECONDS.labels(script=name)
        _BY_SHA[self.sha] = self

    def __call__(self, keys: Any = None, args: Any = None, client: Any = None) -> Any:
        if isinstance(client, Pipeline):  # only queued: its time is the whole batch's
            self._announce(None)
            return super().__call__(keys=keys, args=args, client=client)
        started = time.perf_counter()
        reply = None
        try:
            reply = super().__call__(keys=keys, args=args, client=client)
            return reply
        finally:
            self.seconds.observe(time.perf_counter() - started)
            self._announce(reply)

    def _announce(self, reply: Any) -> None:
        """`written`, with the script's reply (None: unknown, as when queued or failed)."""
        if self.writes:
            written.send(sender=self.name, reply=reply)


def queue(pipe: Pipeline, script: TimedScript, keys: Sequence[Any], args: Sequence[Any]) -> None:
    """`script` queued on `pipe` as a bare EVALSHA, for reads sent together in one round
    trip (run_queued). Through `client=pipe` redis-py first asks SCRIPT EXISTS of every
    script queued, a round trip of its own each time; here a script is loaded only when
    the server says it lacks it (restarted, or SCRIPT FLUSH)."""
    pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)


def run_queued(pipe: Pipeline) -> list[Any]:
    """A pipeline of reads and queued scripts run, its replies with errors in place
    (raise_on_error=False). A NOSCRIPT reply sends the batch again, once, behind a
    SCRIPT LOAD of each script it queued (in the same round trip): it is reads, so sending
    it twice changes nothing."""
    stack = list(pipe.command_stack)
    replies = pipe.execute(raise_on_error=False)
    if not any(isinstance(reply, NoScriptError) for reply in replies):
        return replies
    shas = {args[1] for args, _ in stack if args[0] == "EVALSHA"}
    for sha in shas:
        pipe.execute_command("SCRIPT", "LOAD", _BY_SHA[sha].script)
    for args, options in stack:
        pipe.execute_command(*args, **options)
    return pipe.execute(raise_on_error=False)[len(shas) :]


# A script that finds its inputs changed since the caller read them answers "retry";
# a few rounds always suffice unless something rewrites the same article in a loop.
ATTEMPTS = 5


def _load(name: str, *, writes: bool = True) -> TimedScript:
    return TimedScript(name, _LIB + (_LUA / f"{name}.lua").read_bytes(), writes=writes)


def _guarded(name: str, inner: str) -> TimedScript:
    """`name`.lua run before `inner`.lua, whose text, as written, becomes its function
    cast(): one script, the inner one's KEYS and ARGV first."""
    cast = b"local function cast()\n" + (_LUA / f"{inner}.lua").read_bytes() + b"\nend\n"
    return TimedScript(name, _LIB + cast + (_LUA / f"{name}.lua").read_bytes(), writes=True)


POST = _load("post")
VOTE = _load("vote")
VOTE_GUARDED = _guarded("vote_guarded", "vote")  # a vote with its rate limits and credential
GROUPS_UPDATE = _load("groups_update")
DELETE = _load("delete")
EDIT = _load("edit")
GROUP_SAVE = _load("group_save")
GROUP_DELETE = _load("group_delete")
RANKING_PAGE = _load("ranking_page", writes=False)  # fills or sweeps a kept ranking only
ARTICLE_ROWS = _load("article_rows", writes=False)
SEARCH = _load("search", writes=False)  # fills a search cache slot only
REINDEX = _load("reindex")
UNINDEX = _load("unindex")
COMMENT_REINDEX = _load("comment_reindex")
COMMENT_POST = _load("comment_post")
COMMENT_VOTE = _load("comment_vote")
COMMENT_EDIT = _load("comment_edit")
COMMENT_DELETE = _load("comment_delete")
COMMENT_THREAD = _load("comment_thread", writes=False)
COMMENT_ROWS = _load("comment_rows", writes=False)
COMMENT_REPAIR = _load("comment_repair")
COMMENT_TALLY = _load("comment_tally", writes=False)
USER_FORGET = _load("user_forget")
INBOX_PAGE = _load("inbox_page", writes=False)
INBOX_MARK = _load("inbox_mark", writes=False)  # a user's own inbox: no page anyone shares
ARTICLE_PURGE = _load("article_purge")
ARCHIVE = _load("archive")  # the rows are in the database first: pages read the same
ARCHIVE_COMMENTS = _load("archive_comments")
ARCHIVE_UNLIST = _load("archive_unlist")  # a deleted archived article's comments
LINK_CLOSE = _load("link_close")  # closed articles' link entries (manage.py archive)
VOTES_WITHDRAW = _load("votes_withdraw")
MODLOG_FORGET = _load("modlog_forget")
GROUP_PURGE = _load("group_purge")
USER_KARMA = _load("user_karma", writes=False)
KARMA_FILL = _load("karma_fill")  # check_votes --repair: a user's kept article karma
DOMAIN_FIX = _load("domain_fix")  # check_votes --repair: the sites' indexes
LOGIN_ATTEMPT = _load("login_attempt", writes=False)  # rate-limit counters only
LOGIN_REFUND = _load("login_refund", writes=False)
TOP_PAGE = _load("top_page", writes=False)  # its trims keep the ranking exact, change no page
TOP_FILL = _load("top_fill", writes=False)  # a backfill: the same ranking, kept from now on
TOP_FIX = _load("top_fix")
GROUP_FILL = _load("group_fill", writes=False)  # the same ranking, kept from now on
GROUP_FIX = _load("group_fix")
LISTING_PAGE = _load("listing_page", writes=False)
# A user's own lists change only their own pages, which no page cache keeps (pagecache).
PERSONAL = _load("personal", writes=False)
RESTORE_CLAIM = _load("restore_claim", writes=False)  # in the scratch database only
FLAG = _load("flag")
FLAG_DECIDE = _load("flag_decide")


# --- script replies ------------------------------------------------------------------

# The one map from a script's status to its error (types.Status lists the statuses).
_ERRORS: dict[Status, Callable[[str], ArticlesError]] = {
    Status.NOT_FOUND: lambda detail: ArticleNotFound(),
    Status.VOTING_CLOSED: lambda detail: VotingClosed(),
    Status.RETRY: lambda detail: Conflict(),
    Status.NO_GROUP: lambda detail: GroupNotFound(
        gettext("No such group: %(name)s.") % {"name": detail}
    ),
    Status.GROUP_EXISTS: lambda detail: GroupExists(),
    Status.ID_TAKEN: lambda detail: Conflict(),
    Status.DUPLICATE_LINK: lambda detail: DuplicateLink(keys.article_id_of(detail)),
    Status.BAD_DATA: lambda detail: StoreCorrupt(detail),
    Status.KEY_REUSED: lambda detail: IdempotencyKeyReused(int(detail) if detail else None),
    Status.COMMENT_NOT_FOUND: lambda detail: CommentNotFound(),
    Status.COMMENTING_CLOSED: lambda detail: CommentingClosed(),
    Status.TOO_DEEP: lambda detail: CommentTooDeep(int(detail)),
    Status.EDIT_CLOSED: lambda detail: EditWindowClosed(),
    Status.NOT_AUTHOR: lambda detail: NotAllowed(
        gettext("Only its author may do that to a comment.")
    ),
    Status.COMMENT_GONE: lambda detail: NotAllowed(gettext("This comment was deleted.")),
}


def raise_for_status(reply: Sequence[object], *, allow: Iterable[Status] = ()) -> Status:
    """The status that opens a script's reply. OK, REPEATED and the statuses in `allow`
    (those the caller acts on itself) are returned; any other raises its error, with the
    reply's second element as the detail."""
    status = Status(int(reply[0]))  # type: ignore[call-overload]
    if status in (Status.OK, Status.REPEATED) or status in allow:
        return status
    detail = _text(reply[1]) if len(reply) > 1 else ""
    if status is Status.BAD_DATA:
        raise StoreCorrupt(detail, _text(reply[2]) if len(reply) > 2 else "")
    raise _ERRORS[status](detail)


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
