"""Several processes post, reply, vote on and delete comments of the same articles at
once; afterwards every comment invariant holds exactly (check_votes finds nothing) and
each article's `comments` is the number of its visible comments."""

from __future__ import annotations

import random
import time

from articles.errors import CommentNotFound, InvalidInput, NotAllowed
from articles.operations import audit
from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.types import Vote
from tests import factories
from tests.actors import member_actor
from tests.harness import run_together

WORKERS = 4
OPERATIONS = 300
ARTICLES = 2
USERS = 4


def _worker(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(OPERATIONS):
        user = rng.randint(1, USERS)
        highest = int(get_connection().get(keys.COMMENT_IDS) or 0)
        target = rng.randint(1, highest) if highest else None
        op = rng.random()
        try:
            if op < 0.25 or target is None:
                services.comment_post(
                    article_id=rng.randint(1, ARTICLES),
                    user_id=user,
                    author_name=f"u{user}",
                    text="top",
                )
            elif op < 0.5:
                reply_to = selectors.comment_get(comment_id=target)
                services.comment_post(
                    article_id=reply_to.article_id,
                    user_id=user,
                    author_name=f"u{user}",
                    text="reply",
                    parent_id=target,
                )
            elif op < 0.8:
                services.comment_vote(comment_id=target, user_id=user, vote=rng.choice(list(Vote)))
            else:
                services.comment_delete(comment_id=target, actor=member_actor(user))
        except (CommentNotFound, NotAllowed, InvalidInput):
            pass  # deleted meanwhile, not the author, or a reply to a deleted comment


def test_concurrent_comment_writes_keep_every_invariant(conn):
    now = time.time()
    for n in range(ARTICLES):
        factories.article(1, f"T{n}", f"https://e.org/{n}", now=now)
    run_together(_worker, WORKERS)

    assert audit.invariant_audit() == []
    visible = dict.fromkeys(range(1, ARTICLES + 1), 0)
    states = set()
    for key in conn.scan_iter(match="comment:*"):
        if key == b"comment:":
            continue
        raw = conn.hgetall(key)
        state = raw.get(b"state", b"")  # none written until deleted or removed
        states.add(state)
        if state == b"":
            visible[keys.article_id_of(raw[b"article"].decode())] += 1
    for article_id, count in visible.items():
        assert int(conn.hget(keys.article(article_id), "comments") or 0) == count
    assert sum(visible.values()) > 50 and b"deleted" in states  # the mix really happened
