-- user_forget.lua: a deleted account's name leaves everything it made, in one step, so no
-- listing shows the old name (which a new account may take) as its author.
-- KEYS[i] an index of the user's items (submitted:<pk>: article:<id> -> time;
--   user_comments:<pk>: comment:<id> -> time), each member naming an item hash
-- ARGV[1] the user's member (user:<pk>), ARGV[2] the name to show instead ("[deleted]")
-- ARGV[2 + i] for KEYS[i]: "<owner field> <name field>" of its items ("poster poster_name",
--   "author author_name")
-- Items are renamed only while their owner field still names the user (an item's id may
-- have been reused by an import); a missing item is skipped.
-- Returns {S.OK, how many items were renamed}
local renamed = 0
for i = 1, #KEYS do
  local owner, name = string.match(ARGV[2 + i], '^(%S+) (%S+)$')
  for _, item in ipairs(redis.call('ZRANGE', KEYS[i], 0, -1)) do
    if redis.call('TYPE', item)['ok'] == 'hash' and redis.call('HGET', item, owner) == ARGV[1] then
      redis.call('HSET', item, name, ARGV[2])
      renamed = renamed + 1
    end
  end
end
return {S.OK, renamed}
