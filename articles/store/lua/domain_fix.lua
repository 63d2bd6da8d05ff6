-- domain_fix.lua: put articles into or out of their sites' indexes (domain:<d>), each
-- only while its link is still the one the caller read (it named the site from it):
-- the repair and the backfill of check_votes --repair, a bounded batch a call.
-- KEYS pairs: article:<id>, domain:<d>
-- ARGV pairs, one per KEYS pair: "add" | "drop", the article's link as read ("" for none)
-- add: at the hash's post time (no hash, a bad time, or held for its flags: left alone);
-- drop: ZREM.
-- A pair with a key of the wrong type is left alone (the audit reports it).
-- Returns {S.OK, entries changed}
local changed = 0
for i = 1, #KEYS, 2 do
  local member, index = KEYS[i], KEYS[i + 1]
  local action, link = ARGV[i], ARGV[i + 1]
  if not bad_types({member, 'hash', index, 'zset'})
    and (redis.call('HGET', member, 'link') or '') == link then
    if action == 'drop' then
      changed = changed + redis.call('ZREM', index, member)
    else
      local t = tonumber(redis.call('HGET', member, 'time') or '')
      if redis.call('HEXISTS', member, 'held') == 1 then t = nil end
      if t and t == t and t > -math.huge and t < math.huge then
        changed = changed + redis.call('ZADD', index, 'CH', t, member)
      end
    end
  end
end
return {S.OK, changed}
