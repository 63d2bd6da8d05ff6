"""Every password check under the failed-login limits (ratelimits.LOGIN_RULES: per account
and per address), wherever it is made: the login page, the token endpoint, the admin's
login, the password change page, account deletion, a host project's own login.

`password_check()` is the one way the app checks a password: a ratelimits.check() of the
failure rules, so the attempt is counted before the password is looked at and given back
(ratelimits.refund) when it was right, and:

- while the account or the address is locked, even the right password is refused
  (RateLimited: 429 with Retry-After and the wait in words), and no hash is computed;
- concurrent guesses cannot slip past the limit between the check and the count;
- a limiter that cannot count (Redis full or down) refuses the attempt (503): a password
  is never checked uncounted.

Logins through `django.contrib.auth.authenticate()` that the app does not make itself (a
host project's form, DRF's own token view) are counted by `LoginLimitBackend`, first in
AUTHENTICATION_BACKENDS, and given back when `login()` follows (user_logged_in); a
success without `login()` stays counted as a failure. While locked, the backend raises
LoginLocked, so the host's form says when to try again. Checks without a request
(`Client.login`, the shell) or without a password (SSO, a remote user) are neither
limited nor counted: there is no address, or no password to guess.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in
from django.core.exceptions import ValidationError
from django.dispatch import receiver
from rest_framework.exceptions import APIException

from articles.errors import RateLimited
from articles.store import ratelimits

BACKEND = "articles.store.logins.LoginLimitBackend"
# On the HttpRequest: the attempt of the password_check() running, and the last attempt
# LoginLimitBackend counted (given back if login() follows).
_CHECKING = "articles_login_checking"
_PENDING = "articles_login_attempt"
T = TypeVar("T")
logger = logging.getLogger(__name__)


def password_check(request: Any, username: str, check: Callable[[], T]) -> T:
    """Run `check` (which checks the password of account `username`) as one counted
    attempt: raises RateLimited while the account or the caller's address is locked, and
    the store's error when the attempt cannot be counted, both before `check` runs. A
    truthy result is a right password: its attempt is given back. A falsy result or an
    exception leaves it counted as a failure."""
    attempt = ratelimits.check(request, *ratelimits.LOGIN_RULES, account=username)
    http = _http(request)
    setattr(http, _CHECKING, attempt)  # LoginLimitBackend: counted already
    try:
        result = check()
    finally:
        setattr(http, _CHECKING, None)
    if result:
        _refund(attempt)
    return result


def form_password_check(form: Any, request: Any, user: Any, password: str, wrong: str) -> None:
    """password_check() for a form's password field: ValidationError `wrong` for a wrong
    password; while locked, the wait in words, and `form.refused` set to the RateLimited
    (form_response() then answers 429 with Retry-After)."""
    try:
        right = password_check(request, user.get_username(), lambda: user.check_password(password))
    except RateLimited as exc:
        form.refused = exc
        raise ValidationError(exc.message, code="rate_limited") from None
    if not right:
        raise ValidationError(wrong, code="password_incorrect")


def _http(request: Any) -> Any:
    return getattr(request, "_request", request)  # DRF's Request wraps Django's


def _refund(attempt: ratelimits.Checked) -> None:
    """Give back the attempt of a right password. If the store cannot take it back, it
    stays counted: one failure too many, never one too few."""
    try:
        ratelimits.refund(attempt)
    except redis.RedisError as exc:
        logger.warning("a right password's login attempt stays counted: %s", exc)


def _username(credentials: dict[str, Any]) -> str:
    field = get_user_model().USERNAME_FIELD
    return str(credentials.get(field) or credentials.get("username") or "")


class LoginLocked(APIException, ValidationError):
    """A password login refused by the lock, said with the wait to whichever caller of
    authenticate() it reaches: a form's clean() (Django's AuthenticationForm, the admin's,
    allauth's) shows it as the form's error; DRF (BasicAuthentication) answers 429 with
    Retry-After; a serializer's validate() answers 400. Code calling authenticate() outside
    a form or DRF sees a ValidationError, not None."""

    status_code = 429
    default_code = "rate_limited"

    def __init__(self, refused: RateLimited) -> None:
        ValidationError.__init__(self, refused.message, code="rate_limited")
        APIException.__init__(self, refused.message, code="rate_limited")
        self.wait = refused.retry_after


class LoginLimitBackend(ModelBackend):
    """Authenticates no one; counts the attempt of every password authenticate() the
    app's own password_check() has not counted, and refuses it while the account or
    address is locked (LoginLocked: the form says when to try again).

    It loads users as ModelBackend does (get_user), because Django names the first backend
    in a session that `login()` or `force_login()` opens without naming one."""

    def authenticate(
        self,
        request: Any,
        username: str | None = None,
        password: str | None = None,
        **credentials: Any,
    ) -> None:
        if request is None or password is None:
            return None
        name = username or _username(credentials)
        checking = getattr(_http(request), _CHECKING, None)
        if checking is not None and checking.is_for(name):
            return None  # counted by the password_check() this runs within
        try:
            # Django's request: DRF's would authenticate again for its `user` (Basic auth
            # calls authenticate() from inside that), over and over.
            attempt = ratelimits.check(_http(request), *ratelimits.LOGIN_RULES, account=name)
            setattr(_http(request), _PENDING, attempt)
        except RateLimited as exc:
            raise LoginLocked(exc) from None
        return None


@receiver(user_logged_in, dispatch_uid="articles.store.logins.refund")
def _logged_in(sender: Any, request: Any = None, **kw: Any) -> None:
    """A login the backend counted succeeded: its attempt is given back."""
    attempt = getattr(_http(request), _PENDING, None) if request is not None else None
    if attempt is not None:
        setattr(_http(request), _PENDING, None)
        _refund(attempt)


class AdminLoginForm(AdminAuthenticationForm):
    """The admin's login form, checking under password_check() and saying why a locked
    login is refused (else the admin says only that the name or password is wrong). Set as
    `admin.site.login_form`."""

    def clean(self) -> dict[str, Any]:
        if self.request is None:
            return super().clean()
        cleaned: dict[str, Any] = {}

        def check() -> bool:  # a wrong password raises the admin's own ValidationError
            cleaned.update(super(AdminLoginForm, self).clean())
            return True

        try:
            password_check(self.request, str(self.data.get("username", "")), check)
        except RateLimited as exc:
            raise ValidationError(exc.message, code="rate_limited") from None
        return cleaned
