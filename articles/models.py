"""The app's one table: what it keeps about an account beyond Django's user."""

from __future__ import annotations

from django.conf import settings
from django.db import models

ABOUT_MAX = 2000


class Profile(models.Model):
    """A user's "about" text and the look-alike key of their name (names.name_key), unique
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

    def __str__(self) -> str:
        return f"profile of user {self.user_id}"
