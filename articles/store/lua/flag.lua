-- flag.lua: one user's flag on an article or a comment, with its reason: one flag per
-- user per item. The flag that reaches the threshold holds the item in the same step: an
-- article leaves the public rankings (score:, time:, good:, votes:, each period's top,
-- its site's index, its groups' rankings), so every listing read stays the work it
-- was; a comment
-- is marked, and its thread folds it. `held` (the time) on the item's hash says so until
-- staff decide (flag_decide.lua).
-- KEYS[1] article:<id> or comment:<id>  KEYS[2] flags:<item>  KEYS[3] flagged:
-- articles only: KEYS[4] score:  KEYS[5] time:  KEYS[6] good:  KEYS[7] votes:
--   KEYS[8..12] keys.PERIOD_KEYS  KEYS[13] domain:<d> of its link as read (KEYS[1] when
--   none)  KEYS[14..] per group of the article: group:<g>, score:<g>, time:<g>,
--   groups:ranked
-- ARGV[1] the item's member  ARGV[2] user:<pk>  ARGV[3] reason
-- ARGV[4] threshold (0: never hold)  ARGV[5] now ("" for Redis' own clock)
-- ARGV[6] the article's groups as read ("" for a comment)  ARGV[7] its link as read
-- Returns {S.NOT_FOUND} | {S.COMMENT_GONE} (a deleted or removed comment)
--   | {S.RETRY} (the article's groups or link changed since read)
--   | {S.REPEATED, flags, held} (this user's flag is there already) | {S.OK, flags, held}
local article = #KEYS > 3
local specs = {KEYS[1], 'hash', KEYS[2], 'hash', KEYS[3], 'zset'}
if article then
  for k = 4, 7 do specs[#specs + 1] = KEYS[k]; specs[#specs + 1] = 'zset' end
  period_specs(specs, 8)
  if KEYS[13] ~= KEYS[1] then specs[#specs + 1] = KEYS[13]; specs[#specs + 1] = 'zset' end
  group_specs(specs, 14, #KEYS)
end
local bad = bad_types(specs)
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {S.NOT_FOUND} end
if article then
  local f = redis.call('HMGET', KEYS[1], 'groups', 'link')
  if (f[1] or '') ~= ARGV[6] or (f[2] or '') ~= ARGV[7] then return {S.RETRY} end
elseif (redis.call('HGET', KEYS[1], 'state') or '') ~= '' then
  return {S.COMMENT_GONE}
end
local member = ARGV[1]
local held = redis.call('HEXISTS', KEYS[1], 'held')
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then
  return {S.REPEATED, redis.call('HLEN', KEYS[2]), held}
end
local count = redis.call('HLEN', KEYS[2])
redis.call('ZADD', KEYS[3], count, member)
local threshold = tonumber(ARGV[4])
if held == 0 and threshold > 0 and count >= threshold then
  held = 1
  redis.call('HSET', KEYS[1], 'held', clock(ARGV[5]))
  if article then
    local karma = article_karma_open(redis.call('HGET', KEYS[1], 'poster'), member, KEYS[7])
    for k = 4, 7 do redis.call('ZREM', KEYS[k], member) end
    article_karma_close(karma) -- out of votes:, so out of its poster's karma
    period_remove(8, member)
    if KEYS[13] ~= KEYS[1] then redis.call('ZREM', KEYS[13], member) end
    for k = 14, #KEYS, 4 do group_rank(k, member, nil, nil) end
  end
end
return {S.OK, count, held}
