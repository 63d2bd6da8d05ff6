"""Several processes vote, switch and withdraw on the same articles at once; afterwards
every invariant of SPEC §1 holds exactly."""

from __future__ import annotations

import random
import time

from articles.operations import audit
from articles.store import keys, selectors, services
from articles.types import Vote
from tests import factories
from tests.harness import run_together

WORKERS = 4
OPERATIONS = 400
ARTICLES = 3
USERS = 25


def _worker(seed: int) -> None:
    rng = random.Random(seed)
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
        factories.article(1, f"T{n}", f"https://e.org/{n}", now=now)
    run_together(_worker, WORKERS)

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
    # Every standing vote but each poster's own was cast (counted) once at least; no
    # operation counts more than one.
    standing = sum(
        conn.scard(keys.voted(n)) + conn.scard(keys.voted_down(n)) for n in range(1, ARTICLES + 1)
    )
    total = sum(int(v) for v in conn.hvals(keys.STATS_VOTES))
    assert max(standing - ARTICLES, 1) <= total <= WORKERS * OPERATIONS
