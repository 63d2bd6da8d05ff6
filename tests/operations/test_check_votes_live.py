"""check_votes on a live site: while several processes post, reply to, vote on, edit and
delete comments, vote on, post and edit articles, the audit runs again and again. Each
run must report nothing that is not wrong; a fault planted meanwhile must be reported,
and only it."""

from __future__ import annotations

import multiprocessing
import random
import time

from articles.errors import ArticlesError, InvalidInput
from articles.operations import audit
from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.types import NewPost, Vote
from tests.actors import member_actor, staff_actor

WORKERS = 3
AUDITS = 8
ARTICLES = 4
USERS = 6


def _worker(seed: int, barrier, stop) -> None:
    rng = random.Random(seed)
    conn = get_connection()
    barrier.wait()
    serial = 0
    while not stop.is_set():
        time.sleep(0.002)  # a busy site, not a flood: the audit must still finish
        user = rng.randint(1, USERS)
        article_id = rng.randint(1, ARTICLES)
        highest = int(conn.get(keys.COMMENT_IDS) or 0)
        target = rng.randint(1, highest) if highest else None
        op = rng.random()
        try:
            if op < 0.2 or target is None:
                services.comment_post(
                    article_id=article_id, user_id=user, author_name=f"u{user}", text="top"
                )
            elif op < 0.4:
                reply_to = selectors.comment_get(comment_id=target)
                services.comment_post(
                    article_id=reply_to.article_id,
                    user_id=user,
                    author_name=f"u{user}",
                    text="reply",
                    parent_id=target,
                )
            elif op < 0.6:
                services.comment_vote(comment_id=target, user_id=user, vote=rng.choice(list(Vote)))
            elif op < 0.75:
                services.article_vote(
                    article_id=article_id, user_id=user, direction=rng.choice(list(Vote))
                )
            elif op < 0.82:
                services.comment_edit(
                    comment_id=target, text=f"edit {op}", actor=member_actor(user)
                )
            elif op < 0.92:
                services.comment_delete(comment_id=target, actor=member_actor(user))
            elif op < 0.96:
                serial += 1
                services.article_edit(
                    article_id=article_id,
                    title=rng.choice(["Alpha news", "Beta story", "Gamma report"]),
                    link=f"https://e.org/{seed}/{serial}",
                    actor=staff_actor(pk=1),
                )
            else:
                serial += 1
                services.article_post(
                    NewPost(
                        user_id=user,
                        poster_name=f"u{user}",
                        title=f"Late {seed} {serial}",
                        link=f"https://late.org/{seed}/{serial}",
                    )
                )
        except (ArticlesError, InvalidInput):
            pass  # gone meanwhile, not the author, a deleted parent, a link taken


def test_audit_beside_live_writes_reports_only_real_faults(conn):
    for n in range(ARTICLES + 1):  # the last one is left alone by the writers
        services.article_post(
            NewPost(user_id=1, poster_name="u1", title=f"T{n}", link=f"https://e.org/{n}")
        )
    quiet = ARTICLES + 1
    for _ in range(3):
        services.comment_post(article_id=quiet, user_id=2, author_name="u2", text="calm")
    context = multiprocessing.get_context("fork")
    barrier, stop = context.Barrier(WORKERS + 1), context.Event()
    workers = [
        context.Process(target=_worker, args=(seed, barrier, stop)) for seed in range(WORKERS)
    ]
    for worker in workers:
        worker.start()
    try:
        barrier.wait(timeout=30)
        time.sleep(0.5)  # some comments to audit first
        found = [audit.invariant_audit() for _ in range(AUDITS)]
        # Real faults: score: of an article the writers keep voting on drifts by 1000 (the
        # votes add to it, so it stays), and by 5 the count of comments of the quiet
        # article and of one the writers keep commenting on (each post and delete moves
        # it by one, so the drift stays; its comments change between any two reads).
        conn.zincrby(keys.SCORE, 1000, keys.article(1))
        conn.hincrby(keys.article(quiet), "comments", 5)
        conn.hincrby(keys.article(1), "comments", 5)
        planted = [audit.invariant_audit() for _ in range(2)]
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0] * WORKERS
    assert int(conn.get(keys.COMMENT_IDS) or 0) > 50  # the writes really happened
    assert found == [[]] * AUDITS
    for problems in planted:
        assert sorted((p.kind, p.article_id, p.entry) for p in problems) == [
            ("comment_count", None, keys.article(1)),
            ("comment_count", None, keys.article(quiet)),
            ("score", 1, None),
        ]
