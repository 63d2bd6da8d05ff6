"""E-mail each user who asked for it (the account page) their unread replies since the last
digest: a job to schedule (cron, a systemd timer), as check_votes is.

Each user's digest is sent, then marked sent (inbox_state's `digest`): a failure between
the two sends that digest again next time, never loses one. A reply read on the site
before the job runs is not sent. A user with no address, or inactive, gets none.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import translation
from django.utils.translation import gettext, ngettext

from articles import conf
from articles.http.responses import dependency_error
from articles.models import Profile
from articles.store import people, selectors, services
from articles.types import InboxReply
from articles.urlcache import url_for

logger = logging.getLogger(__name__)

# Replies an e-mail lists at most; it says how many more wait in the inbox.
LIMIT = 50
# How much of a reply's text an e-mail quotes.
QUOTE = 300


class Command(BaseCommand):
    help = (
        "E-mail every user who turned the digest on their unread replies since their last "
        "digest (schedule it, e.g. daily). Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            required=True,
            help="the site's address for the links, e.g. https://news.example.org",
        )
        parser.add_argument(
            "--limit", type=int, default=LIMIT, help=f"replies an e-mail lists ({LIMIT})"
        )

    def handle(self, *args: Any, base_url: str, limit: int, **options: Any) -> None:
        if not base_url.startswith(("https://", "http://")):
            raise CommandError("--base-url is the site's http(s) address")
        try:
            sent, failed = self._send(base_url.rstrip("/"), max(1, limit))
        except Exception as exc:
            error = dependency_error(exc)
            if error is None:
                raise
            raise CommandError(f"{error.message} Nothing more was sent; run it again.") from exc
        self.stdout.write(f"Sent {sent} digest(s); {failed} failed.")
        if failed:
            raise CommandError(f"{failed} digest(s) not sent; they go again next run")

    def _send(self, base: str, limit: int) -> tuple[int, int]:
        sent = failed = 0
        with translation.override(settings.LANGUAGE_CODE):
            for user in _subscribers():
                address = people.email_of(user)
                if not address:
                    continue
                items, upto = selectors.inbox_digest_replies(user_id=user.pk, limit=limit)
                if not items:
                    if upto:  # only replies deleted since: nothing to send, marked passed
                        services.inbox_mark_digested(user_id=user.pk, up_to=upto)
                    continue
                unread = selectors.inbox_unread(user_id=user.pk)
                subject, body = _compose(user, items, unread, base)
                try:
                    send_mail(subject, body, None, [address])
                except Exception:
                    logger.exception("inbox digest to user %s not sent", user.pk)
                    failed += 1
                    continue
                services.inbox_mark_digested(user_id=user.pk, up_to=upto)
                sent += 1
        return sent, failed


def _subscribers() -> Any:
    User = get_user_model()
    wanted = Profile.objects.filter(inbox_digest=True).values_list("user_id", flat=True)
    return User._default_manager.filter(pk__in=wanted, is_active=True).order_by("pk").iterator()


def _compose(user: Any, items: list[InboxReply], unread: int, base: str) -> tuple[str, str]:
    """Subject and plain-text body: each reply's author, article, a quote and its link."""
    site = conf.site_name()
    subject = ngettext(
        "%(num)s new reply on %(site)s", "%(num)s new replies on %(site)s", len(items)
    ) % {"num": len(items), "site": site}
    lines = [gettext("Hello %(name)s,") % {"name": user.get_username()}, ""]
    lines.append(
        ngettext(
            "someone answered you on %(site)s:",
            "people answered you on %(site)s:",
            len(items),
        )
        % {"site": site}
    )
    for reply in items:
        c = reply.comment
        text = " ".join(c.text.split())
        quote = text if len(text) <= QUOTE else text[: QUOTE - 1] + "…"
        lines += [
            "",
            gettext("%(author)s on “%(article)s”:")
            % {"author": c.author_name, "article": c.article_title},
            f"  {quote}",
            f"  {base}{url_for('articles:comment-detail', c.article_id, c.id)}",
        ]
    lines += [
        "",
        gettext("Your inbox (%(num)s unread): %(url)s")
        % {"num": unread, "url": base + url_for("articles:inbox")},
    ]
    lines += [
        gettext("You get this because you asked for it; turn it off on your account page: %(url)s")
        % {"url": base + url_for("articles:account-settings")},
    ]
    return subject, "\n".join(lines) + "\n"
