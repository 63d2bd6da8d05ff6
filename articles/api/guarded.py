"""The API's vote in one Redis round trip when warm: the request's rate limits, the check
of a kept token's credential epoch and the vote itself are one script
(services.article_vote_guarded), and the token's user is kept (api.tokens), so no
database query either. A credential revoked since it was kept casts nothing: the token
is read again from the database (401 if gone) and the vote cast once more."""

from __future__ import annotations

from typing import Any

from articles.api import tokens
from articles.http.addresses import user_pk
from articles.store import ratelimits, services
from articles.types import Article, Vote


def vote(request: Any, *, article_id: int, direction: Vote) -> Article:
    """Set the caller's vote, counting the limits deferred at authentication (ApiMixin:
    guarded_actions). Raises RateLimited, AuthenticationFailed, and what article_vote
    raises."""
    limits = ratelimits.take_deferred(request)
    kept = tokens.unchecked(request)
    outcome = services.article_vote_guarded(
        article_id=article_id,
        user_id=user_pk(request),
        direction=direction,
        revoked_since=kept.revoked_since if kept is not None else None,
        limit_keys=limits.keys,
        limit_args=limits.args,
    )
    ratelimits.counted(request, limits, outcome.counts)
    if outcome.revoked:
        tokens.authenticate_again(request)
        outcome = services.article_vote_guarded(
            article_id=article_id,
            user_id=user_pk(request),
            direction=direction,
            revoked_since=None,  # just read from the database
        )
    return outcome.article()
