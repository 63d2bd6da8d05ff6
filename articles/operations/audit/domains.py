"""The audit, repair and backfill of the sites' indexes (domain:<d>), both ways: every
entry names an article whose link is on that site, and every article with a link is in
its site's index (at the post time the write gave it: the hash's time is audited
against time:, not again here). The writes keep them (post.lua, edit.lua,
delete.lua); a store written before them, by the book's code or by hand is put right by
check_votes --repair: domain_backfill() first (a bounded script call per batch of
time:, so a store of a million articles prints no million problems), then the repair
of what the audit still finds."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import redis

from articles import validation
from articles.operations.audit.common import Problem, chunks, time_or_none, wrong_type
from articles.operations.audit.confirm import Judge
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status

DOMAIN_KINDS = frozenset({"domain_stale", "domain_unindexed"})
FILL_BATCH = 200  # articles a domain_fix.lua call looks at (two commands each)

# What the audit read of an article: its site ("" for none) and post time; None for an
# article key that is not a hash (reported as wrong_type: what indexes it is left alone).
Seen = dict[int, tuple[str, float | None] | None]
_NONE = ("", None)  # an article with no hash: on no site


def domain_audit(conn: redis.Redis, ordered: list[int], batch: int) -> list[Problem]:
    """The problems of every domain:<d>, for the articles `ordered`."""
    seen = _sites(conn, ordered, batch)
    problems: list[Problem] = []
    wrong: set[str] = set()
    for raw_key in conn.scan_iter(match=keys.DOMAIN_SCAN, count=1000):
        key = keys.text(raw_key)
        kind = keys.text(conn.type(key))
        if kind not in ("zset", "none"):
            problems.append(wrong_type(key, kind, "zset"))
            wrong.add(key)
            continue
        for raw, score in conn.zscan_iter(key, count=1000):
            article_id = keys.article_id_or_none(keys.text(raw))
            site = seen.get(article_id, _NONE) if article_id else _NONE  # not seen: no hash
            found = _judge(key, site, score)
            if found:
                problems.append(Problem(found, _detail(found, key), article_id, entry=key))
    return problems + _missing(conn, seen, batch, wrong)


def _sites(conn: redis.Redis, ordered: list[int], batch: int) -> Seen:
    seen: Seen = {}
    for chunk in chunks(ordered, batch):
        pipe = conn.pipeline(transaction=False)
        for article_id in chunk:
            pipe.hmget(keys.article(article_id), *_FIELDS)
        for article_id, fields in zip(chunk, pipe.execute(raise_on_error=False), strict=True):
            seen[article_id] = _site(fields)
    return seen


# What names an article's site index: its link, and whether it is held for its flags
# (flag.lua takes a held article out of it, as out of every ranking).
_FIELDS = ("link", "time", "held")


def _site(fields: Any) -> tuple[str, float | None] | None:
    """(site, post time) of an article's HMGET _FIELDS; ("", None) for no hash, and no
    site for a held article (in no index)."""
    if isinstance(fields, redis.ResponseError):
        return None
    link, posted, held = fields
    site = "" if held is not None else validation.link_domain(keys.text(link or b""))
    return site, time_or_none(posted)


def _judge(key: str, site: tuple[str, float | None] | None, score: float | None) -> str | None:
    """What is wrong with an article's entry in `key` (score None: it has none)."""
    if site is None:
        return None  # not a hash: left as it is
    name, _ = site
    here = bool(name) and keys.domain(name) == key
    if score is not None and not here:
        return "domain_stale"
    if here and score is None:
        return "domain_unindexed"
    return None


def _detail(kind: str, key: str) -> str:
    if kind == "domain_stale":
        return f"{key} holds it, but its link is not on that site"
    return f"missing from {key}"


