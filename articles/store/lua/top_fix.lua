-- top_fix.lua: put a batch of articles right in every kept period (top_repair): each
-- gets the rule the writes keep, from what time:, votes: and the frontiers say now: in
-- votes:<p> with its votes: score when it is in both and after p's frontier, else out
-- (one inside the tie a trim stopped in is left as it is: the next trim judges it).
-- KEYS[1] time:  KEYS[2] votes:  KEYS[3..7] keys.PERIOD_KEYS
-- ARGV the article:<id> members (at most a few hundred a call)
-- Returns {S.OK, entries changed}
local bad = bad_types(period_specs({KEYS[1], 'zset', KEYS[2], 'zset'}, 3))
if bad then return bad end
local fronts = period_frontiers(3)
local changed = 0
for _, member in ipairs(ARGV) do
  local t = tonumber(redis.call('ZSCORE', KEYS[1], member) or '')
  local net = redis.call('ZSCORE', KEYS[2], member)
  for i = 1, #PERIODS do
    if fronts[i] then
      local key = KEYS[2 + i]
      local ft, fm = frontier_of(fronts[i])
      local held = redis.call('ZSCORE', key, member)
      if t and net and after_frontier(t, ft, fm) then
        if held ~= net then
          redis.call('ZADD', key, net, member)
          changed = changed + 1
        end
      elseif held and not (t and t == tonumber(ft) and fm ~= '') then
        redis.call('ZREM', key, member)
        changed = changed + 1
      end
    end
  end
end
return {S.OK, changed}
