-- groups_update.lua: add an article to some groups and remove it from others in one
-- step (the book's add_remove_groups), in or out of each touched group's rankings too,
-- so the change shows at once (group_rank in _lib.lua).
-- KEYS[1] article:<id>  KEYS[2] groups:  KEYS[3] modlog:  KEYS[4] score:  KEYS[5] time:
-- KEYS[6..] per group, the added first, then the removed: group:<g>, score:<g>, time:<g>,
--   groups:ranked
-- ARGV[1] article:<id>  ARGV[2] number added  ARGV[3] number removed
-- ARGV[4] moderation log entry ("" for none)  ARGV[5] log length kept
-- ARGV[6..] the added group names, then the removed ones
-- Returns {S.NOT_FOUND} | {S.NO_GROUP, name} | {S.OK, "a,b"} the groups now
local specs = {KEYS[1], 'hash', KEYS[2], 'hash', KEYS[3], 'list', KEYS[4], 'zset',
  KEYS[5], 'zset'}
group_specs(specs, 6, #KEYS)
local bad = bad_types(specs)
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {S.NOT_FOUND} end
local n_add, n_remove = tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 1, n_add do
  if redis.call('HEXISTS', KEYS[2], ARGV[5 + i]) == 0 then return {S.NO_GROUP, ARGV[5 + i]} end
end

local current = {}
for name in string.gmatch(redis.call('HGET', KEYS[1], 'groups') or '', '[^,]+') do
  current[name] = true
end
for i = 1, n_add + n_remove do
  local name, k = ARGV[5 + i], 6 + (i - 1) * 4
  if i <= n_add then
    redis.call('SADD', KEYS[k], ARGV[1])
    group_rank(k, ARGV[1], KEYS[4], KEYS[5])
    current[name] = true
  else
    redis.call('SREM', KEYS[k], ARGV[1])
    group_rank(k, ARGV[1], nil, nil)
    current[name] = nil
  end
end

local names = {}
for name in pairs(current) do names[#names + 1] = name end
table.sort(names)
local joined = table.concat(names, ',')
hset_or_drop(KEYS[1], 'groups', joined)
log_action(KEYS[3], ARGV[4], ARGV[5])
return {S.OK, joined}
