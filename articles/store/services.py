"""Writes to the article store. Each multi-key change is one Lua script (see lua/)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import cast

import redis

from articles import conf, validation
from articles.errors import (
    ArticleNotFound,
    ArticlesError,
    CommentIdempotencyKeyReused,
    CommentNotFound,
    Conflict,
    InvalidInput,
    NotAllowed,
    StoreCorrupt,
)
from articles.operations import metrics
from articles.operations.replication import replicated
from articles.store import clock, keys, scripts, search, selectors
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.types import DELETED_NAME, Article, Comment, NewPost, Status, Vote

logger = logging.getLogger(__name__)

# A script that finds its inputs changed since the caller read them answers "retry";
# a few rounds always suffice unless something rewrites the same article in a loop.
_ATTEMPTS = 5
# Scripts sent in one round trip by the *_many services.
_BATCH = 500


@replicated
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
    still open for voting). With `idempotency_key`, a repeat of the same request gets what
    the first one got: the article as it was created, even if it was deleted since;
    the key with a different request raises IdempotencyKeyReused.
    The post time is Redis' clock (see _given); `now` fixes it, for tests and tools.
    """
    title, link, text = validation.clean_post(title, link, text)
    names = validation.clean_group_names(list(groups))
    idem_key = _idempotency_key(user_id, idempotency_key)
    norm = validation.normalize_link(link) if link else ""
    conn = get_connection()
    # The id comes first (the book's INCR). A retried INCR only skips an id; the script
    # itself refuses to overwrite an existing article, so a retried script is harmless.
    article_id = int(conn.incr(keys.ARTICLE_IDS))
    for _ in range(_ATTEMPTS):
        seen = _link_owner(conn, norm)
        result = scripts.POST(
            *_post_call(
                article_id,
                user_id,
                poster_name,
                title,
                link,
                text,
                names,
                norm,
                now,
                seen=seen,
                idem_key=idem_key,
            ),
            client=conn,
        )
        status = raise_for_status(result, allow=(Status.RETRY, Status.ID_TAKEN))
        if status is Status.OK or (status is Status.REPEATED and len(result) > 2):
            if status is Status.OK:
                metrics.POSTS.inc()
            first = article_id if status is Status.OK else int(result[1])
            posted = int(result[2] if status is Status.REPEATED else result[1])
            return Article.new_post(
                article_id=first,
                user_id=user_id,
                poster_name=poster_name,
                title=title,
                link=link,
                text=text,
                groups=tuple(names),
                posted=posted,
                window=conf.window(),
                vote_score=conf.vote_score(),
            )
        if status is Status.REPEATED:  # a key kept before fingerprints: the article now
            return selectors.article_get(article_id=int(result[1]), user_id=user_id)
        if status is Status.ID_TAKEN:
            if _decode(result[1]) == keys.user(user_id):
                # our own request, re-sent after a stall, already ran
                return selectors.article_get(article_id=article_id, user_id=user_id)
            raise Conflict()
    raise Conflict()


def _post_call(
    article_id: int,
    user_id: int,
    poster_name: str,
    title: str,
    link: str,
    text: str,
    names: list[str],
    norm: str,
    now: float | None,
    *,
    seen: str,
    idem_key: str | None,
) -> tuple[list[str], list[str | int | float]]:
    """KEYS and ARGV of post.lua for one article. The search words go in the same script
    as the article: no moment, crash or not, when the article exists unfound or the index
    names an article not yet written."""
    member = keys.article(article_id)
    group_keys = [key for name in names for key in _group_keys(name)]
    words = search.article_words(title, text, link)
    script_keys = [
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
        keys.VOTES,
        *group_keys,
        *map(keys.idx, words),
    ]
    args: list[str | int | float] = [
        member,
        keys.user(user_id),
        title,
        link,
        text,
        poster_name,
        _given(now, whole=True),
        conf.vote_score(),
        conf.window(),
        conf.good_votes(),
        norm,
        conf.idempotency_seconds() if idem_key else 0,
        ",".join(names),
        article_id,
        seen,
        validation.post_fingerprint(title, link, text, names),
        " ".join(words),
    ]
    return script_keys, args


@replicated
def article_post_many(*, posts: Sequence[NewPost]) -> list[int]:
    """Post many articles with article_post's script and checks, in pipelined batches: one
    round trip per batch instead of two per article (load_demo --articles). Returns the new
    ids in order. Raises what article_post raises; links must be new and distinct (a link
    posted twice in one batch raises Conflict)."""
    conn = get_connection()
    last = int(conn.incrby(keys.ARTICLE_IDS, len(posts)))  # one INCR for every id
    ids = list(range(last - len(posts) + 1, last + 1))
    for start in range(0, len(posts), _BATCH):
        pipe = conn.pipeline(transaction=False)
        for article_id, post in zip(
            ids[start : start + _BATCH], posts[start : start + _BATCH], strict=True
        ):
            title, link, text = validation.clean_post(post.title, post.link, post.text)
            names = validation.clean_group_names(list(post.groups))
            norm = validation.normalize_link(link) if link else ""
            call = _post_call(
                article_id,
                post.user_id,
                post.poster_name,
                title,
                link,
                text,
                names,
                norm,
                post.now,
                seen="",
                idem_key=None,
            )
            scripts.POST(*call, client=pipe)
        for reply in pipe.execute():
            raise_for_status(reply)
    metrics.POSTS.inc(len(posts))
    return ids


