"""import_articles: the whole file is checked first, then written, all or nothing.

Written in bounded steps into a scratch database (ARTICLES_RESTORE_DB), which one SWAPDB then
makes the store's: a reader sees the old store or the whole backup, never a part, and no
step holds Redis for longer than RESTORE_BATCH commands (one MULTI/EXEC of the whole backup
held it 1.5 s at 100k articles). With ARTICLES_RESTORE_DB = None (a Redis with one
database) the backup is written in one MULTI/EXEC, as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import redis
from redis.typing import EncodableT, FieldT

from articles import conf, validation
from articles.errors import Conflict, InvalidInput
from articles.operations.audit.common import time_or_none
from articles.operations.backup.records import (
    EXPORT_VERSION,
    ArticleRecord,
    CommentRecord,
    Voters,
    article_record,
    as_list,
    comment_record,
    count,
    raw,
    text,
)
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.types import comment_best

# Commands one staging step sends in one MULTI/EXEC: a few milliseconds of Redis each,
# whatever the size of the backup. Longer values (links, voters, modlog) go in parts of
# RESTORE_PART.
RESTORE_BATCH = 1_000
RESTORE_PART = 1_000


class StoreNotEmpty(Exception):
    """import_articles without --force into a store that holds data."""


class ScratchInUse(Exception):
    """The scratch database (ARTICLES_RESTORE_DB) holds keys: another import is running,
    one was interrupted, or it is some other program's database."""

    def __init__(self, db: int, size: int) -> None:
        super().__init__(db, size)
        self.db, self.size = db, size


def store_is_empty() -> bool:
    """True when the store holds no article, no id counter and no group (import target)."""
    return _is_empty(get_connection())


def _is_empty(conn: redis.Redis | redis.client.Pipeline) -> bool:
    counter = conn.exists(keys.ARTICLE_IDS, keys.COMMENT_IDS)
    found = conn.scan(0, match=keys.ARTICLE_SCAN, count=100)[1]
    return not (counter or conn.exists(keys.TIME, keys.GROUPS) or found)


@dataclass
class _Restore:
    """A backup file, validated: every key name formed from checked ids and names."""

    counter: int | None = None
    comment_counter: int = 0
    header: bool = False
    groups: dict[str, bytes] = field(default_factory=dict)
    articles: list[ArticleRecord] = field(default_factory=list)
    comments: list[CommentRecord] = field(default_factory=list)
    links: dict[str, dict[FieldT, EncodableT]] = field(default_factory=dict)  # by links:<b>
    stats: dict[str, dict[FieldT, EncodableT]] = field(default_factory=dict)
    modlog: list[bytes] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def store_restore(*, records: Iterable[tuple[int, object]], replace: bool) -> Counter[str]:
    """Restore a backup of `store_export()`, given as (line number, decoded record) pairs.

    All or nothing: the whole file is validated before anything is written (a malformed
    record, a file without its header or cut before its final counter record raises
    InvalidInput naming the line), then it is written in one MULTI/EXEC, the id counter
    first, so no post can take an id between the restore and its counter.

    Into an empty store, or with `replace`, which replaces the whole store database
    (FLUSHDB in the same transaction: the articles, links, submissions, moderation log,
    rate-limit and idempotency keys that were there are gone; afterwards the store holds
    exactly the backup). Raises StoreNotEmpty without `replace` into a store with data,
    Conflict if a write arrived while it was checked (nothing was written: run it again).
    """
    plan = _checked(records)
    counters = {
        keys.ARTICLE_IDS: max(plan.counter or 0, max((a.id for a in plan.articles), default=0)),
        keys.COMMENT_IDS: 0,
    }
    _link_comments(plan)
    counters[keys.COMMENT_IDS] = max([plan.comment_counter, *(c.id for c in plan.comments)])
    conn = get_connection()
    scratch = conf.restore_db()
    with conn.pipeline(transaction=True) as pipe:
        try:
            # A post INCRs article: (a comment comment:) before anything else, and a group
            # create writes groups:.
            pipe.watch(keys.ARTICLE_IDS, keys.COMMENT_IDS, keys.TIME, keys.GROUPS)
            if not replace and not _is_empty(pipe):
                raise StoreNotEmpty()
            if scratch is None:
                pipe.multi()
                if replace:
                    pipe.flushdb()
                _write(pipe, plan, counters)
                pipe.execute()
            else:
                _staged(conn, pipe, scratch, plan, counters)
        except redis.WatchError:
            raise Conflict(
                "The store changed while the backup was checked; nothing was "
                "written. Run the import again."
            ) from None
    return plan.counts


