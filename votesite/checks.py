"""votesite's own system checks: what the host project decides, not the reusable app."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks


def register() -> None:
    checks.register(mail_is_delivered)


# Backends that deliver nothing to the addressee: a reset link would land in the log.
_UNDELIVERED = {
    "django.core.mail.backends.console.EmailBackend": "printed to the log",
    "django.core.mail.backends.filebased.EmailBackend": "written to files",
    "django.core.mail.backends.locmem.EmailBackend": "kept in memory",
}


def mail_is_delivered(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Outside DEBUG, mail (password-reset links) goes to an SMTP server, or nowhere when
    EMAIL_DISABLED says so: a link printed to the log lets whoever reads it take the account,
    and a site that silently sends none leaves its users unable to reset."""
    if settings.DEBUG:
        return []
    where = _UNDELIVERED.get(settings.EMAIL_BACKEND)
    if where is not None:
        problem = f"E-mail (password-reset links) would be {where}, not sent: anyone who "
        problem += "reads it could take over the account."
    elif not settings.EMAIL_HOST and not getattr(settings, "EMAIL_DISABLED", False):
        problem = "No EMAIL_HOST: no e-mail is sent, so no one can reset a password."
    else:
        return []
    return [
        checks.Error(
            problem,
            hint="Set EMAIL_HOST (and EMAIL_HOST_USER, EMAIL_HOST_PASSWORD) to an SMTP server, "
            "or EMAIL_DISABLED=true to send no mail at all (password reset is then unavailable).",
            id="votesite.E001",
        )
    ]