@replicated
def article_vote_many(*, votes: Sequence[tuple[int, int, Vote, float | None]]) -> int:
    """Record many (article id, user id, direction, now) votes with article_vote's script, in
    pipelined batches. Returns how many changed something. Raises what article_vote raises."""
    conn = get_connection()
    changed = 0
    for start in range(0, len(votes), _BATCH):
        chunk = votes[start : start + _BATCH]
        pipe = conn.pipeline(transaction=False)
        for article_id, user_id, direction, now in chunk:
            scripts.VOTE(*_vote_call(article_id, user_id, direction, now), client=pipe)
        for reply, (_, _, direction, _) in zip(pipe.execute(), chunk, strict=True):
            raise_for_status(reply)
            outcome = "changed" if int(reply[1]) else "repeated"
            metrics.VOTES.labels(direction=direction.name.lower(), outcome=outcome).inc()
            changed += outcome == "changed"
    return changed


def _vote_call(
    article_id: int, user_id: int, direction: Vote, now: float | None
) -> tuple[list[str], list[str | int | float]]:
    """KEYS and ARGV of vote.lua for one vote."""
    member = _article_member(article_id)
    script_keys = [
        member,
        keys.voted(article_id),
        keys.voted_down(article_id),
        keys.SCORE,
        keys.GOOD,
        keys.STATS_VOTES,
        keys.VOTES,
    ]
    args: list[str | int | float] = [
        member,
        keys.user(user_id),
        direction.value,
        _given(now),
        conf.vote_score(),
        conf.window(),
        conf.good_votes(),
    ]
    return script_keys, args


@replicated
def article_vote(
    *, article_id: int, user_id: int, direction: Vote, now: float | None = None
) -> Article:
    """Set user_id's vote to up, down or none; repeating a vote changes nothing.

    Returns the article as it now is. Raises ArticleNotFound, VotingClosed. Whether the
    window is open is decided by Redis' clock (see _given); `now` fixes it for tests.
    """
    result = scripts.VOTE(*_vote_call(article_id, user_id, direction, now), client=get_connection())
    raise_for_status(result)
    outcome = "changed" if int(result[1]) else "repeated"
    metrics.VOTES.labels(direction=direction.name.lower(), outcome=outcome).inc()
    fields = dict(zip(result[3::2], result[4::2], strict=True))
    return Article.from_hash(
        article_id,
        fields,
        score=None,  # time + 432 x net votes, from the hash the script returned
        window=conf.window(),
        vote_score=conf.vote_score(),
        my_vote=Vote(int(result[2])),
    )


# What user_forget renames, per index of a user's items: (index key, "<owner> <name>").
def _user_items(user_id: int) -> list[tuple[str, str]]:
    return [
        (keys.submitted(user_id), "poster poster_name"),
        (keys.user_comments(user_id), "author author_name"),
    ]


@replicated
def user_forget_begin(*, user_id: int, name: str) -> None:
    """Queue a deleted account for user_forget (forget: pk -> name): one small write,
    made in the deletion's transaction, so if Redis cannot take it the account stays,
    and once taken, cleanups_resume finishes whatever stops user_forget half-way."""
    get_connection().hset(keys.FORGET, str(_positive_id(user_id)), name)


@replicated
def user_forget(*, user_id: int, name: str | None = None) -> int:
    """Remove everything in the store that names a deleted account, in bounded steps
    (each one script over at most CLEANUP_BATCH items): its articles and comments are
    attributed to nobody (owner field cleared, shown as DELETED_NAME) and leave
    submitted:<pk> and user_comments:<pk>; its votes on articles and comments still open
    are withdrawn (closed counts are final, and their voter sets are gone); its name and
    user:<pk> leave the moderation log. `name` defaults to the one queued by
    user_forget_begin. Safe to run again. Returns how many items were renamed."""
    conn = get_connection()
    pk = str(_positive_id(user_id))
    if name is None:
        name = _decode(conn.hget(keys.FORGET, pk))
    renamed = 0
    for index, fields in _user_items(user_id):
        left = 1
        while left:
            reply = scripts.USER_FORGET(
                keys=[index],
                args=[keys.user(user_id), DELETED_NAME, fields, CLEANUP_BATCH],
                client=conn,
            )
            raise_for_status(reply)
            renamed, left = renamed + int(reply[1]), int(reply[2])
    _votes_withdraw(conn, keys.user(user_id))
    _modlog_forget(conn, user_id, name)
    conn.hdel(keys.FORGET, pk)
    return renamed


