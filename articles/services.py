"""Writes to the article store. Each multi-key change is one Lua script (see lua/)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import redis

from articles import clock, conf, keys, metrics, scripts, selectors, validation
from articles.connection import get_connection
from articles.errors import (
    ArticleNotFound,
    Conflict,
    InvalidInput,
    NotAllowed,
    StoreCorrupt,
)
from articles.replication import replicated
from articles.scripts import raise_for_status
from articles.types import Article, NewPost, Status, Vote, article_score

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
    still open for voting). With `idempotency_key`, a repeat returns the first article.
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
        if status is Status.OK:
            metrics.POSTS.inc()
            posted = int(result[1])
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
                score=article_score(posted, 1, 0, vote_score=conf.vote_score()),
                groups=tuple(names),
                voting_closes_at=posted + conf.window(),
                my_vote=Vote.UP,
            )
        if status is Status.REPEATED:
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
    """KEYS and ARGV of post.lua for one article."""
    member = keys.article(article_id)
    group_keys = [key for name in names for key in _group_keys(name)]
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
        *group_keys,
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

    Staff may delete any article; a poster only their own, while voting is open.
    Raises ArticleNotFound, NotAllowed.
    """
    member = _article_member(article_id)
    reason = validation.clean_reason(reason)
    refused = NotAllowed("Only staff, or the poster while voting is open, may delete an article.")
    for _ in range(_ATTEMPTS):
        article = selectors.article_get(article_id=article_id)
        own = article.poster_id is not None and article.poster_id == actor_id
        if not (is_staff or own):
            raise refused
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
                "" if is_staff else "open",  # the poster: only while voting is open
                _given(now),
                conf.window(),
            ],
            client=get_connection(retry=False),  # sent once: a repeat would answer 404
        )
        status = raise_for_status(result, allow=(Status.RETRY, Status.VOTING_CLOSED))
        if status is Status.OK:
            return
        if status is Status.VOTING_CLOSED:
            raise refused
    raise Conflict()


@replicated
def article_edit(
    *,
    article_id: int,
    title: str,
    link: str,
    actor: str,
    reason: str = "",
    now: float | None = None,
) -> Article:
    """Staff: change an article's title and link.

    Raises ArticleNotFound, InvalidInput, DuplicateLink (the new link belongs to another
    article still open for voting: one open article per link, as when posting).
    """
    member = _article_member(article_id)
    title, link = validation.clean_title(title), validation.clean_link(link)
    reason = validation.clean_reason(reason)
    norm = validation.normalize_link(link) if link else ""
    conn = get_connection()
    for _ in range(_ATTEMPTS):
        before = selectors.article_get(article_id=article_id)
        if not link and not before.text:
            raise InvalidInput("link", "An article without a text needs a link.")
        seen = _link_owner(conn, norm)
        entry = _log(actor, "edit", member, reason, now, title=title, link=link)
        result = scripts.EDIT(
            keys=[member, keys.LINKS, keys.MODLOG, _member_key(seen) or member],
            args=[
                member,
                title,
                link,
                before.link,
                _normalized_or_empty(before.link),
                norm,
                entry,
                conf.modlog_length(),
                seen,
                _given(now),
                conf.window(),
            ],
            client=get_connection(retry=False),  # sent once: a repeat would log twice
        )
        if raise_for_status(result, allow=(Status.RETRY,)) is Status.OK:
            return selectors.article_get(article_id=article_id)
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
            client=get_connection(retry=False),  # sent once: a repeat would answer 404
        )
        if raise_for_status(result, allow=(Status.RETRY,)) is Status.OK:
            return
    raise Conflict()


# --- helpers -----------------------------------------------------------------------


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
