"""Turn an unreachable Redis into a clear 503, an oversized body into a 413, and a NUL
character anywhere in a request into a 404 or a 400."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed, RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, QueryDict
from django.http.multipartparser import MultiPartParserError
from django.utils.translation import gettext

from articles import conf
from articles.errors import InvalidInput, PageNotFound, RequestTooLarge
from articles.http.responses import dependency_error, error_response
from articles.store import replicas


class RedisUnavailableMiddleware:
    """Answers 503 while Redis (or Django's database) is down. redis-py and Django
    reconnect on the next request by themselves, so the site recovers without a restart."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        error = dependency_error(exception)
        return error_response(request, error) if error is not None else None


def too_large_response(request: HttpRequest) -> HttpResponse:
    """413 with the limit named: JSON under the API (or when JSON is asked for), else a page."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    error = RequestTooLarge(f"The request body is larger than the {limit:,} bytes allowed.")
    return error_response(request, error)


class RequestSizeMiddleware:
    """413 for a body over DATA_UPLOAD_MAX_MEMORY_SIZE before anything reads it. Django
    checks the limit only when a form is parsed (and then answers a bare 400); DRF's JSON
    parser reads the stream without any limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # Django reads no body with a malformed length
        if limit is not None and length > limit:
            return too_large_response(request)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RequestDataTooBig):
            return too_large_response(request)
        return None


NUL = "\x00"


def _nul_field(values: QueryDict) -> str | None:
    """The name of the first field whose name or value holds a NUL, if one does."""
    for name, items in values.lists():
        if NUL in name or any(NUL in item for item in items):
            return name.replace(NUL, "")
    return None


FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _form_nul_field(request: HttpRequest) -> str | None:
    """The first field of a POSTed form holding a NUL. A body that does not parse is left
    to be refused where it was before (the CSRF check, the view, DRF's 415): it is read
    into memory first (RequestSizeMiddleware bounds it), so it can be parsed again."""
    if request.method != "POST" or request.content_type not in FORMS:
        return None
    try:
        request.body  # noqa: B018 (kept for a second parse)
        return _nul_field(request.POST)
    except (MultiPartParserError, SuspiciousOperation, OSError):
        request.__dict__.pop("_post", None)
        request.__dict__.pop("_files", None)
        return None


class NulCharacterMiddleware:
    """PostgreSQL refuses a NUL character in any text (SQLite takes it), so a NUL that
    reached a query was a 500 there (a user name from the address, a session cookie).
    Refused here once, for the pages, the API, the admin and Django's own forms alike:
    in the path a 404 (no address holds one), in a query or form field a 400 naming it.
    A cookie holding one is dropped (Django unquotes a quoted cookie's octal escapes, so
    `"\\000"` is a NUL): a bad session cookie is no session, not an error."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if NUL in request.path:
            return error_response(request, PageNotFound())
        # A NUL reaches a query's fields only as itself or as %00: a query with neither
        # (nearly all) is not parsed here, which cost a bare request a tenth.
        query = request.META.get("QUERY_STRING", "")
        field = _nul_field(request.GET) if NUL in query or "%00" in query else None
        if field is None:
            field = _form_nul_field(request)
        if field is not None:
            message = gettext("A NUL character is not allowed in any value.")
            return error_response(request, InvalidInput(field, message))
        if any(NUL in name or NUL in value for name, value in request.COOKIES.items()):
            request.COOKIES = {
                name: value
                for name, value in request.COOKIES.items()
                if NUL not in name and NUL not in value
            }
        return self.get_response(request)


class ReplicaReadsMiddleware:
    """Lets a request's reads go to Redis replicas (articles.store.replicas) when it can
    take a page a second or two old: a GET or HEAD with no Authorization header (an API
    client with a token keeps no cookie to carry its writes) and no cookie of a recent
    write. A response to a request that wrote sets that cookie, so the writer's next pages
    come from the primary. Without ARTICLES_REDIS_READ_URLS when the stack is made it
    leaves the stack (MiddlewareNotUsed: Django makes it once a process, a test client
    on its first request), so requests do not pay a layer that does nothing; the setting
    is still read on each request, as a test may empty it afterwards."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not replicas.in_use():
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not replicas.in_use():
            return self.get_response(request)
        allowed = (
            request.method in ("GET", "HEAD")
            and "HTTP_AUTHORIZATION" not in request.META
            and replicas.WROTE_COOKIE not in request.COOKIES
        )
        token = replicas.begin(replicas=allowed)
        try:
            response = self.get_response(request)
        finally:
            wrote = replicas.end(token)
        if wrote:
            response.set_cookie(
                replicas.WROTE_COOKIE,
                "1",
                max_age=conf.read_your_writes_seconds(),
                secure=request.is_secure(),
                httponly=True,
                samesite="Lax",
            )
        return response