def user_forget_or_leave(*, user_id: int) -> None:
    """user_forget in the deletion's request: a failure after user_forget_begin leaves
    the rest queued for cleanups_resume (check_votes --repair), and the deletion stands."""
    _finish_or_leave(lambda: user_forget(user_id=user_id), f"user {user_id}: traces")


def _finish_or_leave(finish: Callable[[], object], left: str) -> None:
    """Run the bounded steps after a deletion's first, atomic one. The deletion already
    stands for every reader, so a failure here only leaves its rest queued (purge:,
    forget:) for check_votes --repair: logged, never raised."""
    try:
        finish()
    except (redis.RedisError, ArticlesError):
        logger.warning("%s left for check_votes --repair", left)


def user_forget_pending() -> dict[int, str]:
    """The deleted accounts user_forget has still to finish: pk -> name."""
    raw = get_connection().hgetall(keys.FORGET)
    return {int(k): _decode(v) for k, v in raw.items() if _decode(k).isdigit() and int(k) > 0}


@replicated
def user_forget_cancel(*, user_id: int) -> None:
    """Drop a queued account that exists after all (its deletion was rolled back)."""
    get_connection().hdel(keys.FORGET, str(user_id))


def _open_articles(conn: redis.Redis) -> Iterator[list[str]]:
    """The articles whose voting is open, oldest first, CLEANUP_BATCH a call: a score
    cursor over time:, skipping the members of its edge second already given."""
    seconds, micros = conn.time()
    low: float = seconds + micros / 1_000_000 - conf.window()
    seen = 0
    while True:
        page = cast(
            "list[tuple[bytes, float]]",
            conn.zrangebyscore(
                keys.TIME, low, "+inf", start=seen, num=CLEANUP_BATCH, withscores=True
            ),
        )
        if not page:
            return
        yield [_decode(member) for member, _ in page]
        last = page[-1][1]
        same = sum(1 for _, score in page if score == last)
        seen, low = (seen + same if last == low else same), last


def _open_items(conn: redis.Redis) -> Iterator[list[tuple[str, str, str]]]:
    """(item, up set, down set) of every open article, then of its comments, in pages
    of at most CLEANUP_BATCH items, each page read in bounded calls."""
    for members in _open_articles(conn):
        ids = [i for i in map(keys.article_id_or_none, members) if i is not None]
        yield [(keys.article(i), keys.voted(i), keys.voted_down(i)) for i in ids]
        pipe = conn.pipeline(transaction=False)
        for article_id in ids:
            pipe.zcard(keys.article_comments_all(article_id))
        for article_id, count in zip(ids, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(count, redis.ResponseError):
                continue  # not a zset: the audit reports it
            for start in range(0, int(count), CLEANUP_BATCH):
                page = cast(
                    "list[bytes]",
                    conn.zrange(
                        keys.article_comments_all(article_id), start, start + CLEANUP_BATCH - 1
                    ),
                )
                cids = [c for c in (keys.comment_id_or_none(_decode(m)) for m in page) if c]
                yield [
                    (keys.comment(c), keys.comment_voted(c), keys.comment_voted_down(c))
                    for c in cids
                ]


def _votes_withdraw(conn: redis.Redis, user: str) -> int:
    """Withdraw `user`'s votes on open articles and comments: each page's voter sets are
    asked in one pipeline, and the votes found withdrawn in one script."""
    withdrawn = 0
    for items in _open_items(conn):
        pipe = conn.pipeline(transaction=False)
        for _, up, down in items:
            pipe.sismember(up, user)
            pipe.sismember(down, user)
        found = pipe.execute(raise_on_error=False)
        voted = [
            item
            for n, item in enumerate(items)
            if any(r is True or r == 1 for r in found[2 * n : 2 * n + 2])
        ]
        if voted:
            reply = scripts.VOTES_WITHDRAW(
                keys=[keys.SCORE, keys.VOTES, keys.GOOD, *[k for item in voted for k in item]],
                args=[user, conf.vote_score(), conf.good_votes(), conf.window()],
                client=conn,
            )
            raise_for_status(reply)
            withdrawn += int(reply[1])
    return withdrawn


def _modlog_forget(conn: redis.Redis, user_id: int, name: str) -> None:
    """Rewrite the moderation log's mentions of an account (see modlog_forget.lua), a
    bounded range a call. New entries pushed meanwhile move older ones further down, so
    an entry may be read twice (no change then) but never skipped."""
    pairs = [f'"author": {json.dumps(keys.user(user_id))}', '"author": ""']
    if name:
        shown = json.dumps(DELETED_NAME)
        pairs += [f'"actor": {json.dumps(name)}', f'"actor": {shown}']
        pairs += [f'"author_name": {json.dumps(name)}', f'"author_name": {shown}']
    start, length = 0, 1
    while start < length:
        reply = scripts.MODLOG_FORGET(
            keys=[keys.MODLOG], args=[start, CLEANUP_BATCH, *pairs], client=conn
        )
        raise_for_status(reply)
        start, length = start + CLEANUP_BATCH, int(reply[2])


def cleanups_resume() -> int:
    """Finish the article and group deletions left in purge: (a crash or an outage
    between their batches); returns how many. The accounts left in forget: need the
    accounts database, and are finished by people.forget_pending."""
    conn = get_connection()
    done = 0
    for raw in list(conn.sscan_iter(keys.PURGE, count=CLEANUP_BATCH)):
        member = _decode(raw)
        article_id = keys.article_id_or_none(member)
        group = member.removeprefix("group:") if member.startswith("group:") else ""
        if article_id is not None:
            article_purge(article_id=article_id)
        elif group and keys.GROUP_NAME.fullmatch(group):
            group_purge(name=group)
        else:
            conn.srem(keys.PURGE, raw)
            continue
        done += 1
    return done


def _positive_id(user_id: int) -> int:
    return keys.user_id_of(keys.user(user_id))


@replicated
def vote_intent_cast(
    *, nonce: str, ttl: int, article_id: int, user_id: int, direction: Vote
) -> Article | None:
    """Cast a vote a user asked for before logging in, once per intent: the first call
    with `nonce` claims it for `user_id` (SET NX, kept `ttl` seconds) and votes; calls for
    any other user return None. The claimant's own repeat (the client's retry of a SET
    whose reply was lost) votes again, which changes nothing. Raises what article_vote
    raises (the claim stands: the intent was used)."""
    conn, key = get_connection(), keys.vote_intent(nonce)
    if (
        not conn.set(key, user_id, nx=True, ex=max(1, ttl))
        and conn.get(key) != str(user_id).encode()
    ):
        return None
    return article_vote(article_id=article_id, user_id=user_id, direction=direction)


@replicated
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
        client=get_connection(retry=False),  # sent once: a repeat would log twice
    )
    raise_for_status(result)
    return tuple(g for g in _decode(result[1]).split(",") if g)


