"""A vote asked for while logged out, cast once the visitor logs in or signs up.

A logged-out vote arrow leads to the login page with `vote_on` and `direction`; the page
says why it asks ("Log in to vote up ...") and signs the intent: article id, direction,
where to come back to, a nonce, and a digest of this browser's CSRF secret, timestamped.
The login and sign-up forms carry it in a hidden field and honour it only from their own
POST (CSRF-checked), never from a GET, and only in the browser it was made for: an intent
handed to someone else fails the CSRF digest. The nonce is claimed in Redis
(services.vote_intent_cast), so an intent is cast at most once.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

import redis
from django.contrib import messages
from django.core import signing
from django.http import HttpRequest, QueryDict
from django.middleware.csrf import get_token
from django.urls import Resolver404, resolve
from django.utils.translation import gettext

from articles import conf
from articles.errors import ArticlesError
from articles.store import selectors, services
from articles.types import Article, Vote

SALT = "articles.vote-intent"
FIELD = "intent"


@dataclass(frozen=True, slots=True)
class Intent:
    token: str
    article_id: int
    direction: Vote
    back: str
    nonce: str

    @property
    def anchor(self) -> str:
        """Where to go once cast: the page the vote came from, at the article."""
        return f"{self.back.split('#')[0]}#a{self.article_id}"


def make(request: HttpRequest, *, article_id: int, direction: Vote, back: str) -> str:
    payload = {
        "a": article_id,
        "v": direction.label,
        "b": back,
        "n": secrets.token_urlsafe(16),
        "c": _csrf_digest(request),
    }
    return signing.dumps(payload, salt=SALT, compress=True)


def requested(request: HttpRequest, back: str) -> str | None:
    """A new intent for the `vote_on` and `direction` of the login page's query, if any."""
    raw_id, raw_vote = request.GET.get("vote_on", ""), request.GET.get("direction", "")
    if not raw_id.isascii() or not raw_id.isdigit() or raw_vote not in ("up", "down"):
        return None
    if not 0 < int(raw_id) < 10**18:
        return None
    get_token(request)  # a first visit has no CSRF secret yet: make it (and its cookie) now
    return make(request, article_id=int(raw_id), direction=Vote.from_label(raw_vote), back=back)


def read(request: HttpRequest, token: str | None) -> Intent | None:
    """The intent in `token` if it is ours, fresh, and made for this browser; else None."""
    if not token or len(token) > 1000:
        return None
    try:
        data = signing.loads(token, salt=SALT, max_age=conf.vote_intent_seconds())
        intent = Intent(
            token=token,
            article_id=int(data["a"]),
            direction=Vote.from_label(str(data["v"])),
            back=str(data["b"]),
            nonce=str(data["n"]),
        )
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None
    made_for, here = str(data.get("c", "")), _csrf_digest(request)
    if not made_for or not here or not secrets.compare_digest(made_for, here):
        return None
    return intent


def described(intent: Intent | None) -> Article | None:
    """The article the intent votes on, for the page that says why it asks for a log-in."""
    if intent is None:
        return None
    try:
        return selectors.article_get(article_id=intent.article_id)
    except ArticlesError:
        return None


def cast(request: HttpRequest, intent: Intent) -> str:
    """Cast the intent's vote for the user just logged in; where to go next. A vote that
    cannot be cast (voting closed, article gone, used already) is said, not raised."""
    try:
        article = services.vote_intent_cast(
            nonce=intent.nonce,
            ttl=conf.vote_intent_seconds(),
            article_id=intent.article_id,
            user_id=request.user.pk,  # type: ignore[arg-type]
            direction=intent.direction,
        )
    except ArticlesError as exc:
        messages.error(
            request, gettext("Your vote was not counted: %(why)s") % {"why": exc.message}
        )
        return intent.anchor
    except redis.RedisError:
        messages.error(request, gettext("Your vote was not counted: the store is unreachable."))
        return intent.anchor
    if article is not None:
        counted = {
            Vote.UP: gettext("Your up-vote on “%(title)s” is counted."),
            Vote.DOWN: gettext("Your down-vote on “%(title)s” is counted."),
        }
        message = counted.get(intent.direction, gettext("Your vote on “%(title)s” is withdrawn."))
        messages.success(request, message % {"title": article.title})
    return intent.anchor


def comment_vote_asked(back: str) -> str | None:
    """ "up" or "down" when a log-in or sign-up page comes back to a comment vote's offer
    (a logged-out comment arrow leads there), so the page says why it asks; else None."""
    parts = urlsplit(back)
    try:
        match = resolve(parts.path)
    except Resolver404:
        return None
    if match.url_name != "comment-vote-offer":
        return None
    direction = QueryDict(parts.query).get("direction", "")
    return direction if direction in ("up", "down") else None


def _csrf_digest(request: HttpRequest) -> str:
    # The CSRF secret of this browser (CsrfViewMiddleware put it in META); Django rotates
    # it at log-in, which is after the intent is read.
    secret = str(request.META.get("CSRF_COOKIE", ""))
    return hashlib.sha256(f"{SALT}:{secret}".encode()).hexdigest()[:24] if secret else ""