def _staged(
    conn: redis.Redis,
    watching: redis.client.Pipeline,
    scratch: int,
    plan: _Restore,
    counters: dict[str, int],
) -> None:
    """Write the plan into the scratch database in steps, then swap it with the store's
    in the watching connection's MULTI/EXEC (so a post or group made meanwhile fails the
    swap, as it failed the one-step write). The store's old keys end in the scratch
    database, which is then emptied (asynchronously, in Redis' own thread)."""
    live = int(conn.connection_pool.connection_kwargs.get("db") or 0)
    if scratch == live:
        raise Conflict(f"ARTICLES_RESTORE_DB is the store's own database ({live}).")
    size = scripts.RESTORE_CLAIM(keys=[keys.RESTORE_STAGING], args=[scratch], client=conn)
    if size:
        raise ScratchInUse(scratch, int(size))
    swapped = False
    try:
        staging = _Staging(conn, live=live, scratch=scratch)
        _write(staging, plan, counters)
        staging.execute_command("DEL", keys.RESTORE_STAGING)
        staging.step()
        watching.multi()
        watching.swapdb(live, scratch)
        watching.execute()
        swapped = True
    finally:
        # The scratch database holds a part of the backup, or the old store: ours to empty
        # either way (a failed swap changed nothing in the store).
        with conn.pipeline(transaction=True) as empty:
            empty.execute_command("SELECT", scratch)
            empty.execute_command("FLUSHDB", "ASYNC" if swapped else "SYNC")
            empty.execute_command("SELECT", live)
            empty.execute()


class _Staging(redis.client.Pipeline):
    """A pipeline into the scratch database that sends itself every RESTORE_BATCH commands,
    each step one MULTI/EXEC opening with SELECT <scratch> and closing with SELECT <store>:
    queued commands all run, so the pooled connection always goes back to its own
    database (an error anywhere in a step is raised after it)."""

    def __init__(self, conn: redis.Redis, *, live: int, scratch: int) -> None:
        super().__init__(conn.connection_pool, conn.response_callbacks, True, None)
        self.live, self.scratch = live, scratch

    def pipeline_execute_command(self, *args: Any, **options: Any) -> redis.client.Pipeline:
        if not self.command_stack:
            super().pipeline_execute_command("SELECT", self.scratch)
        super().pipeline_execute_command(*args, **options)
        if len(self.command_stack) >= RESTORE_BATCH:
            self.step()
        return self

    def step(self) -> None:
        if self.command_stack:
            super().pipeline_execute_command("SELECT", self.live)
            self.execute()


def _checked(records: Iterable[tuple[int, object]]) -> _Restore:
    """The file validated record by record; InvalidInput names the line at fault."""
    plan = _Restore()
    for number, record in records:
        try:
            _validate(plan, record)
        except InvalidInput as exc:
            raise InvalidInput(f"line {number}", f"line {number}: {exc.message}") from None
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            kind = record.get("type") if isinstance(record, dict) else None
            raise InvalidInput(
                f"line {number}", f"line {number}: malformed {kind} record: {exc!r}"
            ) from None
    if not plan.header:
        raise InvalidInput("header", "The file has no header record: not an export.")
    if plan.counter is None:
        raise InvalidInput(
            "counter", "The file ends before its counter record (the last one): truncated?"
        )
    return plan


def _validate(plan: _Restore, record: object) -> None:
    if not isinstance(record, dict):
        raise TypeError(f"a record is an object, not {type(record).__name__}")
    kind = record.get("type")
    if not plan.header and kind != "header":
        raise InvalidInput("type", "The first record must be the header.")
    if plan.counter is not None:
        raise InvalidInput("type", "Nothing may follow the counter record.")
    take = _TAKE.get(kind) if isinstance(kind, str) else None
    if take is None:
        raise InvalidInput("type", f"Unknown record type {kind!r}.")
    take(plan, record)
    plan.counts[str(kind)] += 1


def _header(plan: _Restore, record: dict[str, Any]) -> None:
    if plan.header:
        raise InvalidInput("type", "A second header.")
    if record.get("version") != EXPORT_VERSION:
        raise InvalidInput("version", f"Unknown export version {record.get('version')!r}.")
    plan.header = True


def _counter(plan: _Restore, record: dict[str, Any]) -> None:
    plan.counter = count(record["article_counter"])
    plan.comment_counter = count(record.get("comment_counter", 0))