@replicated
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

    Staff may delete any article, giving a reason (for the public moderation log) when it
    is someone else's; a poster only their own, while voting is open, with no reason.
    Raises ArticleNotFound, NotAllowed, InvalidInput (reason).
    """
    member = _article_member(article_id)
    reason = validation.clean_reason(reason)
    refused = NotAllowed("Only staff, or the poster while voting is open, may delete an article.")
    for _ in range(_ATTEMPTS):
        article = selectors.article_get(article_id=article_id)
        own = article.poster_id is not None and article.poster_id == actor_id
        if not (is_staff or own):
            raise refused
        if is_staff and not own and not reason:
            raise InvalidInput(
                "reason",
                "Give a reason for deleting someone else's article: it is shown in the "
                "public moderation log.",
            )
        poster_id = article.poster_id
        raw_groups = ",".join(article.groups)
        words = _indexed_words(article_id)
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
                keys.VOTES,
                keys.PURGE,
                keys.article_comments_all(article_id),
                keys.article_comments(article_id),
                keys.article_comments_new(article_id),
                *[key for name in article.groups for key in _group_keys(name)],
                *map(keys.idx, words),
            ],
            args=[
                member,
                raw_groups,
                article.link,
                article.poster,
                _normalized_or_empty(article.link),
                entry,
                conf.modlog_length(),
                "" if is_staff else "open",  # the poster: only while voting is open
                _given(now),
                conf.window(),
                " ".join(words),
            ],
            client=get_connection(retry=False),  # sent once: a repeat would answer 404
        )
        status = raise_for_status(result, allow=(Status.RETRY, Status.VOTING_CLOSED))
        if status is Status.OK:
            _finish_or_leave(
                lambda: article_purge(article_id=article_id), f"article {article_id}: comments"
            )
            return
        if status is Status.VOTING_CLOSED:
            raise refused
    raise Conflict()


# Items a cleanup batch handles in one script call (comments of a deleted article,
# items or votes of a deleted account, moderation log entries): 100 comments are ~500
# keys, ~2 ms of Redis on a busy 2-vCPU machine (22 µs a comment), where one script over
# all of an article's comments held Redis for the whole (20,000: ~240 ms, and past the
# client's 1 s timeout on the same busy machine).
CLEANUP_BATCH = 100


def article_purge_step(*, article_id: int, batch: int | None = None) -> int:
    """Delete one batch of a deleted article's comments with all their keys (one script);
    returns how many are left. The article leaves purge: when none are."""
    member = _article_member(article_id)
    reply = scripts.ARTICLE_PURGE(
        keys=[keys.article_comments_all(article_id), keys.COMMENTS, keys.PURGE, member],
        args=[member, batch or CLEANUP_BATCH],
        client=get_connection(),  # each batch is safe to repeat
    )
    raise_for_status(reply)
    return int(reply[1])


def article_purge(*, article_id: int) -> None:
    """Delete all of a deleted article's comments, batch after batch."""
    while article_purge_step(article_id=article_id):
        pass


