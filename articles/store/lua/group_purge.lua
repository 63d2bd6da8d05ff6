-- group_purge.lua: one bounded batch of a deleted group's former members, each losing
-- the group's name from its `groups` field (group_delete.lua took the group itself away).
-- Member hashes are named by the set's members, checked against keys.py's form.
-- KEYS[1] purge:group:<g>  KEYS[2] group:<g> (a group of the same name made since)
-- KEYS[3] purge:
-- ARGV[1] name  ARGV[2] how many members at most  ARGV[3] group:<g>
-- An article in a group of the same name made since keeps the name. The group leaves
-- purge: when its set is empty (and so gone).
-- Returns {S.OK, members left} | {S.BAD_DATA, key, what}
local bad = bad_types({KEYS[1], 'set', KEYS[2], 'set', KEYS[3], 'set'})
if bad then return bad end
local name = ARGV[1]
for _, member in ipairs(redis.call('SPOP', KEYS[1], tonumber(ARGV[2]))) do
  if article_id_of(member) and redis.call('TYPE', member)['ok'] == 'hash'
    and redis.call('SISMEMBER', KEYS[2], member) == 0 then
    local kept = {}
    for g in string.gmatch(redis.call('HGET', member, 'groups') or '', '[^,]+') do
      if g ~= name then kept[#kept + 1] = g end
    end
    hset_or_drop(member, 'groups', table.concat(kept, ','))
  end
end
local left = redis.call('SCARD', KEYS[1])
if left == 0 then redis.call('SREM', KEYS[3], ARGV[3]) end
return {S.OK, left}
