-- group_fix.lua: put a batch of members right in a kept group's rankings (group_repair):
-- each gets what the writes keep (group_rank in _lib.lua): in score:<g> and time:<g>
-- with its score: and time: scores while group:<g> holds it, else out of both.
-- KEYS[1] group:<g>  KEYS[2] score:<g>  KEYS[3] time:<g>  KEYS[4] groups:ranked
-- KEYS[5] score:  KEYS[6] time:
-- ARGV the article:<id> members (at most a few hundred a call)
-- Returns {S.OK, entries changed} (0 for a group not kept: its reads fill it first)
local bad = bad_types(group_specs({KEYS[5], 'zset', KEYS[6], 'zset'}, 1, 1))
if bad then return bad end
if not group_kept(1) then return {S.OK, 0} end
local changed = 0
for _, member in ipairs(ARGV) do
  local inside = redis.call('SISMEMBER', KEYS[1], member) == 1
  for _, pair in ipairs({{KEYS[2], KEYS[5]}, {KEYS[3], KEYS[6]}}) do
    local want = inside and redis.call('ZSCORE', pair[2], member) or nil
    local have = redis.call('ZSCORE', pair[1], member)
    if want and want ~= have then
      redis.call('ZADD', pair[1], want, member)
      changed = changed + 1
    elseif not want and have then
      redis.call('ZREM', pair[1], member)
      changed = changed + 1
    end
  end
end
return {S.OK, changed}
