"""Security headers Django does not send by itself: the Permissions-Policy (the site uses no
camera, microphone, location, payment or USB, so no page nor a frame in one may ask for
them), and the Content-Security-Policy through django-csp with the header built once."""

from __future__ import annotations

from typing import Any

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase

PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"


# What a view sets on its response to change its policy (django-csp's decorators, or the
# browsable API's and the docs pages' own): such a response goes through django-csp's
# whole path, as does a request that used its nonce.
_PER_RESPONSE = tuple(
    f"_csp_{what}{ro}" for what in ("config", "update", "replace") for ro in ("", "_ro")
)


class _Built:
    """The two headers of one pair of policy settings, and their excluded path prefixes."""

    def __init__(self, policy: Any, report_only: Any) -> None:
        self.policy, self.report_only = policy, report_only
        self.headers = (
            (HEADER, build_policy(), _prefixes(policy), "_csp_exempt"),
            (
                HEADER_REPORT_ONLY,
                build_policy(report_only=True),
                _prefixes(report_only),
                "_csp_exempt_ro",
            ),
        )


def _prefixes(policy: Any) -> tuple[str, ...]:
    return tuple((policy or {}).get("EXCLUDE_URL_PREFIXES", None) or ())


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, but the header of a response with no policy of its own is
    built once per settings (django-csp builds both headers on every response, about a
    tenth of a bare request). Same headers, same exemptions, same nonce guard. Called
    directly, without MiddlewareMixin's dispatch (synchronous only: Django adapts it under
    ASGI)."""

    async_capable = False
    _built: _Built | None = None

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        self.process_request(request)
        return self.process_response(request, self.get_response(request))

    def _headers(self) -> _Built:
        policy = getattr(settings, "CONTENT_SECURITY_POLICY", None)
        report_only = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
        built = self._built
        # By identity: a test's override_settings gives new objects, a new build.
        if built is None or built.policy is not policy or built.report_only is not report_only:
            built = self._built = _Built(policy, report_only)
        return built

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        own = any(getattr(response, name, None) is not None for name in _PER_RESPONSE)
        if own or getattr(request, "_csp_nonce", None) is not None:
            return super().process_response(request, response)
        if response.status_code in (500, 404) and settings.DEBUG:
            return response  # Django's debug pages, as django-csp leaves them
        path = request.path_info
        for header, value, excluded, exempt in self._headers().headers:
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
    (unless the view set one), then the CSP as ContentSecurityPolicyMiddleware adds it."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        self.process_request(request)
        response = self.get_response(request)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return self.process_response(request, response)


# What request.csp_nonce is once the header is written, as django-csp sets it: one for
# all requests, as it never holds a value (reading it raises CSPNonceError).
_NONCE_USED_UP = CheckableLazyObject(CSPMiddleware._csp_nonce_post_response)
