"""A vote in one Redis round trip when warm, for the API's token vote and the pages' session
vote alike: the request's rate limits, the check of a kept credential's epoch and the vote
itself are one script (services.article_vote_guarded), and the credential's user is kept
(api.tokens, web.sessionusers), so no database query either. A credential revoked since
it was kept casts nothing: it is read again from the database and the vote cast once
more, or refused if the caller is logged out."""

from __future__ import annotations

from typing import Any, Protocol

from articles.http.addresses import user_pk
from articles.kept import Unchecked
from articles.store import ratelimits, services
from articles.types import Article, Vote


class Credentials(Protocol):
    """Where a request's kept user came from: the module api.tokens or web.sessionusers."""

    def unchecked(self, request: Any) -> Unchecked | None:
        """The kept credential that identified `request` with its epoch unread, if one did."""

    def authenticate_again(self, request: Any) -> None:
        """Drop that credential and read it from the database: request.user anew."""


def vote(request: Any, credentials: Credentials, *, article_id: int, direction: Vote) -> Article:
    """Set the caller's vote, counting the limits deferred for it (ratelimits.defer).
    Raises RateLimited, LoginRequired (the session logged out meanwhile), what
    `credentials.authenticate_again` raises, and what article_vote raises."""
    limits = ratelimits.take_deferred(request)
    kept = credentials.unchecked(request)
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
        credentials.authenticate_again(request)
        outcome = services.article_vote_guarded(
            article_id=article_id,
            user_id=user_pk(request),
            direction=direction,
            revoked_since=None,  # just read from the database
        )
    return outcome.article()
