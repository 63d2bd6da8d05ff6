"""Django's SessionMiddleware, with a database that cannot take the session's save answered
as what it is. Django's database session store turns any DatabaseError of an update into
UpdateError, and its middleware answers that with a 400 "session interrupted", meant for a
session a concurrent log-out deleted; a database that is down or locked at that moment is
the clear 503 every other surface gives (`database_unavailable`), and the session is left
as it was."""

from __future__ import annotations

from django.contrib.sessions.exceptions import SessionInterrupted
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.http import HttpRequest, HttpResponse

from articles.errors import ArticlesError
from articles.http.responses import dependency_error, error_response


class SessionMiddleware(DjangoSessionMiddleware):
    """The same loads, saves and cookies as Django's; only its 400 for a save the database
    refused becomes that dependency's 503."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        try:
            return super().process_response(request, response)
        except SessionInterrupted as interrupted:
            error = _dependency_cause(interrupted)
            if error is None:
                raise
            return error_response(request, error)


def _dependency_cause(exc: BaseException) -> ArticlesError | None:
    """The 503 for the first dependency failure in the chain the save raised through
    (SessionInterrupted from UpdateError from the driver's error), or None."""
    cause = exc.__context__
    while cause is not None:
        error = dependency_error(cause)
        if error is not None:
            return error
        cause = cause.__context__
    return None
