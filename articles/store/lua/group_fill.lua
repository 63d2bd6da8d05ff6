-- group_fill.lua: one bounded step of making a group's rankings kept (check_votes
-- --repair; a group's first read takes the same steps: ranking_page.lua gives the design).
-- KEYS[1] group:<g>  KEYS[2] score:<g>  KEYS[3] time:<g>  KEYS[4] score:  KEYS[5] time:
-- KEYS[6] groups:ranked
-- ARGV[1] name  ARGV[2] members a step  ARGV[3] now ("" for Redis' own clock)
-- Returns {S.OK, 1 when kept (done) else 0, members read by this step}
local bad = bad_types({KEYS[1], 'set', KEYS[2], 'zset', KEYS[3], 'zset', KEYS[4], 'zset',
  KEYS[5], 'zset', KEYS[6], 'hash'})
if bad then return bad end
local name = ARGV[1]
if redis.call('HEXISTS', KEYS[6], name) == 1 then return {S.OK, 1, 0} end
local done, read = group_fill_step(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6],
  name, tonumber(ARGV[2]), clock(ARGV[3]))
return {S.OK, done and 1 or 0, read}