def _comment(plan: _Restore, record: dict[str, Any]) -> None:
    plan.comments.append(comment_record(record))


def _group(plan: _Restore, record: dict[str, Any]) -> None:
    name = validation.clean_group_name(record["name"], "name")
    plan.groups[name] = raw(record.get("description") or "")


def _article(plan: _Restore, record: dict[str, Any]) -> None:
    plan.articles.append(article_record(record))


def _link(plan: _Restore, record: dict[str, Any]) -> None:
    member = keys.member_key(str(record["member"]))
    if not member:
        raise InvalidInput("member", "A link must map to article:<id>.")
    norm = str(record["link"])
    if not norm:
        raise InvalidInput("link", "A link record needs its normalised link.")
    bucket, slot = keys.link_slot(norm)
    plan.links.setdefault(bucket, {})[slot] = str(keys.article_id_of(member))


def _stats(plan: _Restore, record: dict[str, Any]) -> None:
    if record["key"] not in (keys.STATS_POSTS, keys.STATS_VOTES):
        raise InvalidInput("key", "Only stats:posts and stats:votes can be restored.")
    raw_days: dict[str, object] = dict(record["days"])
    plan.stats[str(record["key"])] = {text(k): count(v) for k, v in raw_days.items()}


def _modlog(plan: _Restore, record: dict[str, Any]) -> None:
    plan.modlog = [raw(e) for e in as_list(record["entries"])]


# How each type of record is checked and taken into the plan.
_TAKE: dict[str, Callable[[_Restore, dict[str, Any]], None]] = {
    "header": _header,
    "counter": _counter,
    "comment": _comment,
    "group": _group,
    "article": _article,
    "link": _link,
    "stats": _stats,
    "modlog": _modlog,
}


def _link_comments(plan: _Restore) -> None:
    """Check the comments against each other and their articles (each article in the
    file, each parent a comment of the same article in the file, depth its parent's + 1)
    and set the counts the restore derives: each comment's `replies`, each article's
    `comments` (its visible comments)."""
    articles = {a.id: a for a in plan.articles}
    comments: dict[int, CommentRecord] = {}
    replies: Counter[int] = Counter()
    visible: Counter[int] = Counter()
    for c in sorted(plan.comments, key=lambda c: c.id):
        _check_comment(c, articles, comments)
        if c.parent_id is not None:
            replies[c.parent_id] += 1
        comments[c.id] = c
        visible[c.article_id] += c.visible
    for comment_id, c in comments.items():
        c.hash[b"replies"] = str(replies[comment_id]).encode()
    for article_id, a in articles.items():
        if visible[article_id] or b"comments" in a.hash:
            a.hash[b"comments"] = str(visible[article_id]).encode()
    plan.comments = [comments[i] for i in sorted(comments)]


def _check_comment(
    c: CommentRecord, articles: dict[int, ArticleRecord], comments: dict[int, CommentRecord]
) -> None:
    """A comment against its article and its parent, those before it in the file."""
    if c.id in comments:
        raise InvalidInput("comment", f"comment {c.id}: twice in the file.")
    if c.article_id not in articles:
        raise InvalidInput("comment", f"comment {c.id}: its article is not in the file.")
    parent = comments.get(c.parent_id) if c.parent_id is not None else None
    if c.parent_id is not None and (parent is None or parent.article_id != c.article_id):
        raise InvalidInput(
            "comment", f"comment {c.id}: its parent is not a comment of its article."
        )
    if c.depth != (parent.depth + 1 if parent is not None else 0):
        raise InvalidInput("comment", f"comment {c.id}: depth is not its parent's + 1.")


def _write(pipe: redis.client.Pipeline, plan: _Restore, counters: dict[str, int]) -> None:
    # The id counters first: no post can take an id between the restore and its counter.
    pipe.mset(counters)
    if plan.groups:
        pipe.hset(keys.GROUPS, mapping=dict(plan.groups.items()))
    for a in plan.articles:
        _write_article(pipe, a)
    for c in plan.comments:
        _write_comment(pipe, c)
    for name in plan.groups:
        pipe.delete(keys.group_order(keys.SCORE, name), keys.group_order(keys.TIME, name))
        pipe.hdel(keys.GROUP_RANKS, name, f"{name}:at", f"{name}:fill")  # filled again
    for bucket, slots in plan.links.items():
        pipe.hset(bucket, mapping=slots)  # ~250 fields a million links
    for key, days in plan.stats.items():
        if days:
            pipe.hset(key, mapping=days)
    pipe.delete(keys.MODLOG)
    for start in range(0, len(plan.modlog), RESTORE_PART):
        pipe.rpush(keys.MODLOG, *plan.modlog[start : start + RESTORE_PART])


