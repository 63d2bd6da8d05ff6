"""Flags on articles and comments, and the staff's decision on them.

A flag is one step (flag.lua): one per user per item, and the one that reaches
ARTICLES_FLAG_THRESHOLD holds the item (out of the listings, or folded in its thread)
until staff decide. Staff resolve (the item goes, through the staff removal) or dismiss
(a held article is ranked again); either goes to the moderation log (flag_decide.lua).
Flags never count as votes: no voter set, count or score is touched.
"""

from __future__ import annotations

from django.utils.translation import gettext

from articles import conf, validation
from articles.errors import (
    AlreadyFlagged,
    ArticleNotFound,
    CommentNotFound,
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFlagged,
)
from articles.operations.replication import replicated
from articles.store import keys, scripts, selectors
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import _archived_refused, _given, _log, _staff_only
from articles.store.services.articles import article_delete
from articles.store.services.comments import comment_remove
from articles.types import Actor, FlagReason, FlagResult, Status

KINDS = ("article", "comment")


def flag_member(kind: str, item_id: int) -> str:
    """The member naming a flagged item: article:<id> or comment:<id>. Raises
    ArticleNotFound or CommentNotFound for an id no item can have."""
    try:
        return keys.article(item_id) if kind == "article" else keys.comment(item_id)
    except ValueError:
        raise (ArticleNotFound() if kind == "article" else CommentNotFound()) from None


def flag_reason(value: object) -> FlagReason:
    """A flag's reason, one of FlagReason's values; InvalidInput ("reason") for any other."""
    try:
        return FlagReason(str(value).strip()) if isinstance(value, str) else FlagReason("")
    except ValueError:
        raise InvalidInput(
            "reason",
            gettext("A flag's reason is one of: %(reasons)s.")
            % {"reasons": ", ".join(r.value for r in FlagReason)},
        ) from None


def _ranking_keys(member: str, groups: tuple[str, ...], link: str) -> list[str]:
    """The rankings a held article leaves and a dismissed one comes back to (flag.lua):
    its site's index among them (`member` in its place for none)."""
    site = validation.link_domain(link)
    return [
        keys.SCORE,
        keys.TIME,
        keys.GOOD,
        keys.VOTES,
        *keys.PERIOD_KEYS,
        keys.domain(site) if site else member,
        *[key for name in groups for key in keys.group_keys(name)],
    ]


def _article_place(member: str) -> tuple[tuple[str, ...], str]:
    """An article's groups and link, which name the rankings it is in."""
    article = selectors.article_get(article_id=keys.article_id_of(member))
    return article.groups, article.link


@replicated
def item_flag(
    *, kind: str, item_id: int, actor: Actor, reason: str, now: float | None = None
) -> FlagResult:
    """`actor` flags an article or a comment for `reason`: one flag per user per item.
    Raises InvalidInput (reason), ArticleNotFound, CommentNotFound, NotAllowed (a deleted
    or removed comment), AlreadyFlagged."""
    member = flag_member(kind, item_id)
    why = flag_reason(reason)
    user = keys.user(actor.pk)
    for _ in range(scripts.ATTEMPTS):
        groups: tuple[str, ...] = ()
        link = ""
        script_keys = [member, keys.flags(member), keys.FLAGGED]
        if kind == "article":
            groups, link = _article_place(member)
            script_keys += _ranking_keys(member, groups, link)
        reply = scripts.FLAG(
            keys=script_keys,
            args=[
                member,
                user,
                why.value,
                conf.flag_threshold(),
                _given(now),
                ",".join(groups),
                link,
            ],
            client=get_connection(),  # safe to repeat: a second run answers REPEATED
        )
        article = item_id if kind == "article" else None
        comment = item_id if kind == "comment" else None
        with _archived_refused(article_id=article, comment_id=comment):  # archived: no flags
            if kind == "comment" and int(reply[0]) == Status.NOT_FOUND:
                raise CommentNotFound()
            status = raise_for_status(reply, allow=(Status.RETRY,))
        if status is Status.RETRY:
            continue
        if status is Status.REPEATED:
            raise AlreadyFlagged()
        return FlagResult(member=member, flags=int(reply[1]), held=bool(int(reply[2])))
    raise Conflict()


def _decide(member: str, *, entry: str, restore: bool) -> int:
    """flag_decide.lua on one item; returns how many flags were decided."""
    is_article = keys.article_id_or_none(member) is not None
    for _ in range(scripts.ATTEMPTS):
        groups: tuple[str, ...] = ()
        link = ""
        script_keys = [member, keys.flags(member), keys.FLAGGED, keys.MODLOG]
        if is_article:
            if restore and get_connection().exists(member):
                groups, link = _article_place(member)
            script_keys += _ranking_keys(member, groups, link)
        reply = scripts.FLAG_DECIDE(
            keys=script_keys,
            args=[
                member,
                entry,
                conf.modlog_length(),
                conf.vote_score(),
                conf.good_votes(),
                ",".join(groups),
                "",
                "restore" if restore else "",
                link,
            ],
            client=get_connection(retry=False),  # sent once: a repeat would log twice
        )
        status = raise_for_status(reply, allow=(Status.RETRY, Status.NOT_FOUND))
        if status is Status.NOT_FOUND:
            raise NotFlagged()
        if status is Status.OK:
            return int(reply[1])
    raise Conflict()


def _pending(member: str) -> int:
    """The item's flags waiting for staff; NotFlagged when none are."""
    count = get_connection().zscore(keys.FLAGGED, member)
    if count is None:
        raise NotFlagged()
    return int(count)


@replicated
def flag_dismiss(
    *, kind: str, item_id: int, actor: Actor, reason: str = "", now: float | None = None
) -> int:
    """Staff find nothing wrong: the item's flags go, a held article is ranked again (a
    held comment unfolded), and the moderation log says so. Returns the flags dismissed.
    Raises NotAllowed (not staff), NotFlagged, InvalidInput (reason)."""
    _staff_only(actor, gettext("Only staff may decide flags."))
    member = flag_member(kind, item_id)
    reason = validation.clean_reason(reason)
    flags = _pending(member)
    entry = _log(actor.name or "staff", "flag_dismiss", member, reason, now, flags=flags)
    return _decide(member, entry=entry, restore=True)


@replicated
def flag_resolve(
    *, kind: str, item_id: int, actor: Actor, reason: str, now: float | None = None
) -> int:
    """Staff agree with the flags: the item is removed by the staff removal (an article
    deleted, a comment removed, each logged with `reason`), then its flags go, logged as
    resolved. Returns the flags resolved. Raises NotAllowed (not staff), NotFlagged,
    InvalidInput (reason: required, as for any staff removal)."""
    _staff_only(actor, gettext("Only staff may decide flags."))
    member = flag_member(kind, item_id)
    reason = validation.clean_reason(reason)
    if not reason:
        raise InvalidInput(
            "reason", gettext("Give a reason: it is shown in the public moderation log.")
        )
    flags = _pending(member)
    try:
        if kind == "article":
            article_delete(article_id=item_id, actor=actor, reason=reason, now=now)
        else:
            comment_remove(comment_id=item_id, actor=actor, reason=reason, now=now)
    except (ArticleNotFound, CommentNotFound):
        pass  # gone already (its poster or author deleted it): the flags are still decided
    except NotAllowed:
        if kind == "article":
            raise
        # a comment deleted by its author or removed already: the flags are still decided
    entry = _log(actor.name or "staff", "flag_resolve", member, reason, now, flags=flags)
    return _decide(member, entry=entry, restore=False)
