"""The app's tables: what it keeps about an account beyond Django's user, and API tokens."""

from __future__ import annotations

from django.conf import settings
from django.db import models

ABOUT_MAX = 2000


class Profile(models.Model):
    """A user's "about" text, whether they want an e-mail digest of their unread replies
    (off by default), and the look-alike key of their name (names.name_key), unique
    so that two sign-ups cannot take look-alike names even when they race. A user made
    before this table, or whose key another account holds, has no key (null)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="articles_profile",
    )
    about = models.TextField(blank=True, max_length=ABOUT_MAX)
    name_key = models.CharField(max_length=600, unique=True, null=True, blank=True)
    # Opted in on the account page; `manage.py inbox_digest` e-mails the unread replies.
    inbox_digest = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"profile of user {self.user_id}"


class ApiToken(models.Model):
    """An API token, stored as the SHA-256 of its key (as django-rest-knox does): a copy of
    the database gives no usable token. The key is shown once, when it is made
    (articles/api/tokens.py); `prefix`, its first characters, only tells tokens apart."""

    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="articles_api_tokens"
    )
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"API token {self.prefix}… of user {self.user_id}"
