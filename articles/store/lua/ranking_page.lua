-- ranking_page.lua: one page of a group's cached ranking, building the cache first when
-- it has expired. Redis runs scripts one at a time, so however many requests arrive
-- together after expiry, the intersection is computed once (no stampede).
-- The book's get_group_articles: cache = ZINTERSTORE(group:<g>, order, MAX). (The top of
-- a period, once a mode of this script, is top_page.lua: kept by the writes, not rebuilt.)
-- KEYS[1] cache (score:<g> or time:<g>)  KEYS[2] group:<g>  KEYS[3] score: or time:
-- KEYS[4] unused (the cache again)  KEYS[5] groups:  KEYS[6] hidden:<pk> of a logged-in
--   reader (optional): their hidden articles are left out (unhidden_page in _lib.lua)
-- ARGV[1] "group"  ARGV[2] ttl (s)  ARGV[3] start  ARGV[4] stop  ARGV[5] unused
-- ARGV[6] group name
-- Returns {S.NO_GROUP, name} | {S.OK, count, description, size, member, score, ...};
-- description and size are the group's, so a group's page needs no separate read of it.
local hidden = KEYS[6] or ''
local bad = bad_types({KEYS[1], 'zset', KEYS[2], 'set', KEYS[3], 'zset', KEYS[5], 'hash',
  KEYS[6] or KEYS[1], 'zset'})
if bad then return bad end
local description = redis.call('HGET', KEYS[5], ARGV[6])
local size = redis.call('SCARD', KEYS[2])
if not description and size == 0 then
  return {S.NO_GROUP, ARGV[6]}
end
description = description or ''
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZINTERSTORE', KEYS[1], 2, KEYS[2], KEYS[3], 'AGGREGATE', 'MAX')
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
local page, hid = unhidden_page(KEYS[1], hidden, ARGV[3], ARGV[4])
local reply = {S.OK, redis.call('ZCARD', KEYS[1]) - hid, description, size}
for i = 1, #page do reply[#reply + 1] = page[i] end
return reply