@replicated
def article_edit(
    *,
    article_id: int,
    title: str | None = None,
    link: str | None = None,
    text: str | None = None,
    actor: str = "",
    reason: str = "",
    actor_id: int | None = None,
    is_staff: bool = True,
    now: float | None = None,
) -> Article:
    """Change an article's title, link and text in one step (None keeps one as it is).

    Staff may edit any article, and the edit goes to the moderation log with `reason`; a
    poster (is_staff=False, actor_id theirs) their own title and text while voting is open,
    unlogged. The search words follow the new title, text and link host; `edited` is set.
    Raises ArticleNotFound, InvalidInput, NotAllowed, DuplicateLink (the new link belongs to
    another article still open for voting: one open article per link, as when posting).
    """
    member = _article_member(article_id)
    title = None if title is None else validation.clean_title(title)
    link = None if link is None else validation.clean_link(link)
    text = None if text is None else validation.clean_text(text)
    reason = validation.clean_reason(reason)
    refused = NotAllowed("Only staff, or the poster while voting is open, may edit an article.")
    conn = get_connection()
    for _ in range(_ATTEMPTS):
        before = selectors.article_get(article_id=article_id)
        if not is_staff:
            if before.poster_id is None or before.poster_id != actor_id:
                raise refused
            if link is not None and link != before.link:
                raise NotAllowed("Only staff may change an article's link.")
        new_title = before.title if title is None else title
        new_link = before.link if link is None else link
        new_text = before.text if text is None else text
        if not new_link and not new_text:
            field = "link" if link is not None else "text"
            raise InvalidInput(field, "Give a link, a text, or both.")
        norm = validation.normalize_link(new_link) if new_link else ""
        seen = _link_owner(conn, norm)
        entry = (
            _log(actor, "edit", member, reason, now, title=new_title, link=new_link)
            if is_staff
            else ""
        )
        was_words = _indexed_words(article_id)
        new_words = search.article_words(new_title, new_text, new_link)
        result = scripts.EDIT(
            keys=[
                member,
                keys.LINKS,
                keys.MODLOG,
                _member_key(seen) or member,
                *map(keys.idx, was_words),
                *map(keys.idx, new_words),
            ],
            args=[
                member,
                new_title,
                new_link,
                before.link,
                _normalized_or_empty(before.link),
                norm,
                entry,
                conf.modlog_length(),
                seen,
                _given(now),
                conf.window(),
                " ".join(was_words),
                " ".join(new_words),
                new_text,
                before.text,
                "" if is_staff else "open",  # the poster: only while voting is open
            ],
            client=get_connection(retry=False),  # sent once: a repeat would log twice
        )
        status = raise_for_status(result, allow=(Status.RETRY, Status.VOTING_CLOSED))
        if status is Status.OK:
            return selectors.article_get(article_id=article_id)
        if status is Status.VOTING_CLOSED:
            raise NotAllowed("Voting on this article has closed, so only staff may edit it.")
    raise Conflict()


@replicated
def group_create(*, name: str, description: str = "", actor: str = "") -> None:
    """Register a new group. Raises InvalidInput, GroupExists."""
    _group_save(name=name, description=description, actor=actor, mode="create")


@replicated
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
        # Sent once: a create sent again answered "group exists" for the group it made.
        client=get_connection(retry=False),
    )
    raise_for_status(result)


@replicated
def group_delete(*, name: str, actor: str = "", reason: str = "") -> None:
    """Delete a group and take it off its articles. The group goes in one small step
    (its page and listings at once), its name off the members' `groups` fields in
    bounded batches after it (group_purge). Raises GroupNotFound."""
    name = validation.clean_group_name(name, "name")
    reason = validation.clean_reason(reason)
    entry = _log(actor, "group_delete", keys.group(name), reason, None)
    for _ in range(_ATTEMPTS):
        result = scripts.GROUP_DELETE(
            keys=[
                keys.GROUPS,
                keys.group(name),
                keys.group_order(keys.SCORE, name),
                keys.group_order(keys.TIME, name),
                keys.MODLOG,
                keys.PURGE,
                keys.group_purge(name),
            ],
            args=[name, entry, conf.modlog_length(), keys.group(name)],
            client=get_connection(retry=False),  # sent once: a repeat would answer 404
        )
        if raise_for_status(result, allow=(Status.RETRY,)) is Status.OK:
            _finish_or_leave(lambda: group_purge(name=name), f"group {name}: fields")
            return
        group_purge(name=name)  # an earlier deletion of this name, left half-way
    raise Conflict()


