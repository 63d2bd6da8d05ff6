"""Article writes: post, edit, delete and the bounded purge after it, groups of an article."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from articles import conf, validation
from articles.errors import (
    Conflict,
    InvalidInput,
    NotAllowed,
)
from articles.operations import metrics
from articles.operations.replication import replicated
from articles.store import keys, scripts, search, selectors
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import (
    _ATTEMPTS,
    _BATCH,
    CLEANUP_BATCH,
    _article_member,
    _decode,
    _finish_or_leave,
    _given,
    _group_keys,
    _idempotency_key,
    _indexed_words,
    _link_owner,
    _log,
    _member_key,
    _normalized_or_empty,
)
from articles.types import Article, NewPost, Status

logger = logging.getLogger(__package__)


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
        *keys.PERIOD_KEYS,
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
                *keys.PERIOD_KEYS,
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
