"""Several processes vote, switch and withdraw on the same articles at once; afterwards
every invariant of SPEC §1 holds exactly."""

from __future__ import annotations

import multiprocessing
import random
import time

from articles.operations import audit
from articles.store import keys, selectors, services
from articles.types import NewPost, Vote

WORKERS = 4
OPERATIONS = 400
ARTICLES = 3
USERS = 25


def _worker(seed: int, barrier) -> None:
    rng = random.Random(seed)
    barrier.wait()
    for _ in range(OPERATIONS):
        services.article_vote(
            article_id=rng.randint(1, ARTICLES),
            user_id=rng.randint(1, USERS),
            direction=rng.choice(list(Vote)),
        )


def test_concurrent_votes_switches_and_withdrawals_keep_every_invariant(conn, settings):
    settings.ARTICLES_GOOD_ARTICLE_VOTES = USERS // 2  # so the good index flips back and forth
    now = time.time()
    for n in range(ARTICLES):
        services.article_post(
            NewPost(user_id=1, poster_name="u1", title=f"T{n}", link=f"https://e.org/{n}", now=now)
        )
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(WORKERS)
    workers = [context.Process(target=_worker, args=(seed, barrier)) for seed in range(WORKERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0] * WORKERS

    assert audit.invariant_audit() == []
    for article_id in range(1, ARTICLES + 1):
        article = selectors.article_get(article_id=article_id)
        up = conn.smembers(keys.voted(article_id))
        down = conn.smembers(keys.voted_down(article_id))
        assert not up & down
        assert (article.votes, article.downvotes) == (len(up), len(down))
        assert article.score == now // 1 + 432 * (len(up) - len(down))
        in_good = conn.zscore(keys.GOOD, keys.article(article_id)) is not None
        assert in_good == (len(up) >= USERS // 2)
    total = sum(int(v) for v in conn.hvals(keys.STATS_VOTES))
    assert total > 0