def group_purge(*, name: str) -> None:
    """Take a deleted group's name off its former members, CLEANUP_BATCH a script call."""
    left = 1
    while left:
        reply = scripts.GROUP_PURGE(
            keys=[keys.group_purge(name), keys.group(name), keys.PURGE],
            args=[name, CLEANUP_BATCH, keys.group(name)],
            client=get_connection(),  # each batch is safe to repeat
        )
        raise_for_status(reply)
        left = int(reply[1])


def article_reindex(*, article_id: int) -> bool:
    """Put one article's search words in step with its title, text and link (for
    articles the book's code wrote, or after the rules of search.py change). Returns
    whether anything changed; a second run changes nothing. Raises ArticleNotFound."""
    member = _article_member(article_id)
    conn = get_connection()
    for _ in range(_ATTEMPTS):
        fields = conn.hmget(member, "words", "title", "text", "link")
        was, title, text, link = (_decode(v) for v in fields)
        was_words = [w for w in was.split() if _word_key(w)]
        new_words = search.article_words(title, text, link)
        result = scripts.REINDEX(
            keys=[member, *map(keys.idx, was_words), *map(keys.idx, new_words)],
            args=[member, " ".join(was_words), " ".join(new_words), title, text, link],
            client=conn,
        )
        if raise_for_status(result, allow=(Status.RETRY,)) is Status.OK:
            return bool(int(result[1]))
    raise Conflict()


def search_reindex_batch(*, article_ids: list[int]) -> tuple[int, int]:
    """article_reindex for many articles in two round trips (one pipeline of reads, one
    of scripts); the few that changed in between are done again one by one. Returns
    (articles whose index changed, articles not found)."""
    conn = get_connection()
    members = [keys.article(article_id) for article_id in article_ids]
    pipe = conn.pipeline(transaction=False)
    for member in members:
        pipe.hmget(member, "words", "title", "text", "link")
    rows = pipe.execute(raise_on_error=False)
    pipe = conn.pipeline(transaction=False)
    sent = []
    for article_id, member, row in zip(article_ids, members, rows, strict=True):
        if isinstance(row, redis.ResponseError) or row == [None] * 4:
            continue  # not a hash (check_votes reports it), or gone
        was, title, text, link = (_decode(v) for v in row)
        was_words = was.split()
        if not all(map(_word_key, was_words)):
            continue  # a `words` no script of ours wrote: check_votes reports it
        new_words = search.article_words(title, text, link)
        scripts.REINDEX(
            keys=[member, *map(keys.idx, was_words), *map(keys.idx, new_words)],
            args=[member, was, " ".join(new_words), title, text, link],
            client=pipe,
        )
        sent.append(article_id)
    changed, missing = 0, len(article_ids) - len(sent)
    for article_id, reply in zip(sent, pipe.execute(raise_on_error=False), strict=True):
        if isinstance(reply, redis.ResponseError):
            raise reply
        status = Status(int(reply[0]))
        if status is Status.OK:
            changed += int(reply[1])
        elif status is Status.RETRY:
            try:
                changed += article_reindex(article_id=article_id)
            except ArticleNotFound:
                missing += 1
        elif status is Status.NOT_FOUND:
            missing += 1
        else:
            raise_for_status(reply)
    return changed, missing


def search_index_rebuild(
    *, batch: int = 500, progress: Callable[[int, int], None] | None = None
) -> tuple[int, int, int]:
    """Bring the whole search index in step (manage.py reindex_search): every article's
    words from its hash, then every entry whose article is gone or lost the word dropped.
    Batches of `batch` articles, each one pipeline of reads and one of small scripts, so
    the site's own requests run between them. Safe to run twice or beside the site: each
    script checks what was read. `progress(done, total)` is called after each batch.
    Returns (articles seen, articles whose index changed, stale entries dropped)."""
    conn = get_connection()
    total = int(conn.zcard(keys.TIME)) if conn.type(keys.TIME) == b"zset" else 0
    seen = changed = 0
    ids: list[int] = []
    for member in conn.scan_iter(match=keys.ARTICLE_SCAN, count=batch):
        ids.extend(selectors._ids([member]))
        if len(ids) >= batch:
            changed += search_reindex_batch(article_ids=ids)[0]
            seen += len(ids)
            ids = []
            if progress:
                progress(seen, max(total, seen))
    if ids:
        changed += search_reindex_batch(article_ids=ids)[0]
        seen += len(ids)
    if progress:
        progress(seen, seen)
    dropped = 0
    for raw_key in conn.scan_iter(match=keys.SEARCH_INDEX_SCAN, count=batch):
        try:
            word = keys.word_of(_decode(raw_key))
        except ValueError:
            continue  # not ours (check_votes reports it)
        if conn.type(raw_key) != b"set":
            continue
        members = [_decode(m) for m in conn.sscan_iter(raw_key, count=batch)]
        for offset in range(0, len(members), batch):
            chunk = [
                (m, i)
                for m in members[offset : offset + batch]
                if (i := keys.article_id_or_none(m))
            ]
            pipe = conn.pipeline(transaction=False)
            for member, _ in chunk:
                pipe.hget(member, "words")
            for (_, article_id), words in zip(
                chunk, pipe.execute(raise_on_error=False), strict=True
            ):
                if isinstance(words, redis.ResponseError):
                    continue  # not a hash: check_votes reports it
                if word not in _decode(words).split():
                    dropped += search_entry_drop(word=word, article_id=article_id)
    return seen, changed, dropped


