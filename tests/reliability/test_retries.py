"""Every write is safe to repeat or is sent once: the client retries a command once after
a timeout, and a write whose reply came too late has already run. A proxy in front of
the real Redis holds back one script's reply past the client's socket timeout."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from articles.operations.embedded import EmbeddedRedis
from articles.store import breaker, scripts, services
from articles.types import Vote
from tests import factories
from tests.actors import staff_actor
from tests.harness import store_on

LATE = 1.5  # seconds a reply is held back: longer than the 1 s socket timeout


class LateReplyProxy:
    """Forwards a unix socket to Redis; the reply to the first command that contains
    `trigger` (a script's SHA) is held back for LATE seconds, once."""

    def __init__(self, path: Path, target: Path) -> None:
        self.path, self.target = path, target
        self.trigger = b""
        self.held = 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def hold_next(self, trigger: str) -> None:
        self.trigger = trigger.encode()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(str(self.target))
            late = threading.Event()
            threading.Thread(target=self._up, args=(client, upstream, late), daemon=True).start()
            threading.Thread(target=self._down, args=(upstream, client, late), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket, late: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if self.trigger and self.trigger in data:
                    self.trigger = b""
                    late.set()
                upstream.sendall(data)
        with contextlib.suppress(OSError):
            upstream.close()

    def _down(self, upstream: socket.socket, client: socket.socket, late: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := upstream.recv(65536):
                if late.is_set():
                    late.clear()
                    self.held += 1
                    time.sleep(LATE)
                client.sendall(data)
        with contextlib.suppress(OSError):
            client.close()

    def close(self) -> None:
        self._server.close()


@pytest.fixture
def proxy(redis_server: EmbeddedRedis, tmp_short: Path) -> Iterator[LateReplyProxy]:
    late = LateReplyProxy(tmp_short / "late.sock", redis_server.socket)
    try:
        with store_on(f"unix://{late.path}?db=0"):
            yield late
    finally:
        late.close()


def modlog(conn: redis.Redis) -> list[bytes]:
    return conn.lrange("modlog:", 0, -1)


def late_call(proxy: LateReplyProxy, script, call: Callable[[], object]) -> object:  # type: ignore[no-untyped-def]
    """Run `call` with the reply of `script` held back once; returns its result or error."""
    direct = redis.Redis(unix_socket_path=str(proxy.target))
    direct.script_load(script.script)  # so the held reply is the script's own, not NOSCRIPT
    proxy.hold_next(script.sha)
    try:
        return call()
    except Exception as exc:  # the outcome is what the test looks at
        return exc
    finally:
        assert proxy.held == 1


def post(n: int = 1, **fields) -> int:  # type: ignore[no-untyped-def]
    data = {"title": f"T{n}", "link": f"https://e.org/{n}", "poster_name": "a"} | fields
    return factories.article(1, **data).id


def test_a_group_create_whose_reply_is_late_is_sent_once_not_answered_group_exists(proxy):
    direct = redis.Redis(unix_socket_path=str(proxy.target))
    outcome = late_call(
        proxy,
        scripts.GROUP_SAVE,
        lambda: services.group_create(name="late", description="d", actor=staff_actor("mod")),
    )
    # Before: the retry ran the script again and raised GroupExists for the group it made.
    assert isinstance(outcome, redis.TimeoutError), outcome
    assert direct.hget("groups:", "late") == b"d"
    assert len(modlog(direct)) == 1


@pytest.mark.parametrize(
    ("script", "write"),
    [
        (
            scripts.DELETE,
            lambda: services.article_delete(
                article_id=1, reason="spam", actor=staff_actor("mod", pk=9)
            ),
        ),
        (scripts.GROUP_DELETE, lambda: services.group_delete(name="g", actor=staff_actor("mod"))),
        (
            scripts.GROUP_SAVE,
            lambda: services.group_update(name="g", description="x", actor=staff_actor("mod")),
        ),
        (
            scripts.EDIT,
            lambda: services.article_edit(
                article_id=1, title="New", link="https://e.org/new", actor=staff_actor("mod")
            ),
        ),
        (
            scripts.GROUPS_UPDATE,
            lambda: services.article_groups_update(
                article_id=1, remove=["g"], actor=staff_actor("mod")
            ),
        ),
    ],
    ids=["delete", "group_delete", "group_update", "edit", "groups_update"],
)
def test_a_write_not_safe_to_repeat_is_sent_once(proxy, script, write):
    """Ensure a late reply is a timeout (a 503: read and retry), never a false 404 nor a
    second moderation-log entry from the same request."""
    direct = redis.Redis(unix_socket_path=str(proxy.target))
    services.group_create(name="g", actor=staff_actor())
    post(groups=["g"])
    outcome = late_call(proxy, script, write)
    assert isinstance(outcome, redis.TimeoutError), outcome
    assert len(modlog(direct)) == 1
    # A group deletion stopped after its first step (the group gone, its name still on
    # its articles' fields) is finished by check_votes --repair, as here.
    breaker.close_all()
    services.cleanups_resume()


def test_a_vote_whose_reply_is_late_is_a_timeout_and_its_retry_is_counted_once(proxy):
    """A timeout is not re-sent by the client (articles.store.breaker): the request is a 503, and
    the user's retry of the vote (safe to repeat) changes nothing more."""
    direct = redis.Redis(unix_socket_path=str(proxy.target))
    article_id = post()
    outcome = late_call(
        proxy,
        scripts.VOTE,
        lambda: services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP),
    )
    assert isinstance(outcome, redis.TimeoutError), outcome
    assert direct.hget("article:1", "votes") == b"2"  # the first attempt ran
    breaker.close_all()  # rather than waiting out the cooldown
    article = services.article_vote(article_id=article_id, user_id=2, direction=Vote.UP)
    assert article.votes == 2
    assert direct.hget("article:1", "votes") == b"2"
    assert direct.scard("voted:1") == 2
