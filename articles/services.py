"""Writes to the article store. Each multi-key change is one Lua script (see lua/)."""

from __future__ import annotations

import functools
import json
import time as _time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import ParamSpec, TypeVar

import redis

from articles import conf, keys, scripts, selectors, validation
from articles.connection import get_connection, refuses_writes
from articles.errors import (
    ArticleNotFound,
    Conflict,
    DuplicateLink,
    GroupExists,
    GroupNotFound,
    InvalidInput,
    NotAllowed,
    StoreUnavailable,
    VotingClosed,
)
from articles.types import Article, RateLimit, Vote

# A script that finds its inputs changed since the caller read them answers "retry";
# a few rounds always suffice unless something rewrites the same article in a loop.
_ATTEMPTS = 5


# --- acknowledged writes reach the replicas (ARTICLES_WAIT_REPLICAS) ----------------------

# WAIT counts the replicas holding every write *this connection* made. The services may
# write on another pooled connection, so the barrier first PUBLISHes on this one: PUBLISH
# is replicated, which moves this connection's offset past every write already done.
_P = ParamSpec("_P")
_T = TypeVar("_T")


def replicas_confirm() -> None:
    """Block until ARTICLES_WAIT_REPLICAS replicas hold every write done so far.

    Raises StoreUnavailable (503) when fewer confirm within ARTICLES_WAIT_TIMEOUT_MS: the
    write is on the primary but could be lost in a failover, so the client should retry
    (every write here is safe to repeat).
    """
    needed = conf.wait_replicas()
    if needed <= 0:
        return
    pipe = get_connection().pipeline(transaction=False)
    pipe.publish(keys.REPLICATION_BARRIER, b"")
    pipe.wait(needed, conf.wait_timeout_ms())
    _, confirmed = pipe.execute()
    if int(confirmed) < needed:
        raise StoreUnavailable(
            f"The change reached {confirmed} of {needed} replica(s) in time; please retry."
        )


