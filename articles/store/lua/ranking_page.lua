-- ranking_page.lua: one page of a cached ranking, building the cache first when it has
-- expired. Redis runs scripts one at a time, so however many requests arrive together
-- after expiry, the intersection is computed once (no stampede).
-- Group mode (the book's get_group_articles): cache = ZINTERSTORE(group:<g>, order, MAX).
-- Top mode: cache = votes: (net votes) restricted to articles whose post time is >= ARGV[5].
-- KEYS[1] cache (score:<g>, time:<g> or top:<period>)  KEYS[2] group:<g> or time:
-- KEYS[3] score: or time: (group mode), votes: (top mode)  KEYS[4] scratch zset (top mode)  KEYS[5] groups:
-- ARGV[1] mode ("group" | "top")  ARGV[2] ttl (s)  ARGV[3] start  ARGV[4] stop
-- ARGV[5] earliest post time (top mode)  ARGV[6] group name (group mode)
-- Returns {S.NO_GROUP, name} (group mode) | {S.OK, count, description, size, member,
-- score, ...}; description and size are the group's (group mode; "" and 0 in top mode), so
-- a group's page needs no separate read of the group.
-- Only the keys this mode reads: a top list never reads groups: (nor a group page the
-- scratch zset), so a bad groups: leaves the top lists working.
local bad
if ARGV[1] == 'group' then
  bad = bad_types({KEYS[1], 'zset', KEYS[2], 'set', KEYS[3], 'zset', KEYS[5], 'hash'})
else
  bad = bad_types({KEYS[1], 'zset', KEYS[2], 'zset', KEYS[3], 'zset', KEYS[4], 'zset'})
end
if bad then return bad end
local description, size = '', 0
if ARGV[1] == 'group' then
  description = redis.call('HGET', KEYS[5], ARGV[6])
  size = redis.call('SCARD', KEYS[2])
  if not description and size == 0 then
    return {S.NO_GROUP, ARGV[6]}
  end
  description = description or ''
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[1] == 'group' then
    redis.call('ZINTERSTORE', KEYS[1], 2, KEYS[2], KEYS[3], 'AGGREGATE', 'MAX')
  else
    redis.call('ZRANGESTORE', KEYS[4], KEYS[2], ARGV[5], '+inf', 'BYSCORE')
    redis.call('ZINTERSTORE', KEYS[1], 2, KEYS[4], KEYS[3], 'WEIGHTS', 0, 1)
    redis.call('DEL', KEYS[4])
  end
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
local reply = {S.OK, redis.call('ZCARD', KEYS[1]), description, size}
local page = redis.call('ZREVRANGE', KEYS[1], ARGV[3], ARGV[4], 'WITHSCORES')
for i = 1, #page do reply[#reply + 1] = page[i] end
return reply
