"""The invariant audit of the store (check_votes) and the repairs of --repair.

Reads in batches with SCAN, never KEYS; each repair is one MULTI/EXEC under WATCH.
Bad data never stops it: a key of the wrong type is reported ("wrong_type") and neither
read further nor written; a count or time that is not one is reported, and a repair
mends it only from what is still known elsewhere (the voter sets, the time: index).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass
from typing import Any, Literal, cast

import redis
from redis.typing import EncodableT, FieldT

from articles import conf, validation
from articles.errors import ArticleNotFound, Conflict, InvalidInput, StoreCorrupt
from articles.store import keys, scripts, search, services
from articles.store.connection import get_connection
from articles.store.selectors import _ids, _s
from articles.store.services import _ATTEMPTS, _group_keys
from articles.types import Article, Status, article_score, comment_best, valid_time


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    detail: str
    article_id: int | None = None
    group: str | None = None
    entry: str | None = None  # the index entry at fault: a normalised link, submitted:<pk>
    member: str | None = None  # the comment:<id> at fault in `entry` (comment indexes)


# The store-wide keys and the type each must hold. One of another type is reported, not
# read further, and no repair writes to it (a person decides what it should hold).
INDEX_TYPES = {
    keys.SCORE: "zset",
    keys.TIME: "zset",
    keys.GOOD: "zset",
    keys.VOTES: "zset",
    keys.GROUPS: "hash",
    keys.LINKS: "hash",
}
# Problems no repair can mend from what the store still knows: reported and left alone.
REPORT_ONLY_KINDS = frozenset({"wrong_type", "bad_group_name", "comment_bad"})


def invariant_audit(
    *,
    now: float | None = None,
    batch: int = 500,
    progress: Callable[[int, int], None] | None = None,
) -> list[Problem]:
    """Every broken invariant of SPEC §1, plus voter sets without their expiry, indexes
    that disagree with the article hashes, keys of the wrong type and values that are not
    counts or times. Reads only; works on book data too; never stops at bad data.
    The window is judged by Redis' clock, as the scripts judge it (`now` fixes it).
    `progress(done, total)` is called after each batch of articles (check_votes' bar)."""
    conn = get_connection()
    fixed, now = now, _redis_now(conn) if now is None else now
    problems, broken = _index_types(conn)
    ids = _indexed_article_ids(conn, broken)
    registry = set() if keys.GROUPS in broken else {_s(k) for k in conn.hkeys(keys.GROUPS)}
    problems += [
        Problem(
            "bad_group_name", f"groups: registers {name!r}, not a group name", entry=keys.GROUPS
        )
        for name in sorted(registry)
        if not keys.GROUP_NAME.fullmatch(name)
    ]
    memberships, names, bad, wrong = _scan_groups(conn)
    problems += [Problem("bad_group_name", f"group key {key!r}") for key in bad]
    problems += [_wrong_type(key, kind, "set") for key, kind in wrong]
    if keys.GROUPS not in broken:
        problems += [
            Problem("unregistered_group", f"group {name} has no registry entry", group=name)
            for name in sorted(names - registry)
        ]
    ids.update(memberships)
    ordered = sorted(ids)
    for offset in range(0, len(ordered), batch):
        chunk = ordered[offset : offset + batch]
        problems.extend(_audit_chunk(conn, chunk, memberships, now, broken))
        if progress is not None:
            progress(offset + len(chunk), len(ordered))
    problems.extend(_audit_link_and_poster_indexes(conn, ordered, now, batch, broken))
    problems.extend(search_index_audit(conn, ordered, batch))
    problems = _confirmed(
        conn,
        problems,
        fixed,
        unit_of=_found_unit,
        start=lambda unit: frozenset(memberships.get(unit[1], ())) if unit[0] == "article" else "",
        read=lambda pipe, unit, guess: _found_read(pipe, unit, guess, broken),
    )
    problems.extend(comment_audit(conn, now=fixed, batch=batch))
    return problems


def _wrong_type(key: str, kind: str, expected: str, article_id: int | None = None) -> Problem:
    return Problem("wrong_type", f"{key} is a {kind}, not a {expected}", article_id, entry=key)


def _index_types(conn: redis.Redis) -> tuple[list[Problem], set[str]]:
    """The store-wide keys of the wrong type: reported, and skipped by what follows."""
    pipe = conn.pipeline(transaction=False)
    for key in INDEX_TYPES:
        pipe.type(key)
    problems, broken = [], set()
    for (key, expected), kind in zip(INDEX_TYPES.items(), pipe.execute(), strict=True):
        if _s(kind) not in ("none", expected):
            problems.append(_wrong_type(key, _s(kind), expected))
            broken.add(key)
    return problems, broken


def _indexed_article_ids(conn: redis.Redis, broken: set[str] = frozenset()) -> set[int]:  # type: ignore[assignment]
    """Every article id with a hash or an entry in score:, time:, good: or votes: (SCAN,
    no KEYS)."""
    ids = set(_ids(conn.scan_iter(match=keys.ARTICLE_SCAN, count=1000)))
    for key in (keys.SCORE, keys.TIME, keys.GOOD, keys.VOTES):
        if key not in broken:
            ids.update(_ids(m for m, _ in conn.zscan_iter(key, count=1000)))
    return ids


def group_memberships() -> dict[int, set[str]]:
    """Article id -> the groups whose sets hold it, read from every group:* set."""
    return _scan_groups(get_connection())[0]


def _scan_groups(
    conn: redis.Redis,
) -> tuple[dict[int, set[str]], set[str], list[str], list[tuple[str, str]]]:
    """Memberships, the valid names, the keys with a bad name, and (key, type) of the
    group keys that are not sets."""
    memberships: dict[int, set[str]] = defaultdict(set)
    names: set[str] = set()
    bad: list[str] = []
    wrong: list[tuple[str, str]] = []
    for key in conn.scan_iter(match=keys.GROUP_SCAN, count=1000):
        name = _s(key).removeprefix("group:")
        if not keys.GROUP_NAME.fullmatch(name):
            bad.append(_s(key))
            continue
        kind = _s(conn.type(key))
        if kind != "set":
            if kind != "none":  # "none": deleted since the SCAN saw it
                wrong.append((_s(key), kind))
            continue
        names.add(name)
        for article_id in _ids(conn.sscan_iter(key, count=1000)):
            memberships[article_id].add(name)
    return memberships, names, bad, wrong


# The reads of one article, in the order _article_problems takes their replies.
_ARTICLE_READS = 13


def _article_reads(pipe: redis.client.Pipeline, article_id: int) -> None:
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    pipe.type(member)
    pipe.type(up)
    pipe.type(down)
    pipe.hgetall(member)
    pipe.zscore(keys.SCORE, member)
    pipe.zscore(keys.TIME, member)
    pipe.zscore(keys.GOOD, member)
    pipe.zscore(keys.VOTES, member)
    pipe.scard(up)
    pipe.scard(down)
    pipe.sinter([up, down])
    pipe.ttl(up)
    pipe.ttl(down)


def _audit_chunk(
    conn: redis.Redis,
    chunk: list[int],
    memberships: dict[int, set[str]],
    now: float,
    broken: set[str],
) -> list[Problem]:
    pipe = conn.pipeline(transaction=False)
    for article_id in chunk:
        _article_reads(pipe, article_id)
    # raise_on_error=False: a reply refused for the wrong type is reported below, and the
    # audit goes on with the next article.
    replies = pipe.execute(raise_on_error=False)
    problems: list[Problem] = []
    for i, article_id in enumerate(chunk):
        found = replies[i * _ARTICLE_READS : (i + 1) * _ARTICLE_READS]
        in_sets = memberships.get(article_id, set())
        problems += _article_problems(article_id, found, in_sets, now, broken)
    return problems


def _article_problems(
    article_id: int, replies: list, in_sets: set[str], now: float, broken: set[str]
) -> list[Problem]:
    """What is wrong with one article, judged from the replies of _article_reads and the
    groups whose sets hold it."""
    problems: list[Problem] = []
    vote_score, window, good = conf.vote_score(), conf.window(), conf.good_votes()
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    types = [_s(t) for t in replies[:3]]
    raw, score, posted_idx, good_idx, net_idx, n_up, n_down, both, ttl_up, ttl_down = replies[3:]
    # A broken index (its reply an error) was reported once, as wrong_type.
    score = None if keys.SCORE in broken else score
    posted_idx = None if keys.TIME in broken else posted_idx
    good_idx = None if keys.GOOD in broken else good_idx
    net_idx = None if keys.VOTES in broken else net_idx

    def report(kind: str, detail: str) -> None:
        problems.append(Problem(kind, detail, article_id))

    expected_types = ((member, "hash"), (up, "set"), (down, "set"))
    wrong = [
        _wrong_type(key, kind, expected, article_id)
        for (key, expected), kind in zip(expected_types, types, strict=True)
        if kind not in ("none", expected)
    ]
    if wrong:
        return wrong
    if not raw:
        # Not indexed nor grouped any more: deleted since its id was listed, not a fault.
        if in_sets or any(i is not None for i in (score, posted_idx, good_idx, net_idx)):
            report("missing_hash", "indexed or grouped, but article hash is gone")
        return problems
    for ttl, key in ((ttl_up, "voted"), (ttl_down, "voted_down")):
        if ttl == -1:
            report("no_expiry", f"{key}:{article_id} has no expiry")
    grouped = _grouped(raw)
    if grouped != in_sets:
        report("groups_field", f"groups field {sorted(grouped)} != sets {sorted(in_sets)}")
    posted = _time_or_none(raw.get(b"time"))
    if posted is None:
        known = posted_idx if posted_idx is not None and valid_time(posted_idx) else None
        report(
            "bad_time",
            f"time is {_shown(raw.get(b'time'))}, not a post time; "
            + (f"time: has {known}" if known is not None else "time: has none usable"),
        )
        return problems
    counts = {name: raw.get(name.encode(), b"0") for name in ("votes", "downvotes")}
    bad_counts = {name: v for name, v in counts.items() if not _WHOLE.fullmatch(_s(v))}
    if bad_counts:
        shown = ", ".join(f"{name} is {_shown(v)}" for name, v in bad_counts.items())
        report("bad_count", f"{shown}, not a whole number")
        return problems
    article = Article.from_hash(article_id, raw, score=None, window=window, vote_score=vote_score)
    expected = article_score(article.time, article.votes, article.downvotes, vote_score=vote_score)
    unindexed = (score is None and keys.SCORE not in broken) or (
        posted_idx is None and keys.TIME not in broken
    )
    if unindexed:
        report("not_indexed", "missing from score: or time:")
    if score is not None and abs(score - expected) > 1e-3:
        report("score", f"score {score} != {expected} from time and votes")
    if posted_idx is not None and abs(posted_idx - article.time) > 1e-3:
        report("time_index", f"time: has {posted_idx}, hash has {article.time}")
    if article.voting_open(now):
        for kind, detail in _voter_faults(article.votes, article.downvotes, n_up, n_down, both):
            report(kind, detail)
    if keys.GOOD not in broken and (article.votes >= good) != (good_idx is not None):
        report(
            "good",
            f"{article.votes} up-votes but good-index membership is {good_idx is not None}",
        )
    net = article.votes - article.downvotes
    if keys.VOTES not in broken and net_idx != net:
        shown = "nothing" if net_idx is None else f"{net_idx:g}"
        report("net_votes", f"votes: has {shown}, the counts say {net}")
    last_vote = _float(raw.get(b"last_vote"))
    if last_vote is not None and last_vote >= article.voting_closes_at:
        late = last_vote - article.voting_closes_at
        report("vote_after_close", f"a vote was counted {late:.3f} s after voting closed")
    return problems


def _grouped(raw: dict[Any, Any]) -> set[str]:
    """The groups an article hash's `groups` field names."""
    return {g for g in _s(raw.get(b"groups", b"")).split(",") if g}


# A count the scripts can HINCRBY (vote.lua's bad_counts()).
_WHOLE = re.compile(r"-?[0-9]{1,18}")


def _time_or_none(value: bytes | str | float | None) -> float | None:
    """A post time the rules can use, or None (missing, not a number, out of range)."""
    number = _float(value)
    return number if number is not None and valid_time(number) else None


def _shown(value: bytes | None) -> str:
    return "missing" if value is None else repr(_s(value))


# --- the duplicate-link index (links:) and the posters' indexes (submitted:<pk>) ----------
# Both ways: every entry names an article that holds it, and every article is in them.
# links: needs only the open articles (post.lua and edit.lua let a closed article's link
# go to a newer post), and submitted:<pk> only articles whose poster is a user:<pk>.
INDEX_KINDS = frozenset(
    {"link_stale", "link_unindexed", "link_shared", "submitted_stale", "unsubmitted"}
)


@dataclass(frozen=True, slots=True)
class _Indexed:
    norm: str  # the normalised link, or "" for none
    poster_id: int | None  # the pk in `poster` = user:<pk>, else None
    open: bool
    readable: bool = True  # False: the article key is not a hash (reported as wrong_type)


def _audit_link_and_poster_indexes(
    conn: redis.Redis, ordered: list[int], now: float, batch: int, broken: set[str]
) -> list[Problem]:
    seen = _indexed_fields(conn, ordered, now, batch)
    problems: list[Problem] = []
    if keys.LINKS in broken:
        return problems + _audit_submitted(conn, seen, batch)
    links = {_s(k): _s(v) for k, v in conn.hscan_iter(keys.LINKS, count=1000)}
    for norm, holder in sorted(links.items()):
        article_id = keys.article_id_or_none(holder)
        found = seen.get(article_id) if article_id is not None else None
        if found is not None and not found.readable:
            continue
        if found is None or found.norm != norm:
            detail = f"links: maps {norm} to {holder}, which does not link there"
            problems.append(Problem("link_stale", detail, article_id, entry=norm))
    for article_id, found in sorted(seen.items()):
        if not (found.open and found.norm) or links.get(found.norm) == keys.article(article_id):
            continue
        other = keys.article_id_or_none(links.get(found.norm, ""))
        rival = seen.get(other) if other is not None else None
        if rival is not None and rival.open and rival.norm == found.norm:
            detail = f"open for voting with the same link as article {other}"
            problems.append(Problem("link_shared", detail, article_id, entry=found.norm))
        else:
            detail = f"links: does not map {found.norm} to it"
            problems.append(Problem("link_unindexed", detail, article_id, entry=found.norm))
    return problems + _audit_submitted(conn, seen, batch)


def _indexed_fields(
    conn: redis.Redis, ordered: list[int], now: float, batch: int
) -> dict[int, _Indexed]:
    """Article id -> its link, poster and window, for every article hash among `ordered`."""
    window = conf.window()
    seen: dict[int, _Indexed] = {}
    for offset in range(0, len(ordered), batch):
        chunk = ordered[offset : offset + batch]
        pipe = conn.pipeline(transaction=False)
        for article_id in chunk:
            pipe.hmget(keys.article(article_id), "link", "poster", "time")
        for article_id, fields in zip(chunk, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(fields, redis.ResponseError):
                # Not a hash (reported as wrong_type): what indexes it is left as it is.
                seen[article_id] = _Indexed(norm="", poster_id=None, open=False, readable=False)
                continue
            if fields == [None, None, None]:
                continue  # no hash: reported as missing_hash
            link, poster, posted = fields
            closes = (_time_or_none(posted) or 0) + window  # a bad time: bad_time says so
            seen[article_id] = _Indexed(
                norm=_normalized(_s(link or b"")),
                poster_id=_user_id_or_none(_s(poster or b"")),
                open=now < closes,
            )
    return seen


def _audit_submitted(conn: redis.Redis, seen: dict[int, _Indexed], batch: int) -> list[Problem]:
    problems: list[Problem] = []
    wrong: set[str] = set()
    for raw_key in conn.scan_iter(match="submitted:*", count=1000):
        key = _s(raw_key)
        kind = _s(conn.type(key))
        if kind not in ("zset", "none"):
            wrong.add(key)
            problems.append(_wrong_type(key, kind, "zset"))
            continue
        user_id = _user_id_or_none("user:" + key.removeprefix("submitted:"))
        for raw, _ in conn.zscan_iter(key, count=1000):
            article_id = keys.article_id_or_none(_s(raw))
            found = seen.get(article_id) if article_id is not None else None
            if found is not None and not found.readable:
                continue
            if found is None or found.poster_id != user_id:
                detail = f"{key} holds {_s(raw)}, which that user did not post"
                problems.append(Problem("submitted_stale", detail, article_id, entry=key))
    posted = [
        (i, f.poster_id)
        for i, f in sorted(seen.items())
        if f.poster_id is not None and keys.submitted(f.poster_id) not in wrong
    ]
    for offset in range(0, len(posted), batch):
        chunk = posted[offset : offset + batch]
        pipe = conn.pipeline(transaction=False)
        for article_id, user_id in chunk:
            pipe.zscore(keys.submitted(user_id or 0), keys.article(article_id))
        replies = pipe.execute(raise_on_error=False)
        for (article_id, user_id), score in zip(chunk, replies, strict=True):
            if score is None:  # (an error: a key made a non-zset since the scan; next run)
                key = keys.submitted(user_id or 0)
                problems.append(
                    Problem("unsubmitted", f"missing from {key}", article_id, entry=key)
                )
    return problems


def _normalized(link: str) -> str:
    """The index key of a link our code could have posted, else "" (another scheme, a bad
    host: written by other code, never indexed, and refused if posted)."""
    try:
        return validation.normalize_link(validation.clean_link(link)) if link else ""
    except InvalidInput:
        return ""


def _user_id_or_none(member: str) -> int | None:
    kind, _, pk = member.partition(":")
    if kind != "user" or not pk.isdigit() or pk.startswith("0"):
        return None
    return int(pk)


def index_entries_repair(problems: Iterable[Problem]) -> None:
    """Make links: and submitted:<pk> agree with the article hashes (check_votes --repair).

    A stale entry goes, a missing one is added from the hash; two open articles sharing a
    link stay reported (a person must pick one). Each change is one MULTI/EXEC under WATCH
    of what it read, so a concurrent write makes it read again.
    """
    repairs = {
        "link_stale": _link_stale_repair,
        "link_unindexed": _link_unindexed_repair,
        "submitted_stale": _submitted_stale_repair,
        "unsubmitted": _unsubmitted_repair,
    }
    with get_connection().pipeline(transaction=True) as pipe:
        for problem in problems:
            repair = repairs.get(problem.kind)
            if repair is None or not problem.entry:
                continue
            for _ in range(_ATTEMPTS):
                try:
                    repair(pipe, problem.entry, problem.article_id)
                    break
                except redis.WatchError:
                    continue
                except redis.ResponseError as exc:
                    if "WRONGTYPE" not in str(exc):
                        raise
                    pipe.reset()  # a key it reads is of the wrong type: left, and reported
                    break
            else:
                raise Conflict()


def _link_of(pipe: redis.client.Pipeline, member: str) -> str:
    pipe.watch(member)
    return _normalized(_s(pipe.hget(member, "link") or b""))


def _link_stale_repair(pipe: redis.client.Pipeline, norm: str, _: int | None) -> None:
    pipe.watch(keys.LINKS)
    holder = _s(pipe.hget(keys.LINKS, norm) or b"")
    article_id = keys.article_id_or_none(holder)
    if not holder or (article_id is not None and _link_of(pipe, holder) == norm):
        pipe.reset()
        return
    pipe.multi()
    pipe.hdel(keys.LINKS, norm)
    pipe.execute()


def _link_unindexed_repair(pipe: redis.client.Pipeline, norm: str, article_id: int | None) -> None:
    member = keys.article(article_id or 0)
    pipe.watch(keys.LINKS)
    if _link_of(pipe, member) != norm or _s(pipe.hget(keys.LINKS, norm) or b"") == member:
        pipe.reset()
        return
    pipe.multi()
    pipe.hset(keys.LINKS, norm, member)
    pipe.execute()


def _submitted_stale_repair(pipe: redis.client.Pipeline, key: str, _: int | None) -> None:
    """Drop from submitted:<pk> every member that is not an article that user posted."""
    poster = "user:" + key.removeprefix("submitted:")
    pipe.watch(key)
    stale = []
    for raw, _score in pipe.zscan_iter(key, count=1000):
        article_id = keys.article_id_or_none(_s(raw))
        if article_id is None or _s(pipe.hget(keys.article(article_id), "poster") or b"") != poster:
            stale.append(raw)
    if not stale:
        pipe.reset()
        return
    pipe.multi()
    pipe.zrem(key, *stale)
    pipe.execute()


def _unsubmitted_repair(pipe: redis.client.Pipeline, key: str, article_id: int | None) -> None:
    member = keys.article(article_id or 0)
    pipe.watch(member)
    poster, raw_time = pipe.hmget(member, "poster", "time")
    posted = _time_or_none(raw_time)  # None: reported as bad_time, mended by article_repair
    if posted is None or "submitted:" + _s(poster or b"").removeprefix("user:") != key:
        pipe.reset()
        return
    pipe.multi()
    pipe.zadd(key, {member: posted})
    pipe.execute()


Repaired = Literal["repaired", "removed", "left"]


def article_repair(
    *, article_id: int, groups: Iterable[str] = (), now: float | None = None
) -> Repaired:
    """Make one article satisfy every invariant of SPEC §1 again (check_votes --repair).

    The voter sets are the truth while voting is open, the counts after it closed; the
    hash's time, else the time: index's (a missing or bad time is taken from there, never
    made 0). One MULTI/EXEC under WATCH, retried if a vote lands meanwhile.

    Returns "removed" if the article hash is gone (its index entries and its memberships
    of `groups` are removed), "left" when the store no longer knows what to write (a key of
    the wrong type, no usable time anywhere, a bad count after the window closed): the
    audit goes on reporting it for a person. A store-wide index of the wrong type is
    left alone too; the rest of the article is still repaired.
    """
    member = keys.article(article_id)
    up, down = keys.voted(article_id), keys.voted_down(article_id)
    conn = get_connection()
    now = _redis_now(conn) if now is None else now
    types = conn.pipeline(transaction=False)
    for key in (member, up, down, *_INDEXES):
        types.type(key)
    member_type, up_type, down_type, *index_types = (_s(t) for t in types.execute())
    if member_type not in ("hash", "none") or {up_type, down_type} - {"set", "none"}:
        return "left"
    writable = {
        key for key, kind in zip(_INDEXES, index_types, strict=True) if kind in ("zset", "none")
    }
    with conn.pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(member, up, down)
                raw = pipe.hgetall(member)
                if not raw:
                    pipe.multi()
                    for key in _INDEXES:
                        if key in writable:
                            pipe.zrem(key, member)
                    for name in groups:
                        pipe.srem(keys.group(name), member)
                        pipe.delete(*_group_keys(name)[1:])
                    pipe.delete(up, down)
                    pipe.execute()
                    return "removed"
                posted = _time_or_none(raw.get(b"time"))
                lost_time = posted is None
                if lost_time and keys.TIME in writable:
                    posted = _time_or_none(pipe.zscore(keys.TIME, member))
                if posted is None:
                    pipe.reset()
                    return "left"  # no usable time anywhere: a person must say when
                closes = posted + conf.window()
                if now < closes:
                    both = pipe.sinter([up, down])
                    votes = pipe.scard(up)
                    downvotes = pipe.scard(down) - len(both)
                else:
                    both = set()
                    counted = [_whole(raw.get(name, b"0")) for name in (b"votes", b"downvotes")]
                    if None in counted:
                        pipe.reset()
                        return "left"  # the voter sets are gone: nothing to count again
                    votes, downvotes = counted  # type: ignore[assignment]
                pipe.multi()
                if both:
                    pipe.srem(down, *both)
                fields: dict[FieldT, EncodableT] = {"votes": votes, "downvotes": downvotes}
                if lost_time:
                    fields["time"] = int(posted) if posted.is_integer() else posted
                pipe.hset(member, mapping=fields)
                score = article_score(posted, votes, downvotes, vote_score=conf.vote_score())
                if keys.SCORE in writable:
                    pipe.zadd(keys.SCORE, {member: score})
                if keys.TIME in writable:
                    pipe.zadd(keys.TIME, {member: posted})
                if keys.VOTES in writable:
                    pipe.zadd(keys.VOTES, {member: votes - downvotes})
                if keys.GOOD in writable:
                    if votes >= conf.good_votes():
                        pipe.zadd(keys.GOOD, {member: posted})
                    else:
                        pipe.zrem(keys.GOOD, member)
                # EXPIREAT in the past deletes the key, as the window says it should be.
                pipe.expireat(up, int(-(-closes // 1)))
                pipe.expireat(down, int(-(-closes // 1)))
                pipe.execute()
                return "repaired"
            except redis.WatchError:
                continue
    raise Conflict()


# The store-wide indexes an article is in (article_repair writes or removes its entries).
_INDEXES = (keys.SCORE, keys.TIME, keys.GOOD, keys.VOTES)


def _whole(value: bytes | str) -> int | None:
    """A count that was whole ("3", or "3.0" written by other code), else None."""
    number = _float(value)
    if number is None or not math.isfinite(number) or not number.is_integer():
        return None
    return int(number)


def _redis_now(conn: redis.Redis) -> float:
    """Redis' own clock: the one the voter sets expire by and the scripts judge by."""
    seconds, micros = conn.time()
    return seconds + micros / 1_000_000


def _float(value: bytes | str | float | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def article_groups_set(*, article_id: int, groups: Iterable[str]) -> None:
    """Write the `groups` field from the group sets (check_votes --repair): of `groups`
    and those the field names, the sets that hold it, read under WATCH of the hash (a
    groups change writes the field too), so a concurrent change is never undone."""
    member = keys.article(article_id)
    with get_connection().pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(member)
                raw = pipe.hgetall(member)
                if not raw:
                    return
                named = sorted(set(groups) | _grouped(raw))
                names = ",".join(g for g in named if pipe.sismember(keys.group(g), member))
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


# --- the search index (idx:<word>) ------------------------------------------------------
# Both ways, as for links: every article is in the sets of the words its title, text and
# link give (and its `words` field says so), and every entry names an article that has
# the word. Articles the book's code wrote have no `words`: reported as unindexed.
SEARCH_KINDS = frozenset({"search_unindexed", "search_stale"})


def search_index_audit(conn: redis.Redis, ordered: list[int], batch: int = 500) -> list[Problem]:
    """Problems of the search index, for the article ids `ordered` (all of them)."""
    problems: list[Problem] = []
    has: dict[int, frozenset[str]] = {}
    unreadable: set[int] = set()  # not a hash (wrong_type): its entries are left alone
    for offset in range(0, len(ordered), batch):
        chunk = ordered[offset : offset + batch]
        pipe = conn.pipeline(transaction=False)
        for article_id in chunk:
            pipe.hmget(keys.article(article_id), "words", "title", "text", "link")
        rows = pipe.execute(raise_on_error=False)
        pipe = conn.pipeline(transaction=False)
        checked = []
        for article_id, row in zip(chunk, rows, strict=True):
            if isinstance(row, redis.ResponseError):
                unreadable.add(article_id)
                continue
            if row == [None] * 4:
                continue  # no hash: its entries are stale
            stored, title, text, link = (_s(v or b"") for v in row)
            expected = search.article_words(title, text, link)
            has[article_id] = frozenset(stored.split())
            if row[0] is None or stored.split() != expected:
                detail = "not indexed" if row[0] is None else "indexed under other words"
                problems.append(Problem("search_unindexed", detail, article_id))
                continue
            for word in expected:
                pipe.sismember(keys.idx(word), keys.article(article_id))
            checked.append((article_id, expected))
        replies = iter(pipe.execute(raise_on_error=False))
        for article_id, expected in checked:
            missing = [w for w in expected if not next(replies)]
            if missing:
                detail = f"missing from idx:{missing[0]}"
                problems.append(Problem("search_unindexed", detail, article_id))
    for raw_key in conn.scan_iter(match=keys.SEARCH_INDEX_SCAN, count=1000):
        key = _s(raw_key)
        try:
            word = keys.word_of(key)
        except ValueError:
            problems.append(Problem("search_stale", f"{key} names no search word", entry=key))
            continue
        kind = _s(conn.type(key))
        if kind != "set":
            if kind != "none":
                problems.append(_wrong_type(key, kind, "set"))
            continue
        for member in conn.sscan_iter(key, count=1000):
            entry_id = keys.article_id_or_none(_s(member))
            if entry_id in unreadable:
                continue
            if entry_id is None or word not in has.get(entry_id, ()):
                detail = f"{key} holds {_s(member)!r}, which does not have the word"
                problems.append(Problem("search_stale", detail, entry_id, entry=key))
    return problems


def search_index_repair(problems: Iterable[Problem]) -> None:
    """Index the unindexed articles from their hashes and drop the stale entries, each
    by one script that checks what it read (check_votes --repair). An entry that names no
    article is left for a person."""
    for problem in problems:
        if problem.kind == "search_unindexed" and problem.article_id is not None:
            try:
                services.article_reindex(article_id=problem.article_id)
            except (ArticleNotFound, StoreCorrupt):
                continue
        elif problem.kind == "search_stale" and problem.article_id and problem.entry:
            try:
                services.search_entry_drop(
                    word=keys.word_of(problem.entry), article_id=problem.article_id
                )
            except StoreCorrupt:
                continue  # a key of the wrong type: reported as such, left for a person


# --- comments (issue 12) ---------------------------------------------------------------
# The comment hashes are the truth; everything else about comments is derived from them
# and audited against them: each parent's two orderings (scores from the counts), the
# article's comments_all:, the site-wide comments: and each user_comments:<pk> (visible
# comments only), the counts `replies` and the article's `comments`, parent links and
# depths, and while the article's window is open the voter sets against the counts.
COMMENT_KINDS = frozenset(
    {
        "comment_orphan",  # its article is gone: repair removes it
        "comment_parent",  # parent missing, of another article, or depth != parent's + 1
        "comment_tombstone",  # a "[deleted]"/"[removed]" comment left with no replies
        "comment_votes",  # counts != voter sets, a user in both, a set without expiry
        "comment_index",  # missing from, or with a wrong score in, a list it belongs in
        "comment_stale",  # in a list its hash does not place it in
        "comment_stale_voters",  # a voter set of a comment that is gone
        "comment_replies",  # `replies` != its replies
        "comment_count",  # the article's `comments` != its visible comments
    }
)
_COMMENT_ZSETS = (
    "comments:*",
    "comments_new:*",
    "comments_all:*",
    "replies:*",
    "replies_new:*",
    "user_comments:*",
)


@dataclass(frozen=True, slots=True)
class _CommentRow:
    id: int
    article_id: int
    parent: str
    author: str
    state: str
    time: float
    votes: int
    downvotes: int
    depth: int
    replies: int

    @property
    def member(self) -> str:
        return keys.comment(self.id)


def _comment_row(comment_id: int, raw: dict[bytes, bytes]) -> _CommentRow | str:
    """The fields the audit needs, or what is wrong with the hash."""
    try:
        article_id = keys.article_id_of(_s(raw.get(b"article", b"")))
    except ValueError:
        return f"article is {_shown(raw.get(b'article'))}, not an article"
    parent = _s(raw.get(b"parent", b""))
    if parent and keys.comment_id_or_none(parent) is None:
        return f"parent is {parent!r}, not a comment"
    posted = _time_or_none(raw.get(b"time"))
    if posted is None:
        return f"time is {_shown(raw.get(b'time'))}, not a time"
    counts = {}
    for name in ("votes", "downvotes", "depth", "replies"):
        value = raw.get(name.encode(), b"0")
        if not _WHOLE.fullmatch(_s(value)):
            return f"{name} is {_shown(value)}, not a whole number"
        counts[name] = int(value)
    return _CommentRow(
        comment_id,
        article_id,
        parent,
        _s(raw.get(b"author", b"")),
        _s(raw.get(b"state", b"")),
        posted,
        counts["votes"],
        counts["downvotes"],
        counts["depth"],
        counts["replies"],
    )


def comment_audit(
    conn: redis.Redis, *, now: float | None = None, batch: int = 500
) -> list[Problem]:
    """Every broken comment invariant (COMMENT_KINDS), plus comment keys of the wrong
    type and comment hashes no script can use (report only). Reads only; each fault is
    confirmed by a consistent re-read of its comment before it is reported (see
    _confirmed). `now` fixes the clock the windows are judged by (else Redis')."""
    at = _redis_now(conn) if now is None else now
    problems: list[Problem] = []
    ids = sorted({i for k in conn.scan_iter(match=keys.COMMENT_SCAN, count=1000) if (i := _cid(k))})
    rows: dict[int, _CommentRow] = {}
    unknown: set[str] = set()  # members whose hash cannot be read: their entries are left
    for offset in range(0, len(ids), batch):
        chunk = ids[offset : offset + batch]
        pipe = conn.pipeline(transaction=False)
        for comment_id in chunk:
            pipe.hgetall(keys.comment(comment_id))
        read, bad = _comment_rows(zip(chunk, pipe.execute(raise_on_error=False), strict=True))
        rows.update(read)
        unknown.update(bad)
        for member, fault in bad.items():
            if fault is None:
                problems.append(_wrong_type(member, _s(conn.type(member)), "hash"))
            else:
                problems.append(Problem("comment_bad", fault, entry=member))
    articles = sorted({row.article_id for row in rows.values()})
    pipe = conn.pipeline(transaction=False)
    for article_id in articles:
        pipe.hmget(keys.article(article_id), "time", "comments")
    found = _comment_articles(zip(articles, pipe.execute(raise_on_error=False), strict=True))
    faults, expected, live = _comment_rules(rows, found)
    problems += faults
    problems += _comment_indexes_audit(conn, expected, unknown, batch)
    problems += _comment_voters_audit(conn, live, found, rows, at, batch)
    related = _related(rows)
    counts = [p for p in problems if p.kind == "comment_count"]
    kept = _confirmed(
        conn,
        [p for p in problems if p.kind != "comment_count"],
        now,
        unit_of=_comment_unit,
        start=lambda unit: _needed(unit, rows, related=related),
        read=_comment_read,
    )
    # A count is re-read against the lists in one step (comment_tally.lua) where they
    # hold nothing wrong, else with its article's comments (writes may outrun that).
    listed_right = _lists_right(kept, rows)
    kept += _confirmed(
        conn,
        counts,
        now,
        unit_of=_comment_unit,
        start=lambda unit: (
            _TALLY if listed_right(unit[1]) else _needed(unit, rows, related=related)
        ),
        read=_comment_read,
    )
    order = {_identity(p): i for i, p in reversed(list(enumerate(problems)))}
    return sorted(kept, key=lambda p: order.get(_identity(p), len(problems)))


def _comment_rows(
    replies: Iterable[tuple[int, object]],
) -> tuple[dict[int, _CommentRow], dict[str, str | None]]:
    """The rows of the comment hashes read (id, HGETALL reply), and the members that
    cannot be read: member -> what is wrong with the hash (None: it is not a hash)."""
    rows: dict[int, _CommentRow] = {}
    faults: dict[str, str | None] = {}
    for comment_id, raw in replies:
        member = keys.comment(comment_id)
        if isinstance(raw, redis.ResponseError):
            faults[member] = None
        elif isinstance(raw, dict) and raw:
            row = _comment_row(comment_id, raw)
            if isinstance(row, str):
                faults[member] = row
            else:
                rows[comment_id] = row
    return rows, faults


def _comment_articles(
    replies: Iterable[tuple[int, object]],
) -> dict[int, tuple[float | None, bytes | None]]:
    """Article id -> (post time, `comments`) of the articles that exist, from (id, HMGET
    time comments) replies; one that is not a hash is kept with (None, None)."""
    found: dict[int, tuple[float | None, bytes | None]] = {}
    for article_id, reply in replies:
        if isinstance(reply, redis.ResponseError):
            found[article_id] = (None, None)  # not a hash: the article audit reports it
        elif isinstance(reply, list) and reply[0] is not None:
            found[article_id] = (_time_or_none(reply[0]), reply[1])
    return found


def _comment_rules(
    rows: dict[int, _CommentRow], found: dict[int, tuple[float | None, bytes | None]]
) -> tuple[list[Problem], dict[str, dict[str, float]], list[_CommentRow]]:
    """The faults of the comment hashes among themselves and with their articles, the
    entries each list should hold (key -> member -> score), and the comments whose
    article exists. Pure: the audit and its re-reads judge by the same rules."""
    problems: list[Problem] = []

    def report(kind: str, detail: str, row: _CommentRow) -> None:
        problems.append(Problem(kind, detail, entry=row.member))

    expected: dict[str, dict[str, float]] = defaultdict(dict)
    children: dict[str, int] = defaultdict(int)
    visible: dict[int, int] = defaultdict(int)
    live: list[_CommentRow] = []
    for row in rows.values():
        if row.article_id not in found:
            report("comment_orphan", f"its article {row.article_id} is gone", row)
            continue
        live.append(row)
        parent = rows.get(keys.comment_id_or_none(row.parent) or 0) if row.parent else None
        if row.parent and (parent is None or parent.article_id != row.article_id):
            report("comment_parent", f"parent {row.parent} is gone or of another article", row)
        elif row.depth != (parent.depth + 1 if parent else 0):
            report("comment_parent", f"depth {row.depth}, its parent's + 1 is not that", row)
        if row.parent and parent is not None:
            best, new = keys.replies(parent.id), keys.replies_new(parent.id)
            children[row.parent] += 1
        else:
            best = keys.article_comments(row.article_id)
            new = keys.article_comments_new(row.article_id)
        expected[best][row.member] = comment_best(row.id, row.votes, row.downvotes)
        expected[new][row.member] = float(row.id)
        expected[keys.article_comments_all(row.article_id)][row.member] = row.time
        if row.state == "":
            visible[row.article_id] += 1
            expected[keys.COMMENTS][row.member] = row.time
            author = _user_id_or_none(row.author)
            if author:
                expected[keys.user_comments(author)][row.member] = row.time
    for row in live:
        if row.state and not children.get(row.member):
            report("comment_tombstone", f"{row.state}, with no replies left", row)
        if row.replies != children.get(row.member, 0):
            n = children.get(row.member, 0)
            report("comment_replies", f"replies {row.replies} != {n} replies", row)
    for article_id, (_, raw_count) in found.items():
        count = _whole(raw_count) if raw_count is not None else 0
        if count != visible.get(article_id, 0):
            problems.append(_count_problem(article_id, raw_count, visible.get(article_id, 0)))
    return problems, expected, live


def _count_problem(article_id: int, raw_count: bytes | None, visible: int | str) -> Problem:
    return Problem(
        "comment_count",
        f"comments is {_shown(raw_count)}, it has {visible} visible comments",
        entry=keys.article(article_id),
    )


def _lists_right(kept: list[Problem], rows: dict[int, _CommentRow]) -> Callable[[int], bool]:
    """Whether an article's comments_all:<aid> and its entries in comments: are right by
    the confirmed problems `kept`: comment_tally.lua counts its visible comments by them.
    An unreadable comment hash (its article unknown) leaves every count to the full read."""
    wrong: set[str] = set()
    for p in kept:
        if p.kind == "comment_bad" or (p.kind == "wrong_type" and p.entry == keys.COMMENTS):
            return lambda article_id: False
        if p.kind in ("comment_index", "comment_stale", "wrong_type") and p.entry:
            wrong.add(p.entry)
            if p.entry == keys.COMMENTS and (row := rows.get(_cid(p.member or "") or 0)):
                wrong.add(keys.article_comments_all(row.article_id))
    return lambda article_id: keys.article_comments_all(article_id) not in wrong


def _cid(key: bytes | str) -> int | None:
    return keys.comment_id_or_none(_s(key))


def _comment_indexes_audit(
    conn: redis.Redis, expected: dict[str, dict[str, float]], unknown: set[str], batch: int
) -> list[Problem]:
    problems: list[Problem] = []
    names = {_s(k) for pattern in _COMMENT_ZSETS for k in conn.scan_iter(match=pattern, count=1000)}
    ordered = sorted(names | set(expected))
    for offset in range(0, len(ordered), batch):
        chunk = ordered[offset : offset + batch]
        pipe = conn.pipeline(transaction=False)
        for key in chunk:
            pipe.type(key)
            pipe.zrange(key, 0, _ZSET_PAGE - 1, withscores=True)
        replies = pipe.execute(raise_on_error=False)
        for i, key in enumerate(chunk):
            kind, content = _s(replies[2 * i]), replies[2 * i + 1]
            if kind not in ("zset", "none") or isinstance(content, redis.ResponseError):
                problems.append(_wrong_type(key, kind, "zset"))
                continue
            if len(content) == _ZSET_PAGE:  # a long list (comments:): read in pages
                content = conn.zscan_iter(key, count=_ZSET_PAGE)
            actual = {_s(m): score for m, score in content}
            problems += _compare_comment_index(key, actual, expected.get(key, {}), unknown)
    return problems


# The most entries one read of a comment list returns; a longer list is read by ZSCAN.
_ZSET_PAGE = 1000


def _compare_comment_index(
    key: str, actual: dict[str, float], want: dict[str, float], unknown: set[str]
) -> list[Problem]:
    problems: list[Problem] = []
    for member, score in sorted(want.items()):
        have = actual.get(member)
        if have is None or abs(have - score) > 1e-3:
            shown = "nothing" if have is None else f"{have:.17g}"
            detail = f"{key} has {shown} for {member}, not {score:.17g}"
            problems.append(Problem("comment_index", detail, entry=key, member=member))
    for member in sorted(set(actual) - set(want)):
        if member not in unknown:
            problems.append(
                Problem("comment_stale", f"{key} holds {member}", entry=key, member=member)
            )
    return problems


def _comment_voters_audit(
    conn: redis.Redis,
    live: list[_CommentRow],
    found: dict[int, tuple[float | None, bytes | None]],
    rows: dict[int, _CommentRow],
    now: float,
    batch: int,
) -> list[Problem]:
    problems: list[Problem] = []
    window = conf.window()
    voter_keys = [
        _s(k)
        for pattern in ("comment_voted:*", "comment_voted_down:*")
        for k in conn.scan_iter(match=pattern, count=1000)
    ]
    for key in voter_keys:
        comment_id = keys.comment_id_or_none("comment:" + key.partition(":")[2])
        if comment_id is None or comment_id not in rows:
            if comment_id is not None and conn.exists(keys.comment(comment_id)):
                continue  # a hash no script can use (comment_bad), or one written since
            problems.append(
                Problem(
                    "comment_stale_voters",
                    f"{key}: its comment is gone",
                    entry=key,
                    member=keys.comment(comment_id) if comment_id else "",
                )
            )
    open_rows = [row for row in live if _voting_open(found, row, now, window)]
    for offset in range(0, len(open_rows), batch):
        chunk = open_rows[offset : offset + batch]
        pipe = conn.pipeline(transaction=False)
        for row in chunk:
            up, down = keys.comment_voted(row.id), keys.comment_voted_down(row.id)
            pipe.scard(up)
            pipe.scard(down)
            pipe.sinter([up, down])
            pipe.ttl(up)
            pipe.ttl(down)
        replies = pipe.execute(raise_on_error=False)
        for i, row in enumerate(chunk):
            n_up, n_down, both, ttl_up, ttl_down = replies[i * 5 : i * 5 + 5]
            if any(isinstance(r, redis.ResponseError) for r in (n_up, n_down, both)):
                for key in (keys.comment_voted(row.id), keys.comment_voted_down(row.id)):
                    kind = _s(conn.type(key))
                    if kind not in ("set", "none"):
                        problems.append(_wrong_type(key, kind, "set"))
                continue
            problems += _comment_votes_faults(row, n_up, n_down, both, ttl_up, ttl_down)
    return problems


def _comment_votes_faults(
    row: _CommentRow, n_up: int, n_down: int, both: Sized, ttl_up: int, ttl_down: int
) -> list[Problem]:
    wrong = [d for _, d in _voter_faults(row.votes, row.downvotes, n_up, n_down, both)]
    if -1 in (ttl_up, ttl_down):
        wrong.append("a voter set has no expiry")
    return [Problem("comment_votes", "; ".join(wrong), entry=row.member)] if wrong else []


def _voting_open(
    found: dict[int, tuple[float | None, bytes | None]], row: _CommentRow, now: float, window: int
) -> bool:
    posted = found[row.article_id][0]
    return posted is not None and now < posted + window


def _voter_faults(
    votes: int, downvotes: int, n_up: int, n_down: int, both: Sized
) -> list[tuple[str, str]]:
    """What is wrong between an item's vote counts and its voter sets (kind, detail), for
    articles and comments alike."""
    faults = []
    if votes != n_up:
        faults.append(("votes", f"votes {votes} != {n_up} up-voters"))
    if downvotes != n_down:
        faults.append(("downvotes", f"downvotes {downvotes} != {n_down} down-voters"))
    if both:
        faults.append(("both_sets", f"{len(both)} user(s) in both voter sets"))
    return faults


def comment_repair(problems: Iterable[Problem], *, now: float | None = None) -> int:
    """Mend the comment problems of an audit, each with one small script that judges
    from what the store holds when it runs (comment_repair.lua). Returns how many
    steps changed something. Counts go last, after the entries they count."""
    conn = get_connection()
    now = _redis_now(conn) if now is None else now
    window = conf.window()
    changed = 0

    def run(mode: str, key: str, *args: object) -> None:
        nonlocal changed
        reply = scripts.COMMENT_REPAIR(keys=[key], args=[mode, *args], client=conn)
        if int(reply[0]) == Status.OK:
            changed += int(reply[1])

    problems = [p for p in problems if p.kind in COMMENT_KINDS]
    whole = {"comment_orphan", "comment_parent", "comment_tombstone", "comment_votes"}
    members = {p.entry for p in problems if p.kind in whole and p.entry}
    members |= {p.member for p in problems if p.kind == "comment_index" and p.member}
    for member in sorted(members, key=lambda m: keys.comment_id_or_none(m) or 0):
        comment_id = keys.comment_id_or_none(member)
        if comment_id is not None:
            run("comment", member, now, window, comment_id)
    for p in problems:
        if p.kind == "comment_stale" and p.entry and p.member is not None:
            run("stale", p.entry, p.member)
        elif p.kind == "comment_stale_voters" and p.entry:
            run("voters", p.entry, p.member or "")
    for p in problems:
        if p.kind == "comment_replies" and p.entry:
            comment_id = keys.comment_id_or_none(p.entry)
            if comment_id is not None:
                run("replies", p.entry, comment_id)
        elif p.kind == "comment_count" and p.entry:
            run("count", p.entry)
    return changed


def comments_repair_all(*, rounds: int = 4) -> list[Problem]:
    """Audit and repair the comments until the audit finds nothing a repair can mend (a
    removal can leave a count to fix), at most `rounds` times; returns what is left."""
    conn = get_connection()
    left: list[Problem] = []
    for _ in range(rounds):
        left = [p for p in comment_audit(conn) if p.kind in COMMENT_KINDS]
        if not left:
            return left
        comment_repair(left)
    return left


# --- confirming what the audit suspects -----------------------------------------------
# The audit reads in batches while the site writes, so an invariant spanning several keys
# read at different moments can look broken when a write landed between the reads. Each
# suspect is therefore read again, just the keys of its one item, inside a MULTI/EXEC (no
# write lands inside it), judged by the same rules, and reported only if that consistent
# read shows the fault too. When the read names other keys than those it read (a
# comment's parent, a link's holder, an article's search words), it is repeated with
# those, at most _RECHECKS times; an item still changing then is left for the next run.
# Up to _RECHECK_BATCH items share one MULTI/EXEC: its work is bounded by that many items.
_RECHECKS = 5
_RECHECK_BATCH = 100
_Unit = tuple[Any, ...]  # what one re-read covers: ("article", id), ("comment", id), ...
# Given the replies of what a reader queued and the clock, (None, the problems) or (the
# keys to read instead, []).
_Judge = Callable[[list[Any], float], tuple[Any, list[Problem]]]


def _confirmed(
    conn: redis.Redis,
    problems: list[Problem],
    now: float | None,
    *,
    unit_of: Callable[[Problem], _Unit | None],
    start: Callable[[_Unit], Any],
    read: Callable[[redis.client.Pipeline, _Unit, Any], _Judge],
) -> list[Problem]:
    """The problems a consistent re-read of their item shows (as it shows them). One with
    no unit (a fault of one key, seen in one read: a wrong type, a bad value) is kept.
    `start(unit)` is the keys to read first; `read(pipe, unit, those)` queues the reads
    and returns their judge. `now` fixes the clock (else Redis' TIME, read alongside)."""
    pending: dict[_Unit, Any] = {}
    for problem in problems:
        unit = unit_of(problem)
        if unit is not None and unit not in pending:
            pending[unit] = start(unit)
    reread: dict[_Unit, list[Problem]] = {}
    for _ in range(_RECHECKS):
        items = list(pending.items())
        for offset in range(0, len(items), _RECHECK_BATCH):
            chunk = items[offset : offset + _RECHECK_BATCH]
            pipe = conn.pipeline(transaction=True)
            pipe.time()
            judges = []
            for unit, guess in chunk:
                first = len(pipe)
                judge = read(pipe, unit, guess)
                judges.append((unit, judge, first, len(pipe)))
            replies = pipe.execute(raise_on_error=False)
            at = _clock(now, replies[0])
            for unit, judge, first, end in judges:
                again, found = judge(replies[first:end], at)
                if again is None:
                    reread[unit] = found
                    del pending[unit]
                else:
                    pending[unit] = again
    kept: list[Problem] = []
    for problem in problems:
        unit = unit_of(problem)
        if unit is None:
            kept.append(problem)
        else:
            kept += [again for again in reread.get(unit, ()) if _same(problem, again)]
    return kept


def _same(a: Problem, b: Problem) -> bool:
    return _identity(a) == _identity(b)


def _identity(p: Problem) -> tuple[object, ...]:
    """What a problem is about (its detail may change between reads)."""
    return (p.kind, p.article_id, p.group, p.entry, p.member)


def _clock(now: float | None, reply: object) -> float:
    """The fixed `now`, else the TIME read in the same MULTI/EXEC."""
    if now is not None:
        return now
    seconds, micros = cast(tuple[int, int], reply)
    return seconds + micros / 1_000_000


def _found_unit(problem: Problem) -> _Unit | None:
    """What a re-read of an article, index or search problem covers (None: keep it)."""
    kind, article_id = problem.kind, problem.article_id
    if kind in ARTICLE_KINDS and article_id is not None:
        return ("article", article_id)
    if kind == "link_stale" and problem.entry:
        return ("link", problem.entry)
    if kind in ("link_unindexed", "link_shared") and article_id is not None:
        return ("linked", article_id)
    if kind in ("submitted_stale", "unsubmitted") and article_id and problem.entry:
        return ("submitted", problem.entry, article_id)
    if kind == "search_unindexed" and article_id is not None:
        return ("search", article_id)
    if kind == "search_stale" and article_id and problem.entry:
        return ("search_stale", problem.entry, article_id)
    if kind == "unregistered_group" and problem.group:
        return ("group", problem.group)
    return None


# The kinds _article_problems reports, re-read with _article_read.
ARTICLE_KINDS = frozenset(
    {
        "missing_hash",
        "no_expiry",
        "groups_field",
        "bad_time",
        "bad_count",
        "not_indexed",
        "score",
        "time_index",
        "votes",
        "downvotes",
        "both_sets",
        "good",
        "net_votes",
        "vote_after_close",
    }
)


def _found_read(pipe: redis.client.Pipeline, unit: _Unit, guess: Any, broken: set[str]) -> _Judge:
    kind = unit[0]
    if kind == "article":
        return _article_read(pipe, unit[1], guess, broken)
    if kind == "link":
        return _link_read(pipe, unit[1], guess)
    if kind == "linked":
        return _linked_read(pipe, unit[1], guess or ("", ""))
    if kind == "submitted":
        return _submitted_read(pipe, unit[1], unit[2])
    if kind == "search":
        return _search_read(pipe, unit[1], guess or ())
    if kind == "search_stale":
        return _search_stale_read(pipe, unit[1], unit[2])
    return _group_read(pipe, unit[1])


def _article_read(
    pipe: redis.client.Pipeline, article_id: int, groups: frozenset[str], broken: set[str]
) -> _Judge:
    """One article with the sets of `groups` (and of the groups its field names)."""
    member = keys.article(article_id)
    names = sorted(groups)
    _article_reads(pipe, article_id)
    for name in names:
        pipe.sismember(keys.group(name), member)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        raw = replies[3]
        named = _grouped(raw) if isinstance(raw, dict) else set()
        if not named <= groups:
            return groups | named, []
        hits = replies[_ARTICLE_READS:]
        in_sets = {n for n, hit in zip(names, hits, strict=True) if hit == 1}
        return None, _article_problems(article_id, replies[:_ARTICLE_READS], in_sets, at, broken)

    return judge


def _link_read(pipe: redis.client.Pipeline, norm: str, holder: str) -> _Judge:
    """links: <norm> and the article it maps to (`holder`, as last read)."""
    article_id = keys.article_id_or_none(holder)
    pipe.hget(keys.LINKS, norm)
    if article_id is not None:
        pipe.hget(holder, "link")
        pipe.exists(holder)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        now_holder = _s(replies[0] or b"")
        if now_holder != holder:
            return now_holder, []
        if not holder:
            return None, []
        if article_id is not None:
            link, exists = replies[1:3]
            if isinstance(link, redis.ResponseError):
                return None, []  # not a hash: reported as wrong_type
            if exists and _normalized(_s(link or b"")) == norm:
                return None, []
        detail = f"links: maps {norm} to {holder}, which does not link there"
        return None, [Problem("link_stale", detail, article_id, entry=norm)]

    return judge


def _linked_read(pipe: redis.client.Pipeline, article_id: int, seen: tuple[str, str]) -> _Judge:
    """An article, links: at its link, and the article that maps there; `seen` is (its
    normalised link, that article) as last read."""
    member, (norm, holder) = keys.article(article_id), seen
    rival = keys.article_id_or_none(holder)
    pipe.hmget(member, "link", "time")
    pipe.hget(keys.LINKS, norm)
    if rival is not None:
        pipe.hmget(holder, "link", "time")

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        fields = replies[0]
        if isinstance(fields, redis.ResponseError) or fields[1] is None:
            return None, []
        now_seen = (_normalized(_s(fields[0] or b"")), _s(replies[1] or b""))
        if now_seen != seen:
            return now_seen, []
        window = conf.window()
        if not norm or holder == member or at >= (_time_or_none(fields[1]) or 0) + window:
            return None, []
        other = replies[2] if rival is not None else [None, None]
        shared = isinstance(other, list) and _normalized(_s(other[0] or b"")) == norm
        if shared and at < (_time_or_none(other[1]) or 0) + window:
            detail = f"open for voting with the same link as article {rival}"
            return None, [Problem("link_shared", detail, article_id, entry=norm)]
        detail = f"links: does not map {norm} to it"
        return None, [Problem("link_unindexed", detail, article_id, entry=norm)]

    return judge


def _submitted_read(pipe: redis.client.Pipeline, key: str, article_id: int) -> _Judge:
    """One article's entry in submitted:<pk> and its poster."""
    member = keys.article(article_id)
    pipe.zscore(key, member)
    pipe.hmget(member, "link", "poster", "time")

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        score, fields = replies
        if isinstance(score, redis.ResponseError) or isinstance(fields, redis.ResponseError):
            return None, []  # a key of the wrong type: reported as such
        exists = fields != [None, None, None]
        poster = _user_id_or_none(_s(fields[1] or b"")) if exists else None
        if score is not None and (not exists or poster is None or keys.submitted(poster) != key):
            detail = f"{key} holds {member}, which that user did not post"
            return None, [Problem("submitted_stale", detail, article_id, entry=key)]
        if score is None and poster is not None and keys.submitted(poster) == key:
            return None, [Problem("unsubmitted", f"missing from {key}", article_id, entry=key)]
        return None, []

    return judge


def _search_read(pipe: redis.client.Pipeline, article_id: int, words: tuple[str, ...]) -> _Judge:
    """One article's search fields and its entries in idx:<word> for `words`, the words
    its title, text and link gave when last read."""
    member = keys.article(article_id)
    pipe.hmget(member, "words", "title", "text", "link")
    for word in words:
        pipe.sismember(keys.idx(word), member)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        row, *hits = replies
        if isinstance(row, redis.ResponseError) or row == [None] * 4:
            return None, []
        stored, title, text, link = (_s(v or b"") for v in row)
        expected = search.article_words(title, text, link)
        if row[0] is None or stored.split() != expected:
            detail = "not indexed" if row[0] is None else "indexed under other words"
            return None, [Problem("search_unindexed", detail, article_id)]
        if tuple(expected) != words:
            return tuple(expected), []
        missing = [w for w, hit in zip(words, hits, strict=True) if hit != 1]
        if missing:
            detail = f"missing from idx:{missing[0]}"
            return None, [Problem("search_unindexed", detail, article_id)]
        return None, []

    return judge


def _search_stale_read(pipe: redis.client.Pipeline, key: str, article_id: int) -> _Judge:
    """One entry of idx:<word> and the words of the article it names."""
    member = keys.article(article_id)
    pipe.sismember(key, member)
    pipe.hmget(member, "words", "title", "text", "link")

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        hit, row = replies
        if hit != 1 or isinstance(row, redis.ResponseError):
            return None, []
        if row != [None] * 4 and keys.word_of(key) in _s(row[0] or b"").split():
            return None, []
        detail = f"{key} holds {member!r}, which does not have the word"
        return None, [Problem("search_stale", detail, article_id, entry=key)]

    return judge


def _group_read(pipe: redis.client.Pipeline, name: str) -> _Judge:
    pipe.type(keys.group(name))
    pipe.hexists(keys.GROUPS, name)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        kind, registered = replies
        if _s(kind) != "set" or registered:
            return None, []
        detail = f"group {name} has no registry entry"
        return None, [Problem("unregistered_group", detail, group=name)]

    return judge


# --- comments: one re-read covers one comment, one list entry, or one article's count --


@dataclass(frozen=True, slots=True)
class _Reads:
    """The keys one consistent re-read of a comment suspect reads."""

    comments: frozenset[int] = frozenset()  # their hashes
    articles: frozenset[int] = frozenset()  # their time and `comments`
    lists: frozenset[str] = frozenset()  # one item's lists read whole (its replies, comments)
    scores: frozenset[tuple[str, str]] = frozenset()  # (list, member): its score there
    voters: frozenset[int] = frozenset()  # the comments whose voter sets are counted

    def __le__(self, other: _Reads) -> bool:
        return all(getattr(self, f) <= getattr(other, f) for f in self.__slots__)

    def __or__(self, other: _Reads) -> _Reads:
        return _Reads(*(getattr(self, f) | getattr(other, f) for f in self.__slots__))


def _comment_unit(problem: Problem) -> _Unit | None:
    kind, entry = problem.kind, problem.entry or ""
    if kind in ("comment_orphan", "comment_parent", "comment_tombstone", "comment_votes"):
        return ("comment", _cid(entry))
    if kind == "comment_replies":
        return ("comment", _cid(entry))
    if kind in ("comment_index", "comment_stale") and problem.member is not None:
        return ("entry", entry, problem.member)
    if kind == "comment_count":
        return ("count", keys.article_id_or_none(entry))
    if kind == "comment_stale_voters":
        return ("voters", entry, problem.member or "")
    return None


def _needed(
    unit: _Unit,
    rows: dict[int, _CommentRow],
    listed: dict[str, list[str]] | None = None,
    related: dict[object, set[int]] | None = None,
) -> _Reads:
    """The keys a re-read of `unit` must read, by what `rows` and `listed` (the lists
    read whole) say: a comment with its parent, its replies and its voter sets; a list
    entry with its comment and that one's parent; an article's count with its comments.
    `related` is _related(rows), when made once for many units."""
    listed = listed or {}
    related = _related(rows) if related is None else related
    comments: set[int] = set()
    lists: set[str] = set()
    scores: set[tuple[str, str]] = set()
    voters: set[int] = set()
    articles: set[int] = set()
    kind, target = unit[0], unit[1]
    if kind == "comment" and isinstance(target, int):
        comments |= {target}
        voters.add(target)
        lists |= {keys.replies(target), keys.replies_new(target)}
        comments |= related.get(keys.comment(target), set())
    elif kind == "entry":
        scores.add((str(target), str(unit[2])))
        if (entry_id := keys.comment_id_or_none(str(unit[2]))) is not None:
            comments.add(entry_id)
    elif kind == "count" and isinstance(target, int):
        articles.add(target)
        lists.add(keys.article_comments_all(target))
        comments |= related.get(target, set())
    comments |= {i for key in lists for m in listed.get(key, ()) if (i := _cid(m))}
    if kind != "count":  # a comment's parent decides where it is listed
        comments |= {
            parent for i in list(comments) if (row := rows.get(i)) and (parent := _cid(row.parent))
        }
    articles |= {row.article_id for i in comments if (row := rows.get(i))}
    return _Reads(
        frozenset(comments),
        frozenset(articles),
        frozenset(lists),
        frozenset(scores),
        frozenset(voters),
    )


def _related(rows: dict[int, _CommentRow]) -> dict[object, set[int]]:
    """comment:<id> -> the ids of its replies, and article id -> the ids of its comments."""
    related: dict[object, set[int]] = defaultdict(set)
    for row in rows.values():
        related[row.article_id].add(row.id)
        if row.parent:
            related[row.parent].add(row.id)
    return related


# The re-read of an article's count by comment_tally.lua, in place of a _Reads.
_TALLY = "tally"


def _comment_read(
    pipe: redis.client.Pipeline, unit: _Unit, reads: _Reads | Literal["tally"] | None
) -> _Judge:
    """Queue the reads of `reads` (a stale voter set: the set and its comment; _TALLY: the
    count's script); the judge applies the audit's rules to what they return."""
    if unit[0] == "voters":
        return _stale_voters_read(pipe, unit[1], unit[2])
    if isinstance(reads, str):
        return _tally_read(pipe, unit[1])
    reads = reads or _Reads()
    cids, aids = sorted(reads.comments), sorted(reads.articles)
    lists, scores, voters = sorted(reads.lists), sorted(reads.scores), sorted(reads.voters)
    for cid in cids:
        pipe.hgetall(keys.comment(cid))
    for aid in aids:
        pipe.hmget(keys.article(aid), "time", "comments")
    for key in lists:
        pipe.zrange(key, 0, -1)
    for key, member in scores:
        pipe.zscore(key, member)
    for cid in voters:
        up, down = keys.comment_voted(cid), keys.comment_voted_down(cid)
        pipe.scard(up)
        pipe.scard(down)
        pipe.sinter([up, down])
        pipe.ttl(up)
        pipe.ttl(down)

    def judge(got: list[Any], at: float) -> tuple[Any, list[Problem]]:
        replies = iter(got)
        rows, faults = _comment_rows((cid, next(replies)) for cid in cids)
        found = _comment_articles((aid, next(replies)) for aid in aids)
        listed = {
            key: [] if isinstance(r, redis.ResponseError) else [_s(m) for m in r]
            for key, r in ((key, next(replies)) for key in lists)
        }
        scored = {entry: next(replies) for entry in scores}
        voted = {cid: [next(replies) for _ in range(5)] for cid in voters}
        needed = _needed(unit, rows, listed)
        if not needed <= reads:
            return reads | needed, []
        problems, expected, live = _comment_rules(rows, found)
        for (key, member), score in scored.items():
            if isinstance(score, redis.ResponseError):
                continue  # not a zset: reported as wrong_type
            want = expected.get(key, {})
            actual = {} if score is None else {member: score}
            wanted = {member: want[member]} if member in want else {}
            problems += _compare_comment_index(key, actual, wanted, set(faults))
        window = conf.window()
        for row in live:
            counted = voted.get(row.id)
            if counted is None or not _voting_open(found, row, at, window):
                continue
            if not any(isinstance(r, redis.ResponseError) for r in counted):
                problems += _comment_votes_faults(row, *counted)
        return None, problems

    return judge


def _tally_read(pipe: redis.client.Pipeline, article_id: int) -> _Judge:
    """An article's count against the visible comments its lists hold, read in one step:
    with no second read, comments arriving meanwhile cannot keep a fault from being seen."""
    all_key = keys.article_comments_all(article_id)
    scripts.COMMENT_TALLY(keys=[keys.article(article_id), all_key, keys.COMMENTS], client=pipe)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        reply = replies[0]
        if isinstance(reply, redis.ResponseError) or Status(int(reply[0])) is Status.BAD_DATA:
            # a key of the wrong type (reported as such): read the count the full way
            return _Reads(articles=frozenset({article_id}), lists=frozenset({all_key})), []
        if Status(int(reply[0])) is Status.NOT_FOUND:
            return None, []
        raw, visible, limit = reply[1], int(reply[2]), int(reply[3])
        if (_whole(raw) if raw is not None else 0) == visible:
            return None, []
        shown = f"at least {visible}" if visible >= limit else str(visible)
        return None, [_count_problem(article_id, raw, shown)]

    return judge


def _stale_voters_read(pipe: redis.client.Pipeline, key: str, member: str) -> _Judge:
    pipe.exists(key)
    pipe.exists(member or key)

    def judge(replies: list[Any], at: float) -> tuple[Any, list[Problem]]:
        exists, comment = replies
        if not exists or (member and comment):
            return None, []
        detail = f"{key}: its comment is gone"
        return None, [Problem("comment_stale_voters", detail, entry=key, member=member)]

    return judge
