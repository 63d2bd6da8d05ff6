"""Failed logins limited wherever Django authenticates, not only on the app's own forms.

The app's login page and token endpoint check the limits first themselves, to answer 429
with Retry-After and the wait in words. Every other way in (the admin's login, a host
project's own form, DRF's) goes through `django.contrib.auth.authenticate()`, so:

- each failure is counted by a `user_login_failed` receiver, once, whichever path failed;
- `LoginLimitBackend`, first in AUTHENTICATION_BACKENDS, refuses every attempt while the
  account or the address is locked (PermissionDenied stops the backends after it), so the
  right password waits too;
- `AdminLoginForm` gives the admin's login page the same message as the app's.

Logins without a request (`Client.login`, the shell) are neither limited nor counted:
there is no address to count them against.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_login_failed
from django.core.exceptions import PermissionDenied, ValidationError
from django.dispatch import receiver

from articles import ratelimits
from articles.errors import RateLimited

BACKEND = "articles.logins.LoginLimitBackend"


def _username(credentials: dict[str, Any]) -> str:
    field = get_user_model().USERNAME_FIELD
    return str(credentials.get(field) or credentials.get("username") or "")


class LoginLimitBackend(ModelBackend):
    """Authenticates no one; refuses everyone while their account or address is locked.

    It loads users as ModelBackend does (get_user), because Django names the first backend
    in a session that `login()` or `force_login()` opens without naming one."""

    def authenticate(
        self,
        request: Any,
        username: str | None = None,
        password: str | None = None,
        **credentials: Any,
    ) -> None:
        if request is None:
            return None
        try:
            ratelimits.login_allowed(request, username or _username(credentials))
        except RateLimited:
            raise PermissionDenied from None
        return None


@receiver(user_login_failed, dispatch_uid="articles.logins.count_failure")
def _count_failure(
    sender: Any, credentials: dict[str, Any], request: Any = None, **kw: Any
) -> None:
    if request is not None:
        ratelimits.login_failed(request, _username(credentials))


class AdminLoginForm(AdminAuthenticationForm):
    """The admin's login form, saying why a locked login is refused (else the admin says
    only that the name or password is wrong). Set as `admin.site.login_form`."""

    def clean(self) -> dict[str, Any]:
        if self.request is not None:
            try:
                ratelimits.login_allowed(self.request, str(self.data.get("username", "")))
            except RateLimited as exc:
                raise ValidationError(exc.message, code="rate_limited") from None
        return super().clean()