def _replicated(write: Callable[_P, _T]) -> Callable[_P, _T]:
    """Every write service: a Redis refusing writes (READONLY after a failover, NOREPLICAS,
    out of memory) becomes StoreUnavailable (503), and with ARTICLES_WAIT_REPLICAS the
    write returns only once that many replicas hold it."""

    @functools.wraps(write)
    def confirmed_write(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            result = write(*args, **kwargs)
        except redis.ResponseError as exc:
            if not refuses_writes(exc):
                raise
            if any(reason in str(exc) for reason in ("NOREPLICAS", "MASTERDOWN")):
                raise StoreUnavailable(
                    "The article store cannot reach its replicas; please retry."
                ) from exc
            raise StoreUnavailable(
                "The article store is read-only or full right now (failover?); please retry."
            ) from exc
        replicas_confirm()
        return result

    return confirmed_write


@_replicated
def article_post(
    *,
    user_id: int,
    poster_name: str,
    title: str,
    link: str = "",
    text: str = "",
    groups: Iterable[str] = (),
    now: float | None = None,
    idempotency_key: str | None = None,
) -> Article:
    """Post an article with its poster's own up-vote (1 vote, score time + 432).

    Raises InvalidInput, GroupNotFound, DuplicateLink (the link is already posted and
    still open for voting). With `idempotency_key`, a repeat returns the first article.
    """
    title, link, text = validation.clean_post(title, link, text)
    names = validation.clean_group_names(list(groups))
    idem_key = _idempotency_key(user_id, idempotency_key)
    posted = int(_clock(now))
    norm = validation.normalize_link(link) if link else ""
    conn = get_connection()
    # The id comes first (the book's INCR). A retried INCR only skips an id; the script
    # itself refuses to overwrite an existing article, so a retried script is harmless.
    article_id = int(conn.incr(keys.ARTICLE_IDS))
    member = keys.article(article_id)
    group_keys = [key for name in names for key in _group_keys(name)]
    for _ in range(_ATTEMPTS):
        seen = _decode(conn.hget(keys.LINKS, norm)) if norm else ""
        result = scripts.POST(
            keys=[
                member,
                keys.voted(article_id),
                keys.SCORE,
                keys.TIME,
                keys.GOOD,
                keys.submitted(user_id),
                keys.LINKS,
                keys.GROUPS,
                keys.STATS_POSTS,
                _member_key(seen) or member,
                idem_key or member,
                *group_keys,
            ],
            args=[
                member,
                keys.user(user_id),
                title,
                link,
                text,
                poster_name,
                posted,
                conf.vote_score(),
                conf.window(),
                conf.good_votes(),
                norm,
                _day(posted),
                conf.idempotency_seconds() if idem_key else 0,
                ",".join(names),
                article_id,
                seen,
            ],
            client=conn,
        )
        status = int(result[0])
        if status == 1:
            return Article(
                id=article_id,
                title=title,
                link=link,
                text=text,
                poster=keys.user(user_id),
                poster_name=poster_name,
                time=posted,
                votes=1,
                downvotes=0,
                score=posted + conf.vote_score(),
                groups=tuple(names),
                voting_closes_at=posted + conf.window(),
                my_vote=Vote.UP,
            )
        if status == 2:
            return selectors.article_get(article_id=int(result[1]), user_id=user_id)
        if status == 3:
            article = selectors.article_get(article_id=article_id, user_id=user_id)
            if article.poster == keys.user(user_id):
                return article  # our own request, re-sent after a stall, already ran
            raise Conflict()
        if status == 4:
            raise GroupNotFound(f"No such group: {_decode(result[1])}.")
        if status == 5:
            raise DuplicateLink(keys.article_id_of(_decode(result[1])))
    raise Conflict()


@_replicated
def article_vote(
    *, article_id: int, user_id: int, direction: Vote, now: float | None = None
) -> Article:
    """Set user_id's vote to up, down or none; repeating a vote changes nothing.

    Returns the article as it now is. Raises ArticleNotFound, VotingClosed.
    """
    member = _article_member(article_id)
    result = scripts.VOTE(
        keys=[
            member,
            keys.voted(article_id),
            keys.voted_down(article_id),
            keys.SCORE,
            keys.GOOD,
            keys.STATS_VOTES,
        ],
        args=[
            member,
            keys.user(user_id),
            direction.value,
            _clock(now),
            conf.vote_score(),
            conf.window(),
            conf.good_votes(),
            _day(_clock(now)),
        ],
        client=get_connection(),
    )
    status = int(result[0])
    if status == -1:
        raise ArticleNotFound()
    if status == -2:
        raise VotingClosed()
    fields = dict(zip(result[2::2], result[3::2], strict=True))
    return Article.from_hash(
        article_id,
        fields,
        score=None,  # time + 432 x net votes, from the hash the script returned
        window=conf.window(),
        vote_score=conf.vote_score(),
        my_vote=Vote(int(result[1])),
    )


@_replicated
def article_groups_update(
    *,
    article_id: int,
    add: Iterable[str] = (),
    remove: Iterable[str] = (),
    actor: str = "",
    reason: str = "",
    now: float | None = None,
) -> tuple[str, ...]:
    """Add the article to `add` and remove it from `remove` in one step (the book's
    add_remove_groups); returns its groups. Raises ArticleNotFound, GroupNotFound."""
    member = _article_member(article_id)
    added = validation.clean_group_names(list(add), "add")
    removed = validation.clean_group_names(list(remove), "remove")
    if set(added) & set(removed):
        raise InvalidInput("remove", "A group cannot be both added and removed.")
    if not added and not removed:
        return selectors.article_get(article_id=article_id).groups
    entry = _log(actor, "groups", member, reason, now, add=added, remove=removed)
    result = scripts.GROUPS_UPDATE(
        keys=[
            member,
            keys.GROUPS,
            keys.MODLOG,
            *[key for name in added + removed for key in _group_keys(name)],
        ],
        args=[member, len(added), len(removed), entry, conf.modlog_length(), *added, *removed],
        client=get_connection(),
    )
    status = int(result[0])
    if status == -1:
        raise ArticleNotFound()
    if status == -4:
        raise GroupNotFound(f"No such group: {_decode(result[1])}.")
    return tuple(g for g in _decode(result[1]).split(",") if g)


@_replicated
def article_delete(
    *,
    article_id: int,
    actor_id: int,
    actor: str,
    is_staff: bool,
    reason: str = "",
    now: float | None = None,
) -> None:
    """Delete an article from every index, group and voter set in one step.

    Staff may delete any article; a poster only their own, while voting is open.
    Raises ArticleNotFound, NotAllowed.
    """
    member = _article_member(article_id)
    now = _clock(now)
    reason = validation.clean_reason(reason)
    conn = get_connection()
    for _ in range(_ATTEMPTS):
        article = selectors.article_get(article_id=article_id)
        own = article.poster_id is not None and article.poster_id == actor_id
        if not (is_staff or (own and article.voting_open(now))):
            raise NotAllowed(
                "Only staff, or the poster while voting is open, may delete an article."
            )
        poster_id = article.poster_id
        raw_groups = ",".join(article.groups)
        entry = _log(actor, "delete", member, reason, now, title=article.title) if is_staff else ""
        result = scripts.DELETE(
            keys=[
                member,
                keys.voted(article_id),
                keys.voted_down(article_id),
                keys.SCORE,
                keys.TIME,
                keys.GOOD,
                keys.submitted(poster_id) if poster_id else member,
                keys.LINKS,
                keys.MODLOG,
                *[key for name in article.groups for key in _group_keys(name)],
            ],
            args=[
                member,
                raw_groups,
                article.link,
                article.poster,
                _normalized_or_empty(article.link),
                entry,
                conf.modlog_length(),
            ],
            client=conn,
        )
        status = int(result[0])
        if status == 1:
            return
        if status == -1:
            raise ArticleNotFound()
    raise Conflict()


@_replicated
def article_edit(
    *,
    article_id: int,
    title: str,
    link: str,
    actor: str,
    reason: str = "",
    now: float | None = None,
) -> Article:
    """Staff: change an article's title and link. Raises ArticleNotFound, InvalidInput."""
    member = _article_member(article_id)
    title, link = validation.clean_title(title), validation.clean_link(link)
    reason = validation.clean_reason(reason)
    conn = get_connection()
    for _ in range(_ATTEMPTS):
        before = selectors.article_get(article_id=article_id)
        if not link and not before.text:
            raise InvalidInput("link", "An article without a text needs a link.")
        entry = _log(actor, "edit", member, reason, now, title=title, link=link)
        result = scripts.EDIT(
            keys=[member, keys.LINKS, keys.MODLOG],
            args=[
                member,
                title,
                link,
                before.link,
                _normalized_or_empty(before.link),
                validation.normalize_link(link) if link else "",
                entry,
                conf.modlog_length(),
            ],
            client=conn,
        )
        status = int(result[0])
        if status == 1:
            return selectors.article_get(article_id=article_id)
        if status == -1:
            raise ArticleNotFound()
    raise Conflict()


@_replicated
def group_create(*, name: str, description: str = "", actor: str = "") -> None:
    """Register a new group. Raises InvalidInput, GroupExists."""
    _group_save(name=name, description=description, actor=actor, mode="create")


@_replicated
def group_update(*, name: str, description: str, actor: str = "") -> None:
    """Change a group's description. Raises InvalidInput, GroupNotFound."""
    _group_save(name=name, description=description, actor=actor, mode="update")


def _group_save(*, name: str, description: str, actor: str, mode: str) -> None:
    name = validation.clean_group_name(name, "name")
    description = validation.clean_description(description)
    entry = _log(actor, f"group_{mode}", keys.group(name), "", None, description=description)
    result = scripts.GROUP_SAVE(
        keys=[keys.GROUPS, keys.MODLOG],
        args=[name, description, mode, entry, conf.modlog_length()],
        client=get_connection(),
    )
    status = int(result[0])
    if status == -5:
        raise GroupExists()
    if status == -4:
        raise GroupNotFound()


@_replicated
def group_delete(*, name: str, actor: str = "", reason: str = "") -> None:
    """Delete a group and take it off its articles. Raises GroupNotFound."""
    name = validation.clean_group_name(name, "name")
    reason = validation.clean_reason(reason)
    conn = get_connection()
    entry = _log(actor, "group_delete", keys.group(name), reason, None)
    for _ in range(_ATTEMPTS):
        members = sorted(_decode(m) for m in conn.smembers(keys.group(name)))
        valid = [m for m in members if _member_key(m)]
        result = scripts.GROUP_DELETE(
            keys=[
                keys.GROUPS,
                keys.group(name),
                keys.group_order(keys.SCORE, name),
                keys.group_order(keys.TIME, name),
                keys.MODLOG,
                *valid,
            ],
            args=[name, entry, conf.modlog_length(), *valid],
            client=conn,
        )
        status = int(result[0])
        if status == 1:
            return
        if status == -4:
            raise GroupNotFound()
    raise Conflict()


def rate_limit_hit(
    *, scope: str, ident: str, limit: int, period: int, now: float | None = None
) -> RateLimit:
    """Count one request against a fixed window of `period` seconds (one round trip)."""
    return rate_limit_hits(hits=[(scope, ident, limit, period)], now=now)[0]


def rate_limit_hits(
    *, hits: Sequence[tuple[str, str, int, int]], now: float | None = None
) -> list[RateLimit]:
    """Count one request in each (scope, ident, limit, period) window, all in one round
    trip (a request of the API counts against up to four windows)."""
    now = _clock(now)
    windows = [int(now // period) for _, _, _, period in hits]
    pipe = get_connection().pipeline(transaction=True)
    for (scope, ident, _, period), window in zip(hits, windows, strict=True):
        key = keys.rate_limit(scope, ident, window)
        pipe.incr(key)
        pipe.expire(key, period + 1)
    counts = pipe.execute()[::2]
    return [
        RateLimit(
            allowed=int(count) <= limit,
            limit=limit,
            remaining=max(0, limit - int(count)),
            reset=max(1, int((window + 1) * period - now)),
        )
        for (_, _, limit, period), window, count in zip(hits, windows, counts, strict=True)
    ]


def article_repair(
    *, article_id: int, groups: Iterable[str] = (), now: float | None = None
) -> bool:
    """Make one article satisfy every invariant of SPEC §1 again (check_votes --repair).

    The voter sets are the truth while voting is open, the counts after it closed.
    One MULTI/EXEC under WATCH, retried if a vote lands meanwhile. Returns False if the
    article hash is gone: its index entries and its memberships of `groups` are removed.
    """
    now = _clock(now)
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    conn = get_connection()
    with conn.pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(member, up, down)
                raw = pipe.hgetall(member)
                if not raw:
                    pipe.multi()
                    for key in (keys.SCORE, keys.TIME, keys.GOOD):
                        pipe.zrem(key, member)
                    for name in groups:
                        pipe.srem(keys.group(name), member)
                        pipe.delete(*_group_keys(name)[1:])
                    pipe.delete(up, down)
                    pipe.execute()
                    return False
                posted = float(raw.get(b"time", b"0"))
                closes = posted + conf.window()
                if now < closes:
                    both = pipe.sinter([up, down])
                    votes = pipe.scard(up)
                    downvotes = pipe.scard(down) - len(both)
                else:
                    both = set()
                    votes = int(float(raw.get(b"votes", b"0")))
                    downvotes = int(float(raw.get(b"downvotes", b"0")))
                pipe.multi()
                if both:
                    pipe.srem(down, *both)
                pipe.hset(member, mapping={"votes": votes, "downvotes": downvotes})
                pipe.zadd(keys.SCORE, {member: posted + conf.vote_score() * (votes - downvotes)})
                pipe.zadd(keys.TIME, {member: posted})
                if votes >= conf.good_votes():
                    pipe.zadd(keys.GOOD, {member: posted})
                else:
                    pipe.zrem(keys.GOOD, member)
                # EXPIREAT in the past deletes the key, as the window says it should be.
                pipe.expireat(up, int(-(-closes // 1)))
                pipe.expireat(down, int(-(-closes // 1)))
                pipe.execute()
                return True
            except redis.WatchError:
                continue
    raise Conflict()


def article_groups_set(*, article_id: int, groups: Iterable[str]) -> None:
    """Write the `groups` field from the group sets (check_votes --repair)."""
    member = keys.article(article_id)
    names = ",".join(sorted(set(groups)))
    with get_connection().pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(member)
                if not pipe.exists(member):
                    return
                pipe.multi()
                pipe.hset(member, "groups", names)
                pipe.execute()
                return
            except redis.WatchError:
                continue
    raise Conflict()


def group_register(*, name: str, description: str = "") -> None:
    """Add a group that exists only as a set (made by the book's code) to the registry."""
    get_connection().hsetnx(keys.GROUPS, validation.clean_group_name(name), description)


# --- helpers -----------------------------------------------------------------------


def _clock(now: float | None) -> float:
    return _time.time() if now is None else float(now)


def _day(now: float) -> str:
    return datetime.fromtimestamp(now, tz=UTC).date().isoformat()


def _article_member(article_id: int) -> str:
    try:
        return keys.article(article_id)
    except ValueError:
        raise ArticleNotFound() from None


def _member_key(member: str) -> str:
    """`member` if it names an article hash, else "" (guards data written by others)."""
    try:
        return keys.article(keys.article_id_of(member))
    except ValueError:
        return ""


def _group_keys(name: str) -> tuple[str, str, str]:
    return keys.group(name), keys.group_order(keys.SCORE, name), keys.group_order(keys.TIME, name)


def _idempotency_key(user_id: int, token: str | None) -> str | None:
    if token is None:
        return None
    try:
        return keys.idempotency(user_id, token)
    except ValueError as exc:
        raise InvalidInput("idempotency_key", str(exc)) from None


def _normalized_or_empty(link: str) -> str:
    try:
        return validation.normalize_link(link) if link else ""
    except InvalidInput:
        return ""


def _log(
    actor: str, action: str, target: str, reason: str, now: float | None, **details: object
) -> str:
    """A moderation log entry as JSON, or "" when no staff member acts."""
    if not actor:
        return ""
    entry = {"time": int(_clock(now)), "actor": actor, "action": action, "target": target}
    entry["reason"] = reason
    entry["details"] = details
    return json.dumps(entry, sort_keys=True)


def _decode(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value


# --- branch `reliability`: restoring a logical backup (import_articles) -------------


def store_import_record(*, record: dict[str, object]) -> str:
    """Write one record of `selectors.store_export()` back; returns its type.

    An article is restored in one MULTI/EXEC (all of it or none of it), replacing any
    article with its id. Every key name is formed here from validated ids and group
    names, never taken from the file. Raises InvalidInput for a malformed record.
    """
    kind = record.get("type") if isinstance(record, dict) else None
    try:
        if kind == "header":
            if record.get("version") != selectors.EXPORT_VERSION:
                raise InvalidInput("version", f"Unknown export version {record.get('version')!r}.")
        elif kind == "counter":
            _import_counter(int(record["article_counter"]))  # type: ignore[call-overload]
        elif kind == "group":
            name = validation.clean_group_name(record["name"], "name")
            get_connection().hset(keys.GROUPS, name, str(record.get("description") or ""))
        elif kind == "article":
            _import_article(record)
        elif kind == "link":
            member = _member_key(str(record["member"]))
            if not member:
                raise InvalidInput("member", "A link must map to article:<id>.")
            get_connection().hset(keys.LINKS, _raw(record["link"]), member)
        elif kind == "stats":
            if record["key"] not in (keys.STATS_POSTS, keys.STATS_VOTES):
                raise InvalidInput("key", "Only stats:posts and stats:votes can be restored.")
            days = {str(k): int(v) for k, v in dict(record["days"]).items()}  # type: ignore[call-overload]
            if days:
                get_connection().hset(str(record["key"]), mapping=days)
        elif kind == "modlog":
            entries = [_raw(e) for e in list(record["entries"])]  # type: ignore[call-overload]
            pipe = get_connection().pipeline(transaction=True)
            pipe.delete(keys.MODLOG)
            if entries:
                pipe.rpush(keys.MODLOG, *entries)
            pipe.execute()
        else:
            raise InvalidInput("type", f"Unknown record type {kind!r}.")
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput("record", f"Malformed {kind} record: {exc!r}") from None
    return str(kind)


def _import_counter(value: int) -> None:
    """The id counter never moves back: a new post must not reuse a restored id."""
    with get_connection().pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(keys.ARTICLE_IDS)
                current = int(pipe.get(keys.ARTICLE_IDS) or 0)
                pipe.multi()
                pipe.set(keys.ARTICLE_IDS, max(current, value))
                pipe.execute()
                return
            except redis.WatchError:
                continue
    raise Conflict()


def _import_article(record: dict[str, object]) -> None:
    article_id = record["id"]
    if not isinstance(article_id, int):
        raise ValueError("id must be an integer")
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    fields = {_raw(k): _raw(v) for k, v in dict(record["hash"]).items()}  # type: ignore[call-overload]
    if not fields:
        raise ValueError("an article needs its hash")
    groups = validation.clean_group_names(list(record.get("groups") or []))  # type: ignore[call-overload]
    ups = [_raw(m) for m in _list(record.get("up"))]
    downs = [_raw(m) for m in _list(record.get("down"))]
    poster = fields.get(b"poster", b"").decode("utf-8", "replace")
    conn = get_connection()
    with conn.pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(member)
                # Replacing an article: leave the groups it was in before.
                before = _decode(pipe.hget(member, "groups"))
                old = [g for g in before.split(",") if keys.GROUP_NAME.fullmatch(g)]
                pipe.multi()
                pipe.delete(member, up, down)
                for name in old:
                    pipe.srem(keys.group(name), member)
                pipe.hset(member, mapping=fields)
                for index, key in (("score", keys.SCORE), ("time", keys.TIME)):
                    if record.get(index) is not None:
                        pipe.zadd(key, {member: float(record[index])})  # type: ignore[arg-type]
                if record.get("good") is not None:
                    pipe.zadd(keys.GOOD, {member: float(record["good"])})  # type: ignore[arg-type]
                else:
                    pipe.zrem(keys.GOOD, member)
                submitted = record.get("submitted")
                poster_pk = _user_pk(poster)
                if submitted is not None and poster_pk:
                    pipe.zadd(keys.submitted(poster_pk), {member: float(submitted)})  # type: ignore[arg-type]
                for key, members, expire in (
                    (up, ups, record.get("up_expire_at_ms")),
                    (down, downs, record.get("down_expire_at_ms")),
                ):
                    if members:
                        pipe.sadd(key, *members)
                        if expire is not None:
                            # Past expiry deletes the set, as Redis would have by now.
                            pipe.pexpireat(key, int(expire))  # type: ignore[call-overload]
                for name in set(old) | set(groups):
                    pipe.delete(keys.group_order(keys.SCORE, name))
                    pipe.delete(keys.group_order(keys.TIME, name))
                for name in groups:
                    pipe.sadd(keys.group(name), member)
                pipe.execute()
                return
            except redis.WatchError:
                continue
    raise Conflict()


def _list(value: object) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _user_pk(member: str) -> int | None:
    prefix, _, pk = member.partition(":")
    return int(pk) if prefix == "user" and pk.isascii() and pk.isdigit() and int(pk) > 0 else None


def _raw(value: object) -> bytes:
    """The bytes a str of the export stands for (non-UTF-8 bytes came as surrogates)."""
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value.encode("utf-8", "surrogateescape")
