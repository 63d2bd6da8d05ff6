-- group_delete.lua: delete a group: its registry entry, its set, its cached rankings, and
-- its name from the `groups` field of every member article.
-- KEYS[1] groups:  KEYS[2] group:<g>  KEYS[3] score:<g>  KEYS[4] time:<g>  KEYS[5] modlog:
-- KEYS[6..] article:<id> of every member, as the caller read them
-- ARGV[1] name  ARGV[2] log entry  ARGV[3] log length kept  ARGV[4..] the members
-- Returns {S.NO_GROUP, name} | {S.RETRY} membership changed since read | {S.OK} deleted
local name = ARGV[1]
local specs = {KEYS[1], 'hash', KEYS[2], 'set', KEYS[3], 'zset', KEYS[4], 'zset', KEYS[5], 'list'}
for k = 6, #KEYS do specs[#specs + 1] = KEYS[k]; specs[#specs + 1] = 'hash' end
local bad = bad_types(specs)
if bad then return bad end
if redis.call('HEXISTS', KEYS[1], name) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then
  return {S.NO_GROUP, name}
end
local n = #KEYS - 5
if redis.call('SCARD', KEYS[2]) ~= n then return {S.RETRY} end
for i = 1, n do
  if redis.call('SISMEMBER', KEYS[2], ARGV[3 + i]) == 0 then return {S.RETRY} end
end
for i = 1, n do
  local key = KEYS[5 + i]
  local kept = {}
  for g in string.gmatch(redis.call('HGET', key, 'groups') or '', '[^,]+') do
    if g ~= name then kept[#kept + 1] = g end
  end
  if redis.call('EXISTS', key) == 1 then
    redis.call('HSET', key, 'groups', table.concat(kept, ','))
  end
end
redis.call('HDEL', KEYS[1], name)
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
log_action(KEYS[5], ARGV[2], ARGV[3])
return {S.OK}
