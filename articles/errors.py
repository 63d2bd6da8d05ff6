"""Domain errors; each carries its HTTP status, mapped to responses in one place."""

from __future__ import annotations

from datetime import UTC, datetime
from http import HTTPStatus
from typing import TYPE_CHECKING

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from articles.store.clock import in_words

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise


class ArticlesError(Exception):
    """An error with its own answer: status, code, message, headers and body fields.
    responses.py renders it for every surface (pages, API, middleware, /healthz)."""

    status_code: int = HTTPStatus.BAD_REQUEST
    code = "articles_error"
    # The message for people, in the language of the request that raised it: the class's
    # default_message unless given one. The code stays the same in every language.
    message: str
    default_message: str | _StrPromise = _("Bad request.")
    retry_after: int | None = None  # seconds, sent as Retry-After

    def __init__(self, message: str | None = None) -> None:
        self.message = str(message or self.default_message)
        super().__init__(self.message)

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after else {}

    def body(self) -> dict[str, object]:
        """The JSON body: {"detail", "code"} and what a program needs to act on it."""
        return {"detail": self.message, "code": self.code}


class ArticleNotFound(ArticlesError):
    status_code = HTTPStatus.NOT_FOUND
    code = "article_not_found"
    default_message = _("No such article.")


class ArticleRemoved(ArticleNotFound):
    """An article staff deleted (410 Gone): when and why, as its moderation log entry says."""

    status_code = HTTPStatus.GONE
    code = "article_removed"
    default_message = _("This article was removed by staff.")

    def __init__(self, removed_at: float, reason: str) -> None:
        when = datetime.fromtimestamp(removed_at, tz=UTC)
        values = {"time": f"{when:%Y-%m-%d %H:%M}", "reason": reason}
        if reason:
            said = gettext("This article was removed by staff on %(time)s UTC: %(reason)s")
        else:
            said = gettext("This article was removed by staff on %(time)s UTC.")
        super().__init__(said % values)
        self.removed_at, self.reason = when, reason

    def body(self) -> dict[str, object]:
        removed_at = self.removed_at.isoformat().replace("+00:00", "Z")
        return {**super().body(), "removed_at": removed_at, "reason": self.reason}


class VotingClosed(ArticlesError):
    status_code = HTTPStatus.CONFLICT
    code = "voting_closed"
    default_message = _("Voting on this article has closed: its one-week voting window is over.")


class ArticleArchived(ArticlesError):
    """An article moved to the database (ARTICLES_ARCHIVE_AFTER): read-only from then on."""

    status_code = HTTPStatus.CONFLICT
    code = "article_archived"
    default_message = _("This article is archived: it takes no more comments or edits.")


class CommentNotFound(ArticlesError):
    status_code = HTTPStatus.NOT_FOUND
    code = "comment_not_found"
    default_message = _("No such comment.")


class CommentingClosed(ArticlesError):
    status_code = HTTPStatus.FORBIDDEN
    code = "commenting_closed"
    default_message = _("This article is closed for comments.")


class EditWindowClosed(ArticlesError):
    status_code = HTTPStatus.FORBIDDEN
    code = "edit_window_closed"
    default_message = _("This comment can no longer be edited: its edit window is over.")


class GroupNotFound(ArticlesError):
    status_code = HTTPStatus.NOT_FOUND
    code = "group_not_found"
    default_message = _("No such group.")


class GroupExists(ArticlesError):
    status_code = HTTPStatus.CONFLICT
    code = "group_exists"
    default_message = _("A group with this name already exists.")


class BadRequest(ArticlesError):
    """A request the site cannot serve at all, such as one naming a host it does not serve."""

    code = "bad_request"
    default_message = _("Bad request.")


class InvalidInput(ArticlesError):
    """Bad input for one named field (title, link, text, group, page, ...)."""

    code = "invalid"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field

    def body(self) -> dict[str, object]:
        return {**super().body(), "field": self.field, "errors": {self.field: [self.message]}}


class EmptySearch(InvalidInput):
    """A search with nothing to look for (empty, only stop words or punctuation, only
    excluded words): the search page says so; the API answers 400 naming `q`."""

    code = "empty_search"

    def __init__(self, message: str) -> None:
        super().__init__("q", message)


class CommentTooDeep(InvalidInput):
    """A reply nested deeper than ARTICLES_COMMENT_MAX_DEPTH: 400 naming `parent`."""

    code = "comment_too_deep"

    def __init__(self, max_depth: int) -> None:
        super().__init__(
            "parent",
            gettext("Replies nest at most %(depth)d levels deep; reply higher up the thread.")
            % {"depth": max_depth},
        )
        self.max_depth = max_depth


class DuplicateLink(ArticlesError):
    status_code = HTTPStatus.CONFLICT
    code = "duplicate_link"
    default_message = _("This link was already posted and is still open for voting.")

    def __init__(self, article_id: int) -> None:
        super().__init__(
            gettext("This link was already posted as article %(id)d.") % {"id": article_id}
        )
        self.article_id = article_id

    def body(self) -> dict[str, object]:
        return {**super().body(), "article_id": self.article_id}


