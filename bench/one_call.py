"""A page in one round trip: a Lua script that also reads each article's hash.

A proposal measured by bench/run.py, kept out of the product: it cuts the client's CPU per
page, but moves ~390 µs of work into Redis and reads keys named by sorted-set members,
which the store's scripts never do (see docs/performance.md)."""

from __future__ import annotations

from redis.commands.core import Script

from articles import conf
from articles.store import keys
from articles.store.connection import get_connection
from articles.store.selectors._common import _bounds
from articles.types import Article, Order, Page, Vote

# The pipeline above costs 2 round trips and 2 x 25 commands that redis-py packs and
# parses one by one; on this machine that client work, not Redis, is most of a page's
# time. This variant returns the ranking slice, live scores, hashes and the viewer's votes
# from one script. Unlike every other script it reads keys named by zset members
# (article:<id>, voted:<id>), as the book's get_articles does from the client; that is
# safe only on a single Redis (not Cluster, which votesite already refuses).

_PAGE_ONE_CALL = Script(
    None,
    b"""
local reply = {redis.call('ZCARD', KEYS[1])}
local members = redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2])
for i = 1, #members do
  local member = members[i]
  local id = string.match(member, '^article:([1-9][0-9]*)$')
  if id then
    local row = {member, redis.call('ZSCORE', KEYS[2], member) or '',
                 redis.call('HGETALL', member)}
    if ARGV[3] ~= '' then
      row[4] = redis.call('SISMEMBER', 'voted:' .. id, ARGV[3])
      row[5] = redis.call('SISMEMBER', 'voted_down:' .. id, ARGV[3])
    end
    reply[#reply + 1] = row
  end
end
return reply
""",
)


def article_list_one_call(
    *, order: Order = Order.SCORE, page: int | str = 1, user_id: int | None = None
) -> Page:
    """The same Page as article_list, in one round trip (bench branch proposal)."""
    number, start, stop = _bounds(page)
    user = keys.user(user_id) if user_id else ""
    reply = _PAGE_ONE_CALL(
        keys=[order.key, keys.SCORE], args=[start, stop, user], client=get_connection()
    )
    window, vote_score = conf.window(), conf.vote_score()
    items = []
    for row in reply[1:]:
        raw = row[2]
        if isinstance(raw, list):  # RESP2 gives the hash as a flat list
            raw = dict(zip(raw[::2], raw[1::2], strict=True))
        if not raw:
            continue  # deleted while the page was read
        my_vote = None
        if user:
            my_vote = Vote.UP if row[3] else Vote.DOWN if row[4] else Vote.NONE
        items.append(
            Article.from_hash(
                keys.article_id_of(keys.text(row[0])),
                raw,
                score=float(row[1]) if row[1] not in (b"", "") else None,
                window=window,
                vote_score=vote_score,
                my_vote=my_vote,
            )
        )
    return Page(items=items, number=number, count=int(reply[0]), per_page=conf.per_page())
