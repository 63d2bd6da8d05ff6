"""Start-up checks: say loudly when the Redis we run on could lose or evict our data."""

from __future__ import annotations

import logging
from typing import Any

import redis
from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from articles import conf
from articles.operations import embedded
from articles.store import logins, ratelimits, replicas, selectors

logger = logging.getLogger(__name__)


@register(Tags.compatibility)
def check_configuration(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """What the app needs from its host, said as messages with a hint, never a traceback."""
    messages: list[CheckMessage] = []
    # API tokens are the app's own (articles.models.ApiToken): rest_framework.authtoken is
    # no longer needed, only kept by a host whose old plain tokens migration 0002 moves.
    for app, why in (("rest_framework", "the REST API (articles.api.urls)"),):
        if not apps.is_installed(app):
            messages.append(
                Error(
                    f"{app} is not in INSTALLED_APPS; {why} needs it.",
                    hint=f'Add "{app}" to INSTALLED_APPS.',
                    id="articles.E004",
                )
            )
    if not (apps.is_installed("drf_spectacular") and apps.is_installed("drf_spectacular_sidecar")):
        messages.append(
            Warning(
                "The API's interactive docs (docs/ and redoc/ under the API) need "
                "drf_spectacular and drf_spectacular_sidecar in INSTALLED_APPS; "
                "they answer 404 until then (the schema itself works).",
                hint='Add "drf_spectacular" and "drf_spectacular_sidecar" to INSTALLED_APPS.',
                id="articles.W004",
            )
        )
    if logins.BACKEND not in getattr(settings, "AUTHENTICATION_BACKENDS", ()):
        messages.append(
            Warning(
                "Failed logins are limited only on the app's own login page and token "
                "endpoint: any other login (the admin's) can guess passwords unchecked.",
                hint=f'Put "{logins.BACKEND}" first in AUTHENTICATION_BACKENDS.',
                id="articles.W005",
            )
        )
    return (
        messages
        + _rate_limit_settings()
        + _replica_settings()
        + _archive_settings()
        + _redis_configuration()
    )


def _archive_settings() -> list[CheckMessage]:
    """An archived article takes no more votes or comments, so archiving one still open
    for either would close it early."""
    after = conf.get("ARCHIVE_AFTER")
    if not after:
        return []
    window, comments = conf.window(), conf.comment_open_seconds()
    if isinstance(after, bool) or not isinstance(after, int) or after < max(window, comments):
        return [
            Error(
                f"ARTICLES_ARCHIVE_AFTER is {after!r}: an archived article takes no votes "
                "or comments, so it must be a whole number of seconds no shorter than the "
                f"voting window ({window} s) and the comment window ({comments} s).",
                hint=f"Set ARTICLES_ARCHIVE_AFTER to {max(window, comments)} or more, "
                "or None to keep every article in Redis.",
                id="articles.E007",
            )
        ]
    return []


def _replica_settings() -> list[CheckMessage]:
    """Replica reads need the middleware that tells which requests may take them, and a
    writer's primary reads must outlast the lag a replica may have."""
    if not replicas.in_use():
        return []
    messages: list[CheckMessage] = []
    middleware = "articles.http.middleware.ReplicaReadsMiddleware"
    if middleware not in getattr(settings, "MIDDLEWARE", ()):
        messages.append(
            Warning(
                "ARTICLES_REDIS_READ_URLS is set, but every read goes to the primary: no "
                "middleware says which requests may read from a replica.",
                hint=f'Add "{middleware}" to MIDDLEWARE.',
                id="articles.W007",
            )
        )
    lag, own = conf.replica_max_lag_seconds(), conf.read_your_writes_seconds()
    if own <= lag + replicas.CHECK_SECONDS:
        messages.append(
            Error(
                f"ARTICLES_READ_YOUR_WRITES_SECONDS ({own}) must exceed "
                f"ARTICLES_REPLICA_MAX_LAG_SECONDS ({lag}) + {replicas.CHECK_SECONDS:g} s: "
                "else a writer may read a replica that lacks their own write.",
                hint=f"Set ARTICLES_READ_YOUR_WRITES_SECONDS to {int(lag + 3)} or more.",
                id="articles.E006",
            )
        )
    return messages


def _rate_limit_settings() -> list[CheckMessage]:
    """A misspelt rule name in ARTICLES_RATE_LIMITS would be a limit on nothing; the old
    ARTICLES_API_RATE_LIMITS still works, said once at start rather than per request."""
    messages: list[CheckMessage] = []
    names = ", ".join(sorted(ratelimits.DEFAULT_RULES))
    for rule, value in dict(conf.get("RATE_LIMITS")).items():
        if rule not in ratelimits.DEFAULT_RULES:
            messages.append(
                Error(
                    f"ARTICLES_RATE_LIMITS names no rule {rule!r}: it would limit nothing.",
                    hint=f"The rules are: {names}.",
                    id="articles.E005",
                )
            )
        elif value is not None and not _is_window(value):
            messages.append(
                Error(
                    f"ARTICLES_RATE_LIMITS[{rule!r}] is {value!r}, not (requests, seconds).",
                    hint="Give two integers, requests (0 refuses all) and seconds (over 0), "
                    "or None to turn the rule off.",
                    id="articles.E005",
                )
            )
    old = conf.get("API_RATE_LIMITS")
    if old:
        renamed = {conf.API_SCOPES.get(scope, scope): value for scope, value in old.items()}
        messages.append(
            Warning(
                "ARTICLES_API_RATE_LIMITS is deprecated (still read, its scopes renamed).",
                hint=f"Set ARTICLES_RATE_LIMITS = {renamed!r} instead.",
                id="articles.W006",
            )
        )
    return messages


def _is_window(value: object) -> bool:
    if not isinstance(value, tuple | list) or len(value) != 2:
        return False
    if any(not isinstance(v, int) or isinstance(v, bool) for v in value):
        return False
    return bool(value[0] >= 0 and value[1] > 0)


def _redis_configuration() -> list[CheckMessage]:
    alias = conf.redis_alias()
    if alias and alias not in getattr(settings, "CACHES", {}):
        return [
            Error(
                f"ARTICLES_REDIS_ALIAS names the cache alias {alias!r}, which CACHES lacks.",
                hint=f"Add a django-redis entry CACHES[{alias!r}], or drop "
                "ARTICLES_REDIS_ALIAS and set ARTICLES_REDIS_URL.",
                id="articles.E003",
            )
        ]
    if not alias and not conf.redis_url():
        return [
            Error(
                "The articles app has no Redis to keep its articles in.",
                hint='Set ARTICLES_REDIS_URL = "redis://localhost:6379/0" (or REDIS_URL).',
                id="articles.E002",
            )
        ]
    return []


@register(Tags.caches, deploy=False)
def check_redis(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if _redis_configuration():
        return []  # check_configuration says what to set
    try:
        status = selectors.store_status()
        found = selectors.store_encodings(str(status.get("redis_version") or ""))
    except redis.RedisError as exc:
        hint = (
            "Start it (`manage.py redis start` for the embedded server), or set ARTICLES_REDIS_URL."
        )
        if conf.embedded_redis_dir() is not None:
            # Not the start command when it has no server to start (the extra not installed).
            hint = embedded.missing_server() or hint
        return [
            Warning(
                f"Redis is unreachable ({exc}); pages will answer 503 until it is up.",
                hint=hint,
                id="articles.W001",
            )
        ]
    return redis_status_messages(status) + encoding_messages(found, status.get("redis_version"))


def encoding_messages(found: dict[str, int] | None, version: object) -> list[CheckMessage]:
    """articles.W008 where the server keeps small hashes, sets and sorted sets compact only
    to smaller sizes than the store is laid out for (embedded.COMPACT_ENCODINGS): nothing
    is wrong, but the link and search indexes, the voter sets and the small rankings take
    several times the memory.
    Nothing where CONFIG GET is refused: what cannot be read is not reported."""
    wanted = embedded.compact_encodings(str(version or ""))
    have = found or {}
    short = {name: have[name] for name in wanted if have.get(name, wanted[name]) < wanted[name]}
    if not short:
        return []
    shown = ", ".join(f"{name} {value}" for name, value in short.items())
    lines = "; ".join(f"`{name} {wanted[name]}`" for name in short)
    return [
        Warning(
            f"Redis keeps small hashes, sets and sorted sets compact only to smaller sizes "
            f"({shown}) than the articles store is laid out for: its duplicate-link index, "
            "search index, voter sets and small rankings take several times the memory "
            "(about 71 B a link instead of 18, 52 B a search entry instead of 4, 52 B a vote "
            "instead of 15, 98 B a ranking entry instead of 13).",
            hint=f"Set {lines} in redis.conf or with CONFIG SET (docs/install.md).",
            id="articles.W008",
        )
    ]


def redis_status_messages(status: dict[str, object]) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    if status.get("cluster_enabled"):
        messages.append(
            Error(
                "Redis Cluster is not supported: a vote changes article:<id>, voted:<id>, "
                "score: and time: in one atomic script, which Cluster refuses (CROSSSLOT).",
                hint="Point ARTICLES_REDIS_URL at a single primary, or use Sentinel for failover.",
                id="articles.E001",
            )
        )
    if not status.get("aof_enabled"):
        messages.append(
            Warning(
                "Redis persistence is OFF (appendonly no): a restart loses every vote since "
                "the last snapshot.",
                hint="Set `appendonly yes` and `appendfsync everysec` on the server.",
                id="articles.W002",
            )
        )
    policy = status.get("maxmemory_policy")
    if policy != "noeviction":
        messages.append(
            Warning(
                f"Redis evicts keys under memory pressure (maxmemory-policy {policy}): an "
                "evicted voter set would let users vote twice.",
                hint="Set `maxmemory-policy noeviction`.",
                id="articles.W003",
            )
        )
    return messages


# --- never serve on Redis Cluster ---------------------------------------------------

CLUSTER_REFUSED = (
    "The site refuses to start: its Redis is a Redis Cluster, which is not "
    "supported (a vote changes article:<id>, voted:<id>, score: and time: in one atomic "
    "script, and Cluster refuses scripts across slots: CROSSSLOT). Point the Redis URL at a "
    "single primary, or use Sentinel for failover."
)


@register(Tags.caches, deploy=False)
def check_redis_cluster(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """articles.E001 also when the keyed reads of check_redis fail on a cluster node (MOVED,
    CLUSTERDOWN), where check_redis can only say "unreachable"."""
    if _redis_configuration():
        return []
    try:
        if not selectors.store_topology()["cluster_enabled"]:
            return []
    except redis.RedisError:
        return []  # unreachable: check_redis says so
    try:
        selectors.store_status()
    except redis.RedisError:
        return redis_status_messages(
            {"cluster_enabled": True, "aof_enabled": True, "maxmemory_policy": "noeviction"}
        )
    return []  # check_redis reported articles.E001 already


def refuse_unsupported_redis() -> None:
    """Called by votesite/wsgi.py and asgi.py: raise ImproperlyConfigured on a Redis Cluster.
    An unreachable Redis is no reason to refuse: pages answer 503 until it is up."""
    try:
        topology = selectors.store_topology()
    except redis.RedisError:
        return
    if topology["cluster_enabled"]:
        raise ImproperlyConfigured(CLUSTER_REFUSED)


def log_redis_warnings() -> None:
    """Called by votesite/wsgi.py and asgi.py: log, at start-up of every serving process
    (gunicorn's workers too, which run no system checks), a line for each thing about the
    Redis that puts votes at risk: persistence off (articles.W002), eviction (articles.W003)."""
    try:
        messages = redis_status_messages(selectors.store_status())
    except redis.RedisError:
        logger.warning("Redis is unreachable at start-up; pages answer 503 until it is up.")
        return
    for message in messages:
        if message.id in ("articles.W002", "articles.W003"):
            logger.warning("%s (%s) %s", message.msg, message.id, message.hint)