def search_entry_drop(*, word: str, article_id: int) -> bool:
    """Remove article_id from idx:<word> unless the article (still) has the word.
    Returns whether it was removed."""
    result = scripts.UNINDEX(
        keys=[keys.idx(word), keys.article(article_id)],
        args=[keys.article(article_id), word],
        client=get_connection(),
    )
    raise_for_status(result)
    return bool(int(result[1]))


# --- comments (issue 12) -------------------------------------------------------------


@replicated
def comment_post(
    *,
    article_id: int,
    user_id: int,
    author_name: str,
    text: str,
    parent_id: int | None = None,
    idempotency_key: str | None = None,
    now: float | None = None,
) -> Comment:
    """Comment on an article, or reply to one of its comments (one script call after the
    id's INCR). The comment starts with no votes; the article's `comments` count rises.

    Raises InvalidInput (text), ArticleNotFound, CommentNotFound (no such parent on this
    article), InvalidInput naming `parent` (a deleted parent), CommentTooDeep (deeper than
    ARTICLES_COMMENT_MAX_DEPTH), CommentingClosed (ARTICLES_COMMENT_OPEN_SECONDS after the
    article's post time). With `idempotency_key`, a repeat of the same request returns
    the comment the first one made; the key with a different request raises
    CommentIdempotencyKeyReused (naming the comment)."""
    text = validation.clean_comment_text(text)
    article = _article_member(article_id)
    parent = _parent_member(parent_id)
    idem_key = _comment_idempotency_key(user_id, idempotency_key)
    conn = get_connection()
    comment_id = int(conn.incr(keys.COMMENT_IDS))
    member = keys.comment(comment_id)
    if parent:
        pid = keys.comment_id_of(parent)
        orderings = [keys.replies(pid), keys.replies_new(pid)]
    else:
        orderings = [keys.article_comments(article_id), keys.article_comments_new(article_id)]
    result = scripts.COMMENT_POST(
        keys=[
            article,
            member,
            *orderings,
            parent or member,
            keys.COMMENTS,
            keys.user_comments(user_id),
            keys.article_comments_all(article_id),
            idem_key or member,
        ],
        args=[
            comment_id,
            keys.user(user_id),
            author_name,
            text,
            _given(now, whole=True),
            conf.comment_open_seconds(),
            conf.comment_max_depth(),
            conf.idempotency_seconds() if idem_key else 0,
            validation.comment_fingerprint(article_id, parent_id, text),
        ],
        client=conn,
    )
    status = raise_for_status(
        result, allow=(Status.ID_TAKEN, Status.COMMENT_GONE, Status.KEY_REUSED)
    )
    if status is Status.KEY_REUSED:
        raise CommentIdempotencyKeyReused(int(result[1]))
    if status is Status.COMMENT_GONE:
        raise InvalidInput("parent", "That comment was deleted, so it takes no replies.")
    if status is Status.ID_TAKEN:
        if _decode(result[1]) == keys.user(user_id):
            return selectors.comment_get(comment_id=comment_id, user_id=user_id)
        raise Conflict()
    if status is Status.OK:
        metrics.COMMENTS.inc()
        comment_id, posted, depth = comment_id, float(result[1]), int(result[2])
    else:
        comment_id, posted, depth = int(result[1]), float(result[2]), int(result[3])
    return Comment.new_post(
        comment_id=comment_id,
        article_id=article_id,
        parent_id=parent_id,
        user_id=user_id,
        author_name=author_name,
        text=text,
        posted=posted,
        depth=depth,
    )


@replicated
def comment_vote(*, comment_id: int, user_id: int, vote: Vote, now: float | None = None) -> Comment:
    """Set user_id's vote on a comment to up, down or none (article_vote's semantics: a
    repeat changes nothing), moving it in its parent's best order in the same script.
    Returns the comment as it now is. Raises CommentNotFound, VotingClosed (the
    ARTICLE's window is over), NotAllowed (a deleted or removed comment)."""
    member = _comment_member(comment_id)
    result = scripts.COMMENT_VOTE(
        keys=[member, keys.comment_voted(comment_id), keys.comment_voted_down(comment_id)],
        args=[comment_id, keys.user(user_id), vote.value, _given(now), conf.window()],
        client=get_connection(),
    )
    raise_for_status(result)
    outcome = "changed" if int(result[1]) else "repeated"
    metrics.COMMENT_VOTES.labels(direction=vote.label, outcome=outcome).inc()
    fields = dict(zip(result[3::2], result[4::2], strict=True))
    return Comment.from_hash(comment_id, fields, my_vote=Vote(int(result[2])))