def _missing(conn: redis.Redis, seen: Seen, batch: int, wrong: set[str]) -> list[Problem]:
    """Articles with a link missing from their site's index (one not a zset: left)."""
    linked = [
        (i, keys.domain(s[0]))
        for i, s in sorted(seen.items())
        if s is not None and s[0] and s[1] is not None and keys.domain(s[0]) not in wrong
    ]
    problems: list[Problem] = []
    for chunk in chunks(linked, batch):
        pipe = conn.pipeline(transaction=False)
        for article_id, key in chunk:
            pipe.zscore(key, keys.article(article_id))
        for (article_id, key), score in zip(chunk, pipe.execute(raise_on_error=False), strict=True):
            if score is None:
                detail = _detail("domain_unindexed", key)
                problems.append(Problem("domain_unindexed", detail, article_id, entry=key))
    return problems


def domain_read(pipe: redis.client.Pipeline, key: str, article_id: int) -> Judge:
    """One article's entry in domain:<d> and its link and time (a re-read, see confirm)."""
    pipe.zscore(key, keys.article(article_id))
    pipe.hmget(keys.article(article_id), *_FIELDS)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        score, fields = replies
        if isinstance(score, redis.ResponseError):
            return None, []
        found = _judge(key, _site(fields), score)
        if found is None:
            return None, []
        return None, [Problem(found, _detail(found, key), article_id, entry=key)]

    return judge


def domain_entries_repair(problems: Iterable[Problem]) -> int:
    """Put each reported entry right from its article's link (domain_fix.lua, which
    acts only while the link is still the one read). Returns the entries changed."""
    pairs = [
        (p.article_id, p.entry)
        for p in problems
        if p.kind in DOMAIN_KINDS and p.article_id is not None and p.entry
    ]
    return _fix(get_connection(), pairs)


def domain_backfill(*, batch: int = FILL_BATCH) -> int:
    """Index every article with a link in its site's domain:<d>, walking time: by rank a
    batch at a time (two reads and, for the articles missing, one script call each). Safe
    beside the site and to run again; returns the entries added."""
    conn, added, start = get_connection(), 0, 0
    if keys.text(conn.type(keys.TIME)) != "zset":
        return 0  # none yet, or of the wrong type: the audit reports that
    while True:
        members = cast(list[bytes], conn.zrange(keys.TIME, start, start + batch - 1))
        if not members:
            return added
        ids = keys.article_ids(members)
        pipe = conn.pipeline(transaction=False)
        for article_id in ids:
            pipe.hmget(keys.article(article_id), *_FIELDS)
        sites = [_site(f) for f in pipe.execute(raise_on_error=False)]
        pairs = [(i, keys.domain(s[0])) for i, s in zip(ids, sites, strict=True) if s and s[0]]
        # Only those not indexed yet go to the script: on a whole index (every repair
        # after the first) a batch is two reads and no write.
        pipe = conn.pipeline(transaction=False)
        for article_id, key in pairs:
            pipe.zscore(key, keys.article(article_id))
        held = pipe.execute(raise_on_error=False)
        pairs = [pair for pair, score in zip(pairs, held, strict=True) if score is None]
        added += _fix(conn, pairs, only_missing=True)
        start += len(members)


def _fix(conn: redis.Redis, pairs: list[tuple[int, str]], *, only_missing: bool = False) -> int:
    """Run domain_fix.lua over (article id, domain key) pairs: each is added to the key
    when its link is on that site, else taken out of it."""
    changed = 0
    for chunk in chunks(pairs, FILL_BATCH):
        pipe = conn.pipeline(transaction=False)
        for article_id, _ in chunk:
            pipe.hmget(keys.article(article_id), "link", "held")
        read = [
            (b"", None) if isinstance(v, redis.ResponseError) else v
            for v in pipe.execute(raise_on_error=False)
        ]
        args: list[str] = []
        names: list[str] = []
        for (article_id, key), (raw, held) in zip(chunk, read, strict=True):
            link = keys.text(raw or b"")
            site = validation.link_domain(link)
            # A held article is in no index (flag.lua): out of it, whatever its link.
            here = bool(site) and keys.domain(site) == key and held is None
            if only_missing and not here:
                continue
            names += [keys.article(article_id), key]
            args += ["add" if here else "drop", link]
        if names:
            reply = scripts.DOMAIN_FIX(keys=names, args=args, client=conn)
            raise_for_status(reply)
            changed += int(reply[1])
    return changed
