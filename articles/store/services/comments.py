"""Comment writes: post, vote, edit, delete and staff removal."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.utils.translation import gettext

from articles import conf, validation
from articles.errors import (
    CommentIdempotencyKeyReused,
    CommentNotFound,
    Conflict,
    InvalidInput,
    VotingClosed,
)
from articles.operations import metrics
from articles.operations.replication import replicated
from articles.store import keys, scripts, search, selectors
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import (
    _archived_refused,
    _article_member,
    _decode,
    _given,
    _idempotency_key,
    _log,
    _staff_only,
    comment_content,
)
from articles.types import Actor, Comment, Status, Vote

logger = logging.getLogger("articles.store.services")  # the package's one logger


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
    idem_key = _idempotency_key(keys.comment_idempotency, user_id, idempotency_key)
    conn = get_connection()
    # Whose inbox the comment goes to, read with the id: the script checks it still is.
    pipe = conn.pipeline(transaction=False)
    pipe.incr(keys.COMMENT_IDS)
    pipe.hget(*((parent, "author") if parent else (article, "poster")))
    counter, answered = pipe.execute(raise_on_error=False)
    if isinstance(counter, Exception):
        raise counter
    comment_id = int(counter)
    member = keys.comment(comment_id)
    to = _inbox_owner(answered, user_id)
    inbox = [keys.inbox(to), keys.inbox_state(to)] if to else [member, member]
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
            *inbox,
            keys.LIVE,
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
            " ".join(search.comment_words(text)),
            keys.user(to) if to else "",
            conf.inbox_size(),
            conf.live_events(),
        ],
        client=conn,
    )
    with _archived_refused(article_id=article_id):
        status = raise_for_status(
            result, allow=(Status.ID_TAKEN, Status.COMMENT_GONE, Status.KEY_REUSED)
        )
    if status is Status.KEY_REUSED:
        raise CommentIdempotencyKeyReused(int(result[1]))
    if status is Status.COMMENT_GONE:
        raise InvalidInput("parent", gettext("That comment was deleted, so it takes no replies."))
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
        keys=[
            member,
            keys.comment_voted(comment_id),
            keys.comment_voted_down(comment_id),
            keys.LIVE,
        ],
        args=[
            comment_id,
            keys.user(user_id),
            vote.value,
            _given(now),
            conf.window(),
            conf.live_events(),
        ],
        client=get_connection(),
    )
    with _archived_refused(comment_id=comment_id, refusal=VotingClosed):
        raise_for_status(result)
    outcome = "changed" if int(result[1]) else "repeated"
    metrics.COMMENT_VOTES.labels(direction=vote.label, outcome=outcome).inc()
    fields = dict(zip(result[3::2], result[4::2], strict=True))
    return Comment.from_hash(comment_id, fields, my_vote=Vote(int(result[2])))


@replicated
def comment_edit(*, comment_id: int, actor: Actor, text: str, now: float | None = None) -> Comment:
    """Its author (only: staff remove instead) changes a comment's text within
    ARTICLES_COMMENT_EDIT_SECONDS of posting it; the comment is marked `edited` (the
    time). Raises InvalidInput (text), CommentNotFound, NotAllowed (not the author, or
    deleted), EditWindowClosed."""
    text = validation.clean_comment_text(text)
    member = _comment_member(comment_id)
    words = " ".join(search.comment_words(text))
    result = _as_read(
        comment_id,
        lambda content: scripts.COMMENT_EDIT(
            keys=[member],
            args=[
                keys.user(actor.pk),
                text,
                _given(now),
                conf.comment_edit_seconds(),
                words,
                *content,
            ],
            client=get_connection(),
        ),
    )
    return Comment.from_hash(comment_id, dict(zip(result[1::2], result[2::2], strict=True)))


@replicated
def comment_delete(*, comment_id: int, actor: Actor, now: float | None = None) -> None:
    """Its author (only: staff remove instead) deletes a comment: one with replies stays
    as "[deleted]" (text and author cleared), one without is removed entirely (and so is
    a "[deleted]" parent left with no replies). Raises CommentNotFound, NotAllowed (not
    the author, or already deleted)."""
    member = _comment_member(comment_id)
    _as_read(
        comment_id,
        lambda content: scripts.COMMENT_DELETE(
            keys=[member, keys.COMMENTS, keys.MODLOG],
            args=["author", keys.user(actor.pk), "", "", conf.modlog_length(), *content],
            client=get_connection(retry=False),  # sent once: a repeat would answer "deleted"
        ),
    )


@replicated
def comment_remove(*, comment_id: int, actor: Actor, reason: str, now: float | None = None) -> None:
    """Staff remove a comment, with a reason kept on it and in the moderation log: one
    with replies stays as "[removed]", one without is removed entirely, as comment_delete.
    Raises NotAllowed (not staff, or already removed), CommentNotFound, InvalidInput
    (reason)."""
    _staff_only(actor, gettext("Only staff may remove a comment."))
    member = _comment_member(comment_id)
    reason = validation.clean_reason(reason)
    before = selectors.comment_get(comment_id=comment_id)
    entry = _log(
        actor.name or "staff",
        "comment_remove",
        member,
        reason,
        now,
        article=keys.article(before.article_id),
        author=before.author,
        author_name=before.author_name,
    )
    _as_read(
        comment_id,
        lambda content: scripts.COMMENT_DELETE(
            keys=[member, keys.COMMENTS, keys.MODLOG],
            args=["staff", "", reason, entry, conf.modlog_length(), *content],
            client=get_connection(retry=False),  # sent once: a repeat would log twice
        ),
    )


def _as_read(comment_id: int, call: Callable[[list[str]], list]) -> list:
    """`call` a script that takes a comment out of comment search with the words and seen
    of its text as read (comment_content), again while it answers that the comment changed
    in between; its answer, its errors raised. A RETRY wrote nothing, so it is safe to send
    again a script sent only once otherwise."""
    for _ in range(scripts.ATTEMPTS):
        result = call(comment_content(comment_id))
        with _archived_refused(comment_id=comment_id):
            if raise_for_status(result, allow=(Status.RETRY,)) is not Status.RETRY:
                return result
    raise Conflict()


def _inbox_owner(answered: object, user_id: int) -> int | None:
    """The pk of the user a comment answers (from the poster or parent author field
    read), if there is one to tell and it is not the commenter."""
    if not isinstance(answered, bytes):
        return None  # missing, or not a hash: the script says which
    owner = keys.user_id_or_none(_decode(answered))
    return owner if owner != user_id else None


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
        raise InvalidInput(
            "parent", gettext("A parent is a comment id, a whole number from 1.")
        ) from None
