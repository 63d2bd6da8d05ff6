"""Article writes after the post (posting.py): edit, delete and the bounded purge after it,
an article's groups. Who may do each is decided here, from the Actor."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from django.utils.translation import gettext

from articles import conf, validation
from articles.errors import (
    ArticleArchived,
    Conflict,
    InvalidInput,
    NotAllowed,
)
from articles.operations.replication import replicated
from articles.store import keys, scripts, search, selectors
from articles.store.archive import archived_delete
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import (
    COMMENT_PURGE_BATCH,
    _archived_refused,
    _article_member,
    _decode,
    _domain_key,
    _finish_or_leave,
    _given,
    _indexed_content,
    _link_owner,
    _log,
    _staff_only,
    comments_as_read,
)
from articles.types import Actor, Article, Status


def _owner_or_staff(actor: Actor, article: Article, refused: NotAllowed) -> bool:
    """The rule of an article's edit and delete: staff, or its poster (whom the scripts
    also hold to the voting window). Raises `refused` for anyone else; answers whether
    the actor is its poster."""
    own = article.poster_id is not None and article.poster_id == actor.pk
    if not (actor.is_staff or own):
        raise refused
    return own


logger = logging.getLogger("articles.store.services")  # the package's one logger


@replicated
def article_groups_update(
    *,
    article_id: int,
    actor: Actor,
    add: Iterable[str] = (),
    remove: Iterable[str] = (),
    reason: str = "",
    now: float | None = None,
) -> tuple[str, ...]:
    """Staff add the article to `add` and remove it from `remove` in one step (the book's
    add_remove_groups); returns its groups. Raises NotAllowed, ArticleNotFound,
    GroupNotFound."""
    _staff_only(actor, gettext("Only staff may move an article between groups."))
    member = _article_member(article_id)
    added = validation.clean_group_names(list(add), "add")
    removed = validation.clean_group_names(list(remove), "remove")
    if set(added) & set(removed):
        raise InvalidInput("remove", gettext("A group cannot be both added and removed."))
    if not added and not removed:
        return selectors.article_get(article_id=article_id).groups
    entry = _log(actor.name, "groups", member, reason, now, add=added, remove=removed)
    result = scripts.GROUPS_UPDATE(
        keys=[
            member,
            keys.GROUPS,
            keys.MODLOG,
            keys.SCORE,
            keys.TIME,
            *[key for name in added + removed for key in keys.group_keys(name)],
        ],
        args=[member, len(added), len(removed), entry, conf.modlog_length(), *added, *removed],
        client=get_connection(retry=False),  # sent once: a repeat would log twice
    )
    with _archived_refused(article_id=article_id):  # archived: read-only (409)
        raise_for_status(result)
    return tuple(g for g in _decode(result[1]).split(",") if g)


@replicated
def article_delete(
    *,
    article_id: int,
    actor: Actor,
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
    refused = NotAllowed(
        gettext("Only staff, or the poster while voting is open, may delete an article.")
    )
    is_staff = actor.is_staff
    for _ in range(scripts.ATTEMPTS):
        article = selectors.article_get(article_id=article_id)
        own = _owner_or_staff(actor, article, refused)
        if is_staff and not own and not reason:
            raise InvalidInput(
                "reason",
                gettext(
                    "Give a reason for deleting someone else's article: it is shown in the "
                    "public moderation log."
                ),
            )
        poster_id = article.poster_id
        raw_groups = ",".join(article.groups)
        words, content = ([], [""] * 3) if article.archived else _indexed_content(article_id)
        links_key, link_field = keys.link_keys(validation.indexed_link(article.link), member)
        entry = (
            _log(actor.name, "delete", member, reason, now, title=article.title) if is_staff else ""
        )
        result = scripts.DELETE(
            keys=[
                member,
                keys.voted(article_id),
                keys.voted_down(article_id),
                keys.SCORE,
                keys.TIME,
                keys.GOOD,
                keys.submitted(poster_id) if poster_id else member,
                links_key,
                keys.MODLOG,
                keys.VOTES,
                keys.PURGE,
                keys.article_comments_all(article_id),
                keys.article_comments(article_id),
                keys.article_comments_new(article_id),
                *keys.PERIOD_KEYS,
                keys.REMOVED,
                _domain_key(article.link) or member,
                *[key for name in article.groups for key in keys.group_keys(name)],
                *map(keys.postings, words),
            ],
            args=[
                member,
                raw_groups,
                article.link,
                article.poster,
                link_field,
                entry,
                conf.modlog_length(),
                "" if is_staff else "open",  # the poster: only while voting is open
                _given(now),
                conf.window(),
                " ".join(words),
                _removal(entry),
                "archived" if article.archived else "",
                *content,
            ],
            client=get_connection(retry=False),  # sent once: a repeat would answer 404
        )
        status = raise_for_status(result, allow=(Status.RETRY, Status.VOTING_CLOSED))
        if status is Status.OK and article.archived:
            archived_delete(article_id)  # its rows, once nothing lists it
            return
        if status is Status.OK:
            _finish_or_leave(
                lambda: article_purge(article_id=article_id), f"article {article_id}: comments"
            )
            return
        if status is Status.VOTING_CLOSED:
            raise refused
    raise Conflict()


def _removal(entry: str) -> str:
    """What removed: keeps of a staff deletion (its log entry's time and reason, naming no
    account, so a deleted staff account leaves nothing there): an old link's 410."""
    if not entry:
        return ""
    logged = json.loads(entry)
    return json.dumps({"time": logged["time"], "reason": logged["reason"]}, sort_keys=True)