@replicated
def comment_edit(*, comment_id: int, user_id: int, text: str, now: float | None = None) -> Comment:
    """Its author changes a comment's text within ARTICLES_COMMENT_EDIT_SECONDS of posting
    it; the comment is marked `edited` (the time). Raises InvalidInput (text),
    CommentNotFound, NotAllowed (not the author, or deleted), EditWindowClosed."""
    text = validation.clean_comment_text(text)
    member = _comment_member(comment_id)
    result = scripts.COMMENT_EDIT(
        keys=[member],
        args=[keys.user(user_id), text, _given(now), conf.comment_edit_seconds()],
        client=get_connection(),
    )
    raise_for_status(result)
    return Comment.from_hash(comment_id, dict(zip(result[1::2], result[2::2], strict=True)))


@replicated
def comment_delete(*, comment_id: int, user_id: int, now: float | None = None) -> None:
    """Its author deletes a comment: one with replies stays as "[deleted]" (text and
    author cleared), one without is removed entirely (and so is a "[deleted]" parent
    left with no replies). Raises CommentNotFound, NotAllowed (not the author, or
    already deleted)."""
    member = _comment_member(comment_id)
    result = scripts.COMMENT_DELETE(
        keys=[member, keys.COMMENTS, keys.MODLOG],
        args=["author", keys.user(user_id), "", "", conf.modlog_length()],
        client=get_connection(retry=False),  # sent once: a repeat would answer "deleted"
    )
    raise_for_status(result)


@replicated
def comment_remove(*, comment_id: int, actor: str, reason: str, now: float | None = None) -> None:
    """Staff remove a comment, with a reason kept on it and in the moderation log: one
    with replies stays as "[removed]", one without is removed entirely, as comment_delete.
    Raises CommentNotFound, NotAllowed (already removed), InvalidInput (reason)."""
    member = _comment_member(comment_id)
    reason = validation.clean_reason(reason)
    before = selectors.comment_get(comment_id=comment_id)
    entry = _log(
        actor or "staff",
        "comment_remove",
        member,
        reason,
        now,
        article=keys.article(before.article_id),
        author=before.author,
        author_name=before.author_name,
    )
    result = scripts.COMMENT_DELETE(
        keys=[member, keys.COMMENTS, keys.MODLOG],
        args=["staff", "", reason, entry, conf.modlog_length()],
        client=get_connection(retry=False),  # sent once: a repeat would log twice
    )
    raise_for_status(result)


def _comment_member(comment_id: int) -> str:
    try:
        return keys.comment(comment_id)
    except ValueError:
        raise CommentNotFound() from None


def _parent_member(parent_id: int | None) -> str:
    if parent_id is None:
        return ""
    try:
        return keys.comment(parent_id)
    except ValueError:
        raise InvalidInput("parent", "A parent is a comment id, a whole number from 1.") from None


def _comment_idempotency_key(user_id: int, token: str | None) -> str | None:
    if token is None:
        return None
    try:
        return keys.comment_idempotency(user_id, token)
    except ValueError as exc:
        raise InvalidInput("idempotency_key", str(exc)) from None


# --- helpers -----------------------------------------------------------------------


def _indexed_words(article_id: int) -> list[str]:
    """The `words` of an article hash: the idx:<w> sets that hold it. The scripts check
    that it has not changed since."""
    key = keys.article(article_id)
    words = _decode(get_connection().hget(key, "words")).split()
    bad = [w for w in words if not _word_key(w)]
    if bad:
        raise StoreCorrupt(key, f"words holds {bad[0]!r}, not a search word")
    return words


def _word_key(word: str) -> str:
    try:
        return keys.idx(word)
    except ValueError:
        return ""


def _link_owner(conn: redis.Redis, norm: str) -> str:
    """The member `links:` maps a normalised link to ("" for none)."""
    if not norm:
        return ""
    try:
        return _decode(conn.hget(keys.LINKS, norm))
    except redis.ResponseError as exc:
        if "WRONGTYPE" not in str(exc):
            raise
        raise StoreCorrupt(keys.LINKS, "is not a hash") from None


def _given(now: float | None, *, whole: bool = False) -> int | float | str:
    """A script's `now` argument. "" lets the script read Redis' own clock (TIME), the one
    the voter sets expire by, so the web server's clock never decides the voting window;
    tests and tools pass a time to fix it."""
    if now is None:
        return ""
    return int(now) if whole else float(now)


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
    entry = {"time": int(clock.now(now)), "actor": actor, "action": action, "target": target}
    entry["reason"] = reason
    entry["details"] = details
    return json.dumps(entry, sort_keys=True)


def _decode(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value
