"""Accounts as the app sees them: each user's Profile kept beside it, and a deleted
account's traces taken out of the store (services.user_forget) whatever deletes it: the
account page, the admin or the shell.

A user saved with `strict_name = True` (sign-up) must have a name key of its own: a
look-alike of another account's name makes the save fail with IntegrityError, inside the
sign-up's transaction. Other saves (admin, createsuperuser) keep the key only when it is
free, and so do users made in bulk (load_demo), given theirs by bulk_profiles.

Each user's credential epoch (keys.credential_epoch) is the time their credentials were
last revoked: a logout, any save of the user (a password change or reset, deactivation),
its deletion, or an API token deleted (store.tokens). A process's kept credentials
(articles.kept) are honoured only if read after it. It is stamped at once and again when
the transaction commits, so a process that reads the database before the commit cannot
keep what the commit revokes.

A user page shows an account as a `Person` kept in each process (articles.caches "people",
TTL: ARTICLES_PEOPLE_SECONDS, 2 s, at most MAX_PEOPLE accounts; dropped in the process by
any save or deletion of an account or a profile there), read fresh for its owner.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.db.models.signals import post_delete, post_save

from articles import conf, names
from articles.caches import Cache, Kind
from articles.errors import ArticlesError
from articles.models import Profile
from articles.store import keys, selectors, services
from articles.store.connection import get_connection

logger = logging.getLogger(__name__)


# A user's relation to its Profile: select_related(PROFILE) reads both in one query.
PROFILE = "articles_profile"


def profile_of(user: Any) -> Profile:
    """The user's Profile; an empty one (not saved) for a user made before the table. Read
    with the user, no query of its own, when the user was read with select_related(PROFILE)
    (a user page: one query, not two); else read now, never from an object kept earlier."""
    try:
        if Profile._meta.get_field("user").remote_field.is_cached(user):
            return getattr(user, PROFILE)
        return Profile.objects.get(user_id=user.pk)
    except Profile.DoesNotExist:
        return Profile(user_id=user.pk)


@dataclass(frozen=True, slots=True)
class Person:
    """An account as its public pages show it: its number, name, date joined and "about"."""

    pk: int
    username: str
    date_joined: datetime | None
    about: str

    def get_username(self) -> str:
        return self.username

    @classmethod
    def of(cls, user: Any) -> Person:
        about = profile_of(user).about
        return cls(user.pk, user.get_username(), getattr(user, "date_joined", None), about)


# People by name, kept ARTICLES_PEOPLE_SECONDS (TTL, 2 s): a user page read the account and
# its profile on every request, a third of its CPU, for what changes as rarely as an
# "about" (an anonymous user page is 2 s late already). Dropped in this process when an
# account or a profile is saved or deleted here.
MAX_PEOPLE = 4096
_people: Cache[str, Person] = Cache("people", Kind.TTL, entries=MAX_PEOPLE)


def person_named(name: str, *, fresh: bool = False) -> Person | None:
    """The account whose login (USERNAME_FIELD, what get_username() answers) is `name`,
    as its pages show it: read at most ARTICLES_PEOPLE_SECONDS ago unless `fresh` (its
    owner sees their own page as it is now). None when there is none (not kept: a new
    account's page shows at once)."""
    return people_named([name], fresh=fresh).get(name)


def people_named(names: Sequence[str], *, fresh: bool = False) -> dict[str, Person]:
    """The accounts named `names` that exist, by name, as person_named reads each: those
    not kept are read in one query."""
    seconds = conf.people_seconds()
    kept = not fresh and seconds > 0
    found = {name: person for name in names if kept and (person := _people.get(name))}
    missing = [name for name in names if name not in found]
    if missing:
        User = get_user_model()
        users = User._default_manager.select_related(PROFILE)
        for user in users.filter(**{f"{User.USERNAME_FIELD}__in": missing}):
            person = found[user.get_username()] = Person.of(user)
            if seconds > 0:
                _people.put(person.username, person, expires=time.monotonic() + seconds)
    return found


def _people_changed(**kwargs: Any) -> None:
    _people.clear()


def bulk_profiles(users: Iterable[Any]) -> None:
    """Profiles for users made with bulk_create, which sends no post_save: each with its
    name key when no other account holds it, as any save but a sign-up's. One query for
    the keys already held, one insert; a user who has a profile keeps it."""
    keyed = [(user.pk, names.name_key(user.get_username())) for user in users]
    held = Profile.objects.filter(name_key__in=[key for _, key in keyed])
    taken = set(held.values_list("name_key", flat=True))
    profiles = []
    for pk, key in keyed:
        profiles.append(Profile(user_id=pk, name_key=None if key in taken else key))
        taken.add(key)
    Profile.objects.bulk_create(profiles, ignore_conflicts=True)


def name_taken(username: str) -> bool:
    """Does another account's name look like `username`?"""
    return Profile.objects.filter(name_key=names.name_key(username)).exists()


def accounts_named(
    names: Iterable[str], ids: Iterable[int]
) -> tuple[dict[str, Any], dict[int, Any]]:
    """The accounts that still exist among `names` and `ids` (one query): a page of the
    moderation log links the people it names to theirs."""
    User = get_user_model()
    field = User.USERNAME_FIELD
    wanted, pks = set(names), set(ids)
    if not wanted and not pks:
        return {}, {}
    found = list(User.objects.filter(Q(**{f"{field}__in": wanted}) | Q(pk__in=pks)))
    by_name = {u.get_username(): u for u in found if u.get_username() in wanted}
    return by_name, {u.pk: u for u in found if u.pk in pks}


def email_field() -> str | None:
    """The user model's e-mail field (EMAIL_FIELD) when it has one apart from its login:
    the address the account page edits and password resets go to."""
    User = get_user_model()
    name = User.get_email_field_name()
    has = any(field.name == name for field in User._meta.get_fields())
    return name if has and name != User.USERNAME_FIELD else None


def email_of(user: Any) -> str:
    """The user's address for the account page: "" when the model keeps none apart."""
    name = email_field()
    return str(getattr(user, name, "") or "") if name else ""


def account_update(
    *, user: Any, about: str, email: str | None = None, inbox_digest: bool = False
) -> None:
    """Save a user's e-mail address (None: the model has none to edit), "about" text and
    choice of an e-mail digest of unread replies, in one transaction."""
    field = email_field()
    with transaction.atomic():
        if field and email is not None and getattr(user, field, None) != email:
            setattr(user, field, email)
            user.save(update_fields=[field])
        Profile.objects.update_or_create(
            user_id=user.pk, defaults={"about": about, "inbox_digest": inbox_digest}
        )


def account_delete(*, user: Any) -> None:
    """Delete the account; the post_delete signal removes what names it from the store
    (services.user_forget): its queueing is in the same transaction, so a Redis outage
    leaves the account as it was."""
    with transaction.atomic():
        user.delete()


def _user_saved(sender: Any, instance: Any, created: bool, raw: bool = False, **kw: Any) -> None:
    if raw:
        return  # loaddata: the fixture brings its own profiles
    fields = kw.get("update_fields")
    if not created and fields is not None and get_user_model().USERNAME_FIELD not in fields:
        return  # a log-in's last_login, a password: the name is unchanged
    key = names.name_key(instance.get_username())
    if getattr(instance, "strict_name", False):
        Profile.objects.update_or_create(user_id=instance.pk, defaults={"name_key": key})
        return
    try:
        with transaction.atomic():
            Profile.objects.update_or_create(user_id=instance.pk, defaults={"name_key": key})
    except IntegrityError:
        Profile.objects.update_or_create(user_id=instance.pk, defaults={"name_key": None})


def forget_pending() -> int:
    """Finish user_forget for each account queued in the store whose deletion committed
    (check_votes --repair runs it); a queued account that still exists had its deletion
    rolled back and is dropped from the queue. Returns how many were finished."""
    pending = services.user_forget_pending()
    if not pending:
        return 0
    live = set(get_user_model().objects.filter(pk__in=pending).values_list("pk", flat=True))
    for pk in sorted(pending):
        if pk in live:
            services.user_forget_cancel(user_id=pk)
        else:
            services.user_forget(user_id=pk)
    return len(pending) - len(live)


def _user_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    # Inside the deletion's transaction: if Redis cannot take the first, small step (the
    # queue), the account stays; the bounded steps after it finish here, or later.
    services.user_forget_begin(user_id=instance.pk, name=instance.get_username())
    services.user_forget_or_leave(user_id=instance.pk)


def credential_epoch(user_id: int) -> float:
    """When the user's credentials were last revoked (0: not lately; infinity: unknown,
    Redis unreachable, so nothing kept is to be trusted). One GET."""
    try:
        stamp = get_connection().get(keys.credential_epoch(user_id))
    except (redis.RedisError, ArticlesError):
        return math.inf
    return float(stamp) if stamp else 0.0


def credential_epoch_and_unread(user_id: int) -> tuple[float, int | None]:
    """credential_epoch, and the user's unread replies read in the same call: a logged-in
    page checks its kept session and gets the header's count in one round trip. (inf,
    None) when Redis cannot answer."""
    try:
        unread, stamp = selectors.inbox_unread_and_epoch(user_id=user_id)
    except (redis.RedisError, ArticlesError):
        return math.inf, None
    return (float(stamp) if stamp else 0.0), unread


def credentials_revoked(user_id: int) -> None:
    """Stamp the user's credential epoch now, and again when the transaction commits."""
    _stamp(user_id)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: _stamp(user_id))