def article_purge_step(*, article_id: int, batch: int | None = None) -> int:
    """Delete one batch of a deleted article's comments with all their keys (one script);
    returns how many are left. The article leaves purge: when none are."""
    member, listed = _article_member(article_id), keys.article_comments_all(article_id)
    batch = batch or COMMENT_PURGE_BATCH
    conn = get_connection()  # each batch is safe to repeat
    reply = scripts.ARTICLE_PURGE(
        keys=[listed, keys.COMMENTS, keys.PURGE, member],
        args=[member, batch, *comments_as_read(conn, listed, batch)],
        client=conn,
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
    actor: Actor,
    title: str | None = None,
    link: str | None = None,
    text: str | None = None,
    reason: str = "",
    now: float | None = None,
) -> Article:
    """Change an article's title, link and text in one step (None keeps one as it is).

    Staff may edit any article, and the edit goes to the moderation log with `reason`; a
    poster (an actor not staff: Actor.as_poster() on the poster's own page) their own
    title and text while voting is open, unlogged. The search words follow the new title,
    text and link host; `edited` is set.
    Raises ArticleNotFound, InvalidInput, NotAllowed, DuplicateLink (the new link belongs to
    another article still open for voting: one open article per link, as when posting).
    """
    member = _article_member(article_id)
    title = None if title is None else validation.clean_title(title)
    link = None if link is None else validation.clean_link(link)
    text = None if text is None else validation.clean_text(text)
    reason = validation.clean_reason(reason)
    refused = NotAllowed(
        gettext("Only staff, or the poster while voting is open, may edit an article.")
    )
    conn = get_connection()
    is_staff = actor.is_staff
    for _ in range(scripts.ATTEMPTS):
        before = selectors.article_get(article_id=article_id)
        _owner_or_staff(actor, before, refused)
        if before.archived:
            raise ArticleArchived()
        if not is_staff and link is not None and link != before.link:
            raise NotAllowed(gettext("Only staff may change an article's link."))
        new_title = before.title if title is None else title
        new_link = before.link if link is None else link
        new_text = before.text if text is None else text
        if not new_link and not new_text:
            field = "link" if link is not None else "text"
            raise InvalidInput(field, gettext("Give a link, a text, or both."))
        norm = validation.normalize_link(new_link) if new_link else ""
        seen = _link_owner(conn, norm)
        entry = (
            _log(actor.name, "edit", member, reason, now, title=new_title, link=new_link)
            if is_staff
            else ""
        )
        was_words, content = _indexed_content(article_id)
        old_links, old_field = keys.link_keys(validation.indexed_link(before.link), member)
        new_links, new_field = keys.link_keys(norm, member)
        new_words = search.article_words(new_title, new_text, new_link)
        result = scripts.EDIT(
            keys=[
                member,
                old_links,
                keys.MODLOG,
                keys.member_key(seen) or member,
                _domain_key(before.link) or member,
                _domain_key(new_link) or member,
                new_links,
                *map(keys.postings, was_words),
                *map(keys.postings, new_words),
            ],
            args=[
                member,
                new_title,
                new_link,
                before.link,
                old_field,
                new_field,
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
                *content,
            ],
            client=get_connection(retry=False),  # sent once: a repeat would log twice
        )
        status = raise_for_status(result, allow=(Status.RETRY, Status.VOTING_CLOSED))
        if status is Status.OK:
            return selectors.article_get(article_id=article_id)
        if status is Status.VOTING_CLOSED:
            raise NotAllowed(
                gettext("Voting on this article has closed, so only staff may edit it.")
            )
    raise Conflict()
