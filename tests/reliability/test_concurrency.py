"""Many processes at once against the session's Redis: every write kind interleaved, a
reader checking each article it sees, and workers SIGKILLed in the middle of voting."""

from __future__ import annotations

import logging
import multiprocessing
import random
import signal
import time
from collections import Counter

import pytest

from articles.errors import ArticlesError
from articles.operations import audit
from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.types import NewPost, Order, Vote
from tests.actors import staff_actor

log = logging.getLogger("reliability")
pytestmark = pytest.mark.slow

NOW = 2_000_000_000  # in the future, so EXPIREAT of voter sets never fires during a test
GROUPS = ["red", "green", "blue", "gold"]
# fork: the children inherit the test settings (the store points at the test server);
# redis-py notices the new pid and opens fresh connections.
CTX = multiprocessing.get_context("fork")


def _worker(seed: int, ops: int, results: multiprocessing.Queue) -> None:
    rng = random.Random(seed)
    tried: Counter[str] = Counter()
    for n in range(ops):
        newest = int(get_connection().get(keys.ARTICLE_IDS) or 1)
        article_id = rng.randint(1, newest)
        user = rng.randint(1, 60)
        kind = rng.choices(
            ["vote", "switch", "withdraw", "post", "move", "delete"], [40, 20, 15, 8, 12, 5]
        )[0]
        tried[kind] += 1
        try:
            if kind == "post":
                services.article_post(
                    NewPost(
                        user_id=user,
                        poster_name=f"u{user}",
                        title=f"w{seed}-{n}",
                        text="t",
                        groups=rng.sample(GROUPS, rng.randint(0, 2)),
                        now=NOW + n,
                    )
                )
            elif kind in ("vote", "switch", "withdraw"):
                direction = {"vote": Vote.UP, "switch": Vote.DOWN, "withdraw": Vote.NONE}[kind]
                services.article_vote(
                    article_id=article_id, user_id=user, direction=direction, now=NOW + n
                )
            elif kind == "move":
                src, dst = rng.sample(GROUPS, 2)
                services.article_groups_update(
                    article_id=article_id, add=[dst], remove=[src], actor=staff_actor("mod")
                )
            else:
                services.article_delete(
                    article_id=article_id,
                    reason="spam",
                    now=NOW + n,
                    actor=staff_actor("mod", pk=0),
                )
        except ArticlesError as exc:  # not found, conflict: refused cleanly, nothing changed
            tried[f"refused:{exc.code}"] += 1
    results.put(dict(tried))


def _torn(articles) -> list[str]:
    return [
        f"article {a.id}: score {a.score} but {a.votes} up / {a.downvotes} down"
        for a in articles
        if abs(a.score - (a.time + 432 * (a.votes - a.downvotes))) > 1e-6
    ]


def _seed_store(n: int) -> None:
    for name in GROUPS:
        services.group_create(name=name, description="", actor=staff_actor("mod"))
    for i in range(n):
        services.article_post(
            NewPost(
                user_id=100 + i,
                poster_name="p",
                title=f"seed {i}",
                text="t",
                groups=[GROUPS[i % 4]],
                now=NOW,
            )
        )


def test_many_processes_mixing_every_write_keep_every_invariant_and_readers_see_no_torn_article():
    _seed_store(30)
    results: multiprocessing.Queue = CTX.Queue()
    workers = [CTX.Process(target=_worker, args=(seed, 300, results)) for seed in range(6)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    reads, torn = 0, []
    while any(w.is_alive() for w in workers) and time.monotonic() - started < 60:
        for order in Order:
            page = selectors.article_list(order=order)
            torn += _torn(page.items)
            reads += len(page.items)
        for name in GROUPS:
            page = selectors.group_article_list(name=name)
            torn += _torn(page.items)
            reads += len(page.items)
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    tried: Counter[str] = Counter()
    for _ in workers:
        tried.update(results.get(timeout=5))
    elapsed = time.monotonic() - started
    assert torn == []
    assert audit.invariant_audit(now=NOW + 1000) == []
    ops = sum(v for k, v in tried.items() if not k.startswith("refused"))
    log.info(
        f"concurrency: {ops} operations in {elapsed:.1f} s by 6 processes, "
        f"{reads} articles read and checked, {dict(tried)}"
    )
    assert tried["vote"] and tried["move"] and tried["delete"] and tried["post"]


def _hammer(seed: int, article_ids: list[int]) -> None:
    rng = random.Random(seed)
    directions = list(Vote)
    while True:
        services.article_vote(
            article_id=rng.choice(article_ids),
            user_id=rng.randint(1, 40),
            direction=rng.choice(directions),
            now=NOW + 1,
        )


def test_workers_sigkilled_in_the_middle_of_voting_leave_no_half_applied_vote():
    ids = [
        services.article_post(
            NewPost(user_id=1, poster_name="p", title=f"a{i}", text="t", now=NOW)
        ).id
        for i in range(3)
    ]
    total_kills = 0
    for round_ in range(4):
        workers = [CTX.Process(target=_hammer, args=(round_ * 10 + i, ids)) for i in range(4)]
        for worker in workers:
            worker.start()
        time.sleep(0.4 + 0.1 * round_)
        for worker in workers:
            worker.kill()  # SIGKILL, wherever it is: mid-request, mid-reply, between votes
        for worker in workers:
            worker.join(timeout=10)
            assert worker.exitcode == -signal.SIGKILL
        total_kills += len(workers)
        assert audit.invariant_audit(now=NOW + 2) == []
    conn = get_connection()
    for article_id in ids:
        article = selectors.article_get(article_id=article_id)
        assert article.votes == conn.scard(keys.voted(article_id))
        assert article.downvotes == conn.scard(keys.voted_down(article_id))
    log.info(f"sigkill: {total_kills} voting workers killed mid-stream, audit clean")
