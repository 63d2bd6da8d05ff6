"""Django's MessageMiddleware with each request's message storage made when first used.
Making it (a signed-cookie storage with its signer, and a session storage) costs about
10 µs of CPU, and most requests never use it: the API's (a vote), and any other that
neither adds a message nor renders a page."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.contrib.messages.middleware import MessageMiddleware as DjangoMessageMiddleware
from django.contrib.messages.storage import default_storage
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject, empty


class _Storage(SimpleLazyObject):
    """A SimpleLazyObject made without LazyObject's __setattr__ (half the cost of making
    one, on every request): the same two attributes, set straight. Made, like a
    SimpleLazyObject, of the function that makes the storage (its copy makes another so)."""

    def __init__(self, make: Any) -> None:
        object.__setattr__(self, "_setupfunc", make)
        object.__setattr__(self, "_wrapped", empty)


class MessageMiddleware(DjangoMessageMiddleware):
    """The same storage, cookies and session writes as Django's: a storage never made had
    nothing added and nothing read, and Django's update() of such a storage stores
    nothing. Called directly, without MiddlewareMixin's dispatch (synchronous only: Django
    adapts it under ASGI)."""

    async_capable = False

    def __call__(self, request: HttpRequest) -> HttpResponse:
        self.process_request(request)
        return self.process_response(request, self.get_response(request))

    def process_request(self, request: Any) -> None:
        request._messages = _Storage(partial(default_storage, request))

    def process_response(self, request: HttpRequest, response: Any) -> Any:
        kept = getattr(request, "_messages", None)
        if isinstance(kept, SimpleLazyObject) and kept._wrapped is empty:
            return response
        return super().process_response(request, response)
