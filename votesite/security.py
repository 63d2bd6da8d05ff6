"""Security headers Django does not send by itself: the Permissions-Policy (the site uses no
camera, microphone, location, payment or USB, so no page nor a frame in one may ask for
them), and the Content-Security-Policy through django-csp with the header built once."""

from __future__ import annotations

from functools import partial
from typing import Any

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.functional import empty

from votesite.headers import checked, store_of

PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"


# What a view sets on its response to change its policy (django-csp's decorators, or the
# browsable API's and the docs pages' own): such a response goes through django-csp's
# whole path, as does a request that used its nonce.
_PER_RESPONSE = tuple(
    f"_csp_{what}{ro}" for what in ("config", "update", "replace") for ro in ("", "_ro")
)
# Set on a response (django-csp's decorators do so), these or the exemptions send it the
# checking way; a response with none of them (nearly all) takes the built headers as they are.
_OWN = frozenset((*_PER_RESPONSE, "_csp_exempt", "_csp_exempt_ro"))

_PERMISSIONS = checked("Permissions-Policy", PERMISSIONS_POLICY)


class _Built:
    """The two headers of the policy settings, and their excluded path prefixes; `plain`:
    those a response of its own has no say in gets, as the header store's items
    (votesite.headers), with their excluded prefixes."""

    def __init__(self) -> None:
        policy = getattr(settings, "CONTENT_SECURITY_POLICY", None)
        report_only = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
        self.headers = (
            (HEADER, build_policy(), _prefixes(policy), "_csp_exempt"),
            (
                HEADER_REPORT_ONLY,
                build_policy(report_only=True),
                _prefixes(report_only),
                "_csp_exempt_ro",
            ),
        )
        self.plain = tuple(
            (*checked(header, value), excluded)
            for header, value, excluded, _ in self.headers
            if value
        )


def _prefixes(policy: Any) -> tuple[str, ...]:
    return tuple((policy or {}).get("EXCLUDE_URL_PREFIXES", None) or ())


# Built when first asked for; the policy settings read once, not on every response (one of
# them is usually absent, and an absent setting costs Django an exception each time).
_built: _Built | None = None


def _headers() -> _Built:
    global _built
    built = _built
    if built is None:
        built = _built = _Built()
    return built


@receiver(setting_changed)
def _policy_changed(*, setting: str, **kwargs: Any) -> None:
    """A test's override_settings of a policy: the headers built again from it."""
    global _built
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _built = None


class _Nonce(CheckableLazyObject):
    """django-csp's lazy nonce, made without LazyObject's __setattr__ (half the cost of
    making one, on every request): the same two attributes, set straight."""

    def __init__(self, make: Any) -> None:
        object.__setattr__(self, "_setupfunc", make)
        object.__setattr__(self, "_wrapped", empty)


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, but the header of a response with no policy of its own is
    built once per settings (django-csp builds both headers on every response, about a
    tenth of a bare request). Same headers, same exemptions, same nonce guard. Called
    directly, without MiddlewareMixin's dispatch (synchronous only: Django adapts it under
    ASGI)."""

    async_capable = False

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        self.process_request(request)
        return self.process_response(request, self.get_response(request))

    def process_request(self, request: HttpRequest) -> None:
        request.csp_nonce = _Nonce(partial(self._make_nonce, request))  # type: ignore[attr-defined]

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        own = any(getattr(response, name, None) is not None for name in _PER_RESPONSE)
        if own or getattr(request, "_csp_nonce", None) is not None:
            return super().process_response(request, response)
        if response.status_code in (500, 404) and settings.DEBUG:
            return response  # Django's debug pages, as django-csp leaves them
        path = request.path_info
        for header, value, excluded, exempt in _headers().headers:
            if (
                value
                and header not in response
                and getattr(response, exempt, False) is False
                and not path.startswith(excluded)
            ):
                response[header] = value
        request.csp_nonce = _NONCE_USED_UP  # type: ignore[attr-defined]
        return response


class SecurityHeadersMiddleware(ContentSecurityPolicyMiddleware):
    """The Permissions-Policy and the Content-Security-Policy in one layer of the stack
    (each layer costs a call and Django's exception wrapper): the Permissions-Policy
    (unless the view set one), then the CSP as ContentSecurityPolicyMiddleware adds it.
    A response that set no policy, exemption or nonce of its own (nearly all) gets the
    headers it lacks written straight into Django's header store, their values checked
    once when built: through response[...] each header is checked and encoded again on
    every response, and the checks for a response's own policy cost as much again."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        self.process_request(request)
        response = self.get_response(request)
        store = store_of(response)
        if (
            store is None
            or not response.__dict__.keys().isdisjoint(_OWN)
            or getattr(request, "_csp_nonce", None) is not None
        ):
            response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
            return self.process_response(request, response)
        store.setdefault(*_PERMISSIONS)
        if not (response.status_code in (500, 404) and settings.DEBUG):
            path = request.path_info
            for lowered, item, excluded in _headers().plain:
                if lowered not in store and not path.startswith(excluded):
                    store[lowered] = item
            request.csp_nonce = _NONCE_USED_UP  # type: ignore[attr-defined]
        return response


# What request.csp_nonce is once the header is written, as django-csp sets it: one for
# all requests, as it never holds a value (reading it raises CSPNonceError).
_NONCE_USED_UP = CheckableLazyObject(CSPMiddleware._csp_nonce_post_response)
