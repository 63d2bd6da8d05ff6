"""Article votes: one vote per user per article, in the voting window."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis

from articles import conf
from articles.errors import StoreFull, VotingClosed
from articles.operations import metrics
from articles.operations.replication import replicated
from articles.store import keys, scripts
from articles.store.connection import get_connection, out_of_memory
from articles.store.scripts import raise_for_status
from articles.store.services._common import _BATCH, _archived_refused, _article_member, _given
from articles.types import Article, Status, Vote

logger = logging.getLogger("articles.store.services")  # the package's one logger


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
        *keys.PERIOD_KEYS,
        keys.upvoted(user_id),
        keys.LIVE,
    ]
    args: list[str | int | float] = [
        member,
        keys.user(user_id),
        direction.value,
        _given(now),
        conf.vote_score(),
        conf.window(),
        conf.good_votes(),
        conf.live_events(),
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
    return _voted(article_id, direction, result)


@dataclass(frozen=True, slots=True)
class GuardedVote:
    """What article_vote_guarded's one round trip answered: each rate-limit window's count
    (in the order given); `revoked`: the credential was revoked since it was read, and
    nothing was cast; else vote.lua's `reply`, or None when a window refused the vote."""

    article_id: int
    direction: Vote
    counts: list[int]
    revoked: bool
    reply: Sequence[Any] | None

    def article(self) -> Article:
        """The article as the vote left it; raises what article_vote raises."""
        if self.reply is None:
            raise ValueError("no vote was cast")
        return _voted(self.article_id, self.direction, self.reply)


@replicated
def article_vote_guarded(
    *,
    article_id: int,
    user_id: int,
    direction: Vote,
    revoked_since: float | None,
    limit_keys: Sequence[str] = (),
    limit_args: Sequence[int] = (),
    now: float | None = None,
) -> GuardedVote:
    """article_vote behind its caller's checks, in the same one step: count the request in
    each rate-limit counter (`limit_args`: a limit, then an expiry, for each of
    `limit_keys`) and cast nothing past a limit; then cast nothing if the user's
    credential epoch (store.people) is at or after `revoked_since` (None: no check)."""
    script_keys, args = _vote_call(article_id, user_id, direction, now)
    epoch = len(script_keys) + 1
    script_keys += [keys.credential_epoch(user_id), *limit_keys]
    args += [epoch, "" if revoked_since is None else repr(revoked_since), *limit_args]
    try:
        reply = scripts.VOTE_GUARDED(script_keys, args, client=get_connection())
    except redis.ResponseError as exc:
        if out_of_memory(exc):  # as ratelimits.check() answers a write with Redis full
            raise StoreFull() from None
        raise
    counts = [int(count) for count in reply[1]]
    revoked = Status(int(reply[0])) is Status.RETRY
    cast = reply[2] if len(reply) > 2 else None
    return GuardedVote(article_id, direction, counts, revoked, cast)


def _voted(article_id: int, direction: Vote, result: Sequence[Any]) -> Article:
    """The article from vote.lua's reply, the vote counted in the metrics; raises its error
    (an archived article's voting closed: VotingClosed)."""
    with _archived_refused(article_id=article_id, refusal=VotingClosed):
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