def _write_article(pipe: redis.client.Pipeline, a: ArticleRecord) -> None:
    member = keys.article(a.id)
    up, down = keys.voted(a.id), keys.voted_down(a.id)
    pipe.delete(member, up, down)
    fields: dict[FieldT, EncodableT] = dict(a.hash.items())
    # votes: is derived from the counts, so backups made before it existed restore
    # into it too.
    net = _hash_count(a.hash.get(b"votes")) - _hash_count(a.hash.get(b"downvotes"))
    if fields.pop(b"held", None) is not None:
        a = _released(a, net)
    pipe.hset(member, mapping=fields)
    for word in a.words:
        pipe.sadd(keys.postings(word), a.id)
    pipe.zadd(keys.VOTES, {member: net})
    for score, index in ((a.score, keys.SCORE), (a.time, keys.TIME), (a.good, keys.GOOD)):
        if score is not None:
            pipe.zadd(index, {member: score})
    if a.submitted is not None and a.poster_pk:
        pipe.zadd(keys.submitted(a.poster_pk), {member: a.submitted})
        # Derived, as votes: is: into an empty database, so each poster's sum starts
        # from nothing and every poster's figure is kept (INCRBY 0 writes "0").
        pipe.incrby(keys.article_karma(a.poster_pk), net)
    site = validation.link_domain(keys.text(a.hash.get(b"link", b"")))
    if site and a.time is not None:  # derived from the link, as votes: from the counts
        pipe.zadd(keys.domain(site), {member: a.time})
    _write_voters(pipe, up, down, a.voters)
    for name in a.groups:
        pipe.sadd(keys.group(name), member)


def _released(a: ArticleRecord, net: int) -> ArticleRecord:
    """An article held for its flags comes back released and ranked, as a dismissal
    leaves it (flag_decide.lua): a backup keeps no flags, so no queue would list it."""
    posted = time_or_none(a.hash.get(b"time"))
    if posted is None:
        return a
    good = posted if _hash_count(a.hash.get(b"votes")) >= conf.good_votes() else None
    score = posted + conf.vote_score() * net
    return replace(a, score=score, time=posted, good=good)


def _write_comment(pipe: redis.client.Pipeline, c: CommentRecord) -> None:
    member = keys.comment(c.id)
    up, down = keys.comment_voted(c.id), keys.comment_voted_down(c.id)
    pipe.delete(member, up, down)
    # a comment held for its flags unfolds: a backup keeps no flags (see _released)
    pipe.hset(member, mapping={k: v for k, v in c.hash.items() if k != b"held"})
    if c.parent_id is None:
        best = keys.article_comments(c.article_id)
        new = keys.article_comments_new(c.article_id)
    else:
        best, new = keys.replies(c.parent_id), keys.replies_new(c.parent_id)
    pipe.zadd(best, {member: comment_best(c.id, c.votes, c.downvotes)})
    pipe.zadd(new, {member: c.id})
    pipe.zadd(keys.article_comments_all(c.article_id), {member: c.time})
    for word in c.words:
        pipe.sadd(keys.comment_postings(word), c.id)
    if c.visible:
        pipe.zadd(keys.COMMENTS, {member: c.time})
        if c.author_pk:
            pipe.zadd(keys.user_comments(c.author_pk), {member: c.time})
            # Derived too: into an empty database, so the sums start from nothing.
            if c.votes != c.downvotes:
                pipe.incrby(keys.comment_karma(c.author_pk), c.votes - c.downvotes)
    _write_voters(pipe, up, down, c.voters)


def _write_voters(pipe: redis.client.Pipeline, up: str, down: str, voters: Voters) -> None:
    sets = ((up, voters.up, voters.up_expire_at_ms), (down, voters.down, voters.down_expire_at_ms))
    for key, members, expire in sets:
        if members:
            for start in range(0, len(members), RESTORE_PART):
                pipe.sadd(key, *members[start : start + RESTORE_PART])
            if expire is not None:
                # Past expiry deletes the set, as Redis would have by now.
                pipe.pexpireat(key, expire)


def _hash_count(value: bytes | None) -> int:
    """A count of the hash as written (absent is 0); a bad one counts 0 here and is
    reported by check_votes like any other."""
    try:
        return int(float(value or 0))
    except (ValueError, OverflowError):
        return 0
