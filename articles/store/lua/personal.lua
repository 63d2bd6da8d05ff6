-- personal.lua: put an item into one of a user's own lists, or take it out (hide, save;
-- keys.hidden, keys.saved, keys.saved_comments). Adding again changes nothing (NX: the
-- list keeps when it first went in); past the list's cap the oldest leave, so a list
-- never holds more than ARGV[3].
-- KEYS[1] the list (zset)  KEYS[2] the item's hash (article:<id> or comment:<id>)
-- ARGV[1] "add" | "remove"  ARGV[2] the item's member  ARGV[3] the cap
-- ARGV[4] now ("" for Redis' own clock)  ARGV[5] "archived": the caller found the item
--   archived in the database (store/archive.py), where its hash now is ("" otherwise)
-- Returns {S.OK, changed (0/1)} | {S.NOT_FOUND} (no such article to add)
--   | {S.COMMENT_NOT_FOUND} (no such comment to add) | {S.BAD_DATA, key, why}
local bad = bad_types({KEYS[1], 'zset', KEYS[2], 'hash'})
if bad then return bad end
if ARGV[1] == 'remove' then
  return {S.OK, redis.call('ZREM', KEYS[1], ARGV[2])}
end
if redis.call('EXISTS', KEYS[2]) == 0 and ARGV[5] ~= 'archived' then
  if comment_id_of(ARGV[2]) then return {S.COMMENT_NOT_FOUND} end
  return {S.NOT_FOUND}
end
local added = redis.call('ZADD', KEYS[1], 'NX', exact(clock(ARGV[4])), ARGV[2])
local keep = tonumber(ARGV[3])
if added == 1 and redis.call('ZCARD', KEYS[1]) > keep then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -keep - 1)
end
return {S.OK, added}
