-- flag_decide.lua: staff decide an item's flags: its flags and its place in the staff
-- queue go, the decision goes to the moderation log, and a held item is released. On a
-- dismissal a held article goes back into every ranking it left (flag.lua) with the
-- values its hash gives, as a vote would set them: score post time + vote score x net
-- votes, time:, votes:, good: (by its up-votes), each kept period, its site's index, its
-- groups' rankings. A resolution removes the item first (the staff removal), so
-- nothing is put back then (ARGV[8] "").
-- KEYS[1] article:<id> or comment:<id>  KEYS[2] flags:<item>  KEYS[3] flagged:
-- KEYS[4] modlog:  articles only: KEYS[5] score:  KEYS[6] time:  KEYS[7] good:
--   KEYS[8] votes:  KEYS[9..13] keys.PERIOD_KEYS  KEYS[14] domain:<d> of its link as read
--   (KEYS[1] when none)  KEYS[15..] per group of the article: group:<g>, score:<g>, time:<g>,
--   groups:ranked
-- ARGV[1] the item's member  ARGV[2] log entry ("" for none)  ARGV[3] log length kept
-- ARGV[4] vote score  ARGV[5] good-article votes  ARGV[6] the article's groups as read
-- ARGV[7] the flags the caller read ("" : any; a flag since then is decided again)
-- ARGV[8] "restore": put a held article back (a dismissal), "" leave it (a resolution)
-- ARGV[9] the article's link as read
-- Returns {S.NOT_FOUND} (not in the queue) | {S.RETRY} (changed since read)
--   | {S.OK, flags decided}
local article = #KEYS > 4
local specs = {KEYS[1], 'hash', KEYS[2], 'hash', KEYS[3], 'zset', KEYS[4], 'list'}
if article then
  for k = 5, 8 do specs[#specs + 1] = KEYS[k]; specs[#specs + 1] = 'zset' end
  period_specs(specs, 9)
  if KEYS[14] ~= KEYS[1] then specs[#specs + 1] = KEYS[14]; specs[#specs + 1] = 'zset' end
  group_specs(specs, 15, #KEYS)
end
local bad = bad_types(specs)
if bad then return bad end
local member = ARGV[1]
local count = redis.call('HLEN', KEYS[2])
if count == 0 and not redis.call('ZSCORE', KEYS[3], member) then return {S.NOT_FOUND} end
if ARGV[7] ~= '' and count ~= tonumber(ARGV[7]) then return {S.RETRY} end
local exists = redis.call('EXISTS', KEYS[1]) == 1
local restore = exists and ARGV[8] == 'restore' and redis.call('HEXISTS', KEYS[1], 'held') == 1
if restore and article then
  local g = redis.call('HMGET', KEYS[1], 'groups', 'link')
  if (g[1] or '') ~= ARGV[6] or (g[2] or '') ~= ARGV[9] then return {S.RETRY} end
  local f = redis.call('HMGET', KEYS[1], 'time', 'votes', 'downvotes')
  bad = bad_time(KEYS[1], f[1]) or bad_counts(KEYS[1], {'votes', 'downvotes'})
  if bad then return bad end
  local t, up, down = tonumber(f[1]), tonumber(f[2] or '0'), tonumber(f[3] or '0')
  local net = up - down
  local karma = article_karma_open(redis.call('HGET', KEYS[1], 'poster'), member, KEYS[8])
  redis.call('ZADD', KEYS[5], exact(t + tonumber(ARGV[4]) * net), member)
  redis.call('ZADD', KEYS[6], exact(t), member)
  if up >= tonumber(ARGV[5]) then redis.call('ZADD', KEYS[7], exact(t), member) end
  redis.call('ZADD', KEYS[8], net, member)
  period_set(9, member, t, net)
  article_karma_close(karma) -- back in votes:, so back in its poster's karma
  if KEYS[14] ~= KEYS[1] then redis.call('ZADD', KEYS[14], exact(t), member) end
  for k = 15, #KEYS, 4 do
    if redis.call('SISMEMBER', KEYS[k], member) == 1 then group_rank(k, member, KEYS[5], KEYS[6]) end
  end
end
if exists then redis.call('HDEL', KEYS[1], 'held') end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], member)
log_action(KEYS[4], ARGV[2], ARGV[3])
return {S.OK, count}