class IdempotencyKeyReused(ArticlesError):
    """The Idempotency-Key of an earlier request, sent with a different body (IETF
    draft-ietf-httpapi-idempotency-key-header: 422)."""

    status_code = HTTPStatus.UNPROCESSABLE_ENTITY
    code = "idempotency_key_reused"
    default_message = _(
        "This Idempotency-Key was already used for a different request; "
        "use a new key for a new article."
    )

    def __init__(self, article_id: int | None = None) -> None:
        super().__init__()
        self.article_id = article_id

    def body(self) -> dict[str, object]:
        return {**super().body(), **self._made()}

    def _made(self) -> dict[str, object]:
        """The body's field naming what the key's first request made."""
        return {"article_id": self.article_id}


class CommentIdempotencyKeyReused(IdempotencyKeyReused):
    """The same, on a comment post: the key made a comment, named by `comment_id`."""

    default_message = _(
        "This Idempotency-Key was already used for a different request; "
        "use a new key for a new comment."
    )

    def __init__(self, comment_id: int | None = None) -> None:
        super().__init__()
        self.comment_id = comment_id

    def _made(self) -> dict[str, object]:
        return {"comment_id": self.comment_id}


class NotAllowed(ArticlesError):
    status_code = HTTPStatus.FORBIDDEN
    code = "not_allowed"
    default_message = _("You are not allowed to do that.")


class LoginRequired(NotAllowed):
    """Something only a logged-in user may do, asked by a visitor (the pages send visitors
    to the login page first; this is the last word of the store and the plumbing)."""

    default_message = _("Log in first.")


class RateLimited(ArticlesError):
    status_code = HTTPStatus.TOO_MANY_REQUESTS
    code = "rate_limited"
    default_message = _("Too many requests; try again later.")

    def __init__(self, retry_after: int, message: str | None = None) -> None:
        super().__init__(
            message
            or gettext("Too many requests; try again %(when)s.") % {"when": in_words(retry_after)}
        )
        self.retry_after = retry_after


class StoreUnavailable(ArticlesError):
    status_code = HTTPStatus.SERVICE_UNAVAILABLE
    code = "store_unavailable"
    default_message = _("The article store (Redis) is unreachable; please try again in a moment.")
    retry_after = 5


class StoreFull(ArticlesError):
    """Redis is out of memory (maxmemory reached, noeviction): it refuses every write
    while reads keep working. Writes wait until an administrator frees or adds memory."""

    status_code = HTTPStatus.SERVICE_UNAVAILABLE
    code = "store_full"
    default_message = _(
        "The article store is full, so it takes no changes for now; reading still works. "
        "Please try again later."
    )
    retry_after = 60


class StoreCorrupt(ArticlesError):
    """A key of the store holds the wrong type or a value that is not what it should be
    (written by hand or by other code). The request changed nothing; `check_votes`
    reports the damage and `--repair` mends what it can."""

    status_code = HTTPStatus.SERVICE_UNAVAILABLE
    code = "store_corrupt"
    default_message = _("The article store holds bad data; nothing was changed.")

    def __init__(self, key: str, problem: str = "") -> None:
        what = f"{key} {problem}".strip()
        super().__init__(
            gettext(
                "The article store holds bad data at %(what)s; nothing was changed. "
                "An administrator can find and repair it with check_votes."
            )
            % {"what": what}
        )
        self.key = key

    def body(self) -> dict[str, object]:
        return {**super().body(), "key": self.key}


class Conflict(ArticlesError):
    status_code = HTTPStatus.CONFLICT
    code = "conflict"
    default_message = _("The article changed while we worked on it; please try again.")


class RequestTooLarge(ArticlesError):
    status_code = HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    code = "request_too_large"
    default_message = _("The request body is too large.")


class DatabaseUnavailable(ArticlesError):
    """Django's database (users, sessions, tokens) is down: logins and anything needing
    an account wait; anonymous pages served from Redis alone keep working."""

    status_code = HTTPStatus.SERVICE_UNAVAILABLE
    code = "database_unavailable"
    default_message = _(
        "The account database is unreachable; please try again in a moment. "
        "Pages that need no login still work."
    )
    retry_after = 5


class PageNotFound(ArticlesError):
    """An address that can name nothing (a NUL in it): the API's body for any 404."""

    status_code = HTTPStatus.NOT_FOUND
    code = "not_found"
    default_message = _("Not found.")


class AlreadyFlagged(ArticlesError):
    """A second flag by the same user on the same item: one flag per user per item."""

    status_code = HTTPStatus.CONFLICT
    code = "already_flagged"
    default_message = _("You have already flagged this.")


class NotFlagged(ArticlesError):
    """Resolve or dismiss of an item that is not in the staff queue (decided already)."""

    status_code = HTTPStatus.NOT_FOUND
    code = "not_flagged"
    default_message = _("This item has no flags waiting for staff.")