def _stamp(user_id: int) -> None:
    # Kept past the longest a process keeps a credential, and the clocks' slack.
    seconds = math.ceil(max(conf.token_cache_seconds(), conf.session_cache_seconds())) + 60
    try:
        get_connection().set(keys.credential_epoch(user_id), repr(time.time()), ex=seconds)
    except (redis.RedisError, ArticlesError):
        # The revocation itself (the database's) stands; kept credentials are refused
        # while Redis is away (articles.kept), and expire within their seconds
        # (ARTICLES_TOKEN_CACHE_SECONDS, ARTICLES_SESSION_CACHE_SECONDS): the bound here.
        logger.warning("credential epoch of user %s not stamped: Redis unreachable", user_id)


def _revoked(sender: Any, instance: Any = None, user: Any = None, **kwargs: Any) -> None:
    who = user if user is not None else instance
    if who is None or who.pk is None or kwargs.get("created"):
        return
    if set(kwargs.get("update_fields") or ()) == {"last_login"}:
        return  # a log-in: it revokes nothing
    credentials_revoked(who.pk)


post_save.connect(_user_saved, sender=get_user_model(), dispatch_uid="articles-profile")
post_delete.connect(_user_deleted, sender=get_user_model(), dispatch_uid="articles-forget")
post_save.connect(_revoked, sender=get_user_model(), dispatch_uid="articles-epoch-saved")
post_delete.connect(_revoked, sender=get_user_model(), dispatch_uid="articles-epoch-deleted")
user_logged_out.connect(_revoked, dispatch_uid="articles-epoch-logout")
for _model in (get_user_model(), Profile):
    post_save.connect(_people_changed, sender=_model, dispatch_uid="articles-people-saved")
    post_delete.connect(_people_changed, sender=_model, dispatch_uid="articles-people-deleted")
