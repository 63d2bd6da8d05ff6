"""The Permissions-Policy header, which Django does not send: the site uses no camera,
microphone, location, payment or USB, so no page (nor a frame in one) may ask for them."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"


class PermissionsPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response
