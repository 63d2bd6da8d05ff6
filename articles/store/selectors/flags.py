"""The staff queue of flagged items, most flagged first, each with its reasons."""

from __future__ import annotations

from collections import Counter

from articles import conf, validation
from articles.store import keys, replicas
from articles.store.selectors._common import _execute
from articles.types import Article, BadArticle, Comment, Flagged, Page


@replicas.reads
def flag_queue(*, page: int | str = 1, per_page: int | None = None) -> Page[Flagged]:
    """A page of the items with flags waiting for staff, most flags first, with the
    reasons given and the item as it is now (None once gone). Two round trips (the page,
    then its items and their flags). Raises InvalidInput (page)."""
    per_page = per_page or conf.per_page()
    number = validation.clean_page(page, conf.max_page())
    start = (number - 1) * per_page
    conn = replicas.connection()
    pipe = conn.pipeline(transaction=False)
    pipe.zcard(keys.FLAGGED)
    pipe.zrevrange(keys.FLAGGED, start, start + per_page - 1, withscores=True)
    count, raw = _execute(pipe)
    listed = [(keys.text(m), int(s)) for m, s in raw if _item(keys.text(m))]
    items: list[Flagged] = []
    if listed:
        pipe = conn.pipeline(transaction=False)
        for member, _ in listed:
            pipe.hgetall(member)
            pipe.hvals(keys.flags(member))
        replies = _execute(pipe)
        for i, (member, flags) in enumerate(listed):
            items.append(_flagged(member, flags, replies[2 * i], replies[2 * i + 1]))
    return Page(items=items, number=number, count=int(count), per_page=per_page)


def _item(member: str) -> tuple[str, int] | None:
    """("article" | "comment", id) of a queue member; None for anything else."""
    if (article_id := keys.article_id_or_none(member)) is not None:
        return "article", article_id
    if (comment_id := keys.comment_id_or_none(member)) is not None:
        return "comment", comment_id
    return None


def _flagged(member: str, flags: int, raw: dict[bytes, bytes], reasons: list[bytes]) -> Flagged:
    kind, item_id = _item(member) or ("", 0)
    article = comment = None
    try:
        if raw and kind == "article":
            article = Article.from_hash(
                item_id, raw, score=None, window=conf.window(), vote_score=conf.vote_score()
            )
        elif raw:
            comment = Comment.from_hash(item_id, raw)
    except BadArticle:
        pass  # shown as gone: staff can still decide its flags
    tally = Counter(keys.text(r) for r in reasons)
    return Flagged(
        member=member,
        kind=kind,
        id=item_id,
        flags=flags,
        reasons=dict(tally.most_common()),
        held=bool(raw.get(b"held")) if raw else False,
        article=article,
        comment=comment,
    )
