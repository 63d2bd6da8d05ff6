"""Baseline A: the access pattern of *Redis in Action* chapter 1, on the same keys.

One command per round trip, HGETALL per article, and the book's non-atomic vote (its
author notes it should be a transaction). Transcribed from the book's listings 1.6-1.10
for redis-py 3+ (zincrby takes the amount before the member, hset a mapping); the
compatibility tests (tests/store/test_compat.py) run these same functions.
"""

from __future__ import annotations

import time

import redis

ONE_WEEK_IN_SECONDS = 7 * 86_400
VOTE_SCORE = 432
ARTICLES_PER_PAGE = 25


def post_article(conn: redis.Redis, user: str, title: str, link: str) -> str:
    article_id = str(conn.incr("article:"))
    voted = "voted:" + article_id
    conn.sadd(voted, user)
    conn.expire(voted, ONE_WEEK_IN_SECONDS)
    now = time.time()
    article = "article:" + article_id
    conn.hset(
        article, mapping={"title": title, "link": link, "poster": user, "time": now, "votes": 1}
    )
    conn.zadd("score:", {article: now + VOTE_SCORE})
    conn.zadd("time:", {article: now})
    return article_id


def add_remove_groups(
    conn: redis.Redis,
    article_id: str,
    to_add: tuple[str, ...] = (),
    to_remove: tuple[str, ...] = (),
) -> None:
    article = "article:" + article_id
    for group in to_add:
        conn.sadd("group:" + group, article)
    for group in to_remove:
        conn.srem("group:" + group, article)


def article_vote(conn: redis.Redis, user: str, article: str) -> None:
    cutoff = time.time() - ONE_WEEK_IN_SECONDS
    if conn.zscore("time:", article) < cutoff:
        return
    article_id = article.partition(":")[-1]
    if conn.sadd("voted:" + article_id, user):
        conn.zincrby("score:", VOTE_SCORE, article)
        conn.hincrby(article, "votes", 1)


def get_articles(conn: redis.Redis, page: int, order: str = "score:") -> list[dict]:
    start = (page - 1) * ARTICLES_PER_PAGE
    end = start + ARTICLES_PER_PAGE - 1
    ids = conn.zrevrange(order, start, end)
    articles = []
    for id in ids:
        article_data = conn.hgetall(id)
        article_data["id"] = id
        articles.append(article_data)
    return articles


def get_group_articles(conn: redis.Redis, group: str, page: int, order: str = "score:") -> list:
    key = order + group
    if not conn.exists(key):
        conn.zinterstore(key, ["group:" + group, order], aggregate="max")
        conn.expire(key, 60)
    return get_articles(conn, page, key)


def get_good_articles(conn: redis.Redis, limit: int = 50) -> list[dict]:
    """The home page the book's way: newest good articles from good:, one HGETALL each."""
    articles = []
    for id in conn.zrevrange("good:", 0, limit - 1):
        article_data = conn.hgetall(id)
        article_data["id"] = id
        articles.append(article_data)
    return articles


def get_top_articles(conn: redis.Redis, page: int, earliest: float) -> list[dict]:
    """Top of the week the book's way: score: walked from the top, the week's kept."""
    start = (page - 1) * ARTICLES_PER_PAGE
    found: list[dict] = []
    offset = 0
    while len(found) < start + ARTICLES_PER_PAGE:
        ids = conn.zrevrange("score:", offset, offset + ARTICLES_PER_PAGE - 1)
        if not ids:
            break
        offset += len(ids)
        for id in ids:
            article_data = conn.hgetall(id)
            if float(article_data.get(b"time", 0)) >= earliest:
                article_data["id"] = id
                found.append(article_data)
    return found[start : start + ARTICLES_PER_PAGE]
