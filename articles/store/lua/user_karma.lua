-- user_karma.lua: a user's karma, the net votes (up - down) on the articles they posted
-- that still exist, read in one round trip whatever their number; and their comment
-- karma, the figure the comment scripts keep (one GET).
-- KEYS[1] submitted:<pk>, KEYS[2] votes: (article:<id> -> net votes)
-- KEYS[3] comment_karma:<pk> (optional)
-- Returns {S.OK, karma, comment karma (0 when absent or not a count)}
local karma = 0
for _, item in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  karma = karma + (tonumber(redis.call('ZSCORE', KEYS[2], item)) or 0)
end
local comments = 0
if KEYS[3] and redis.call('TYPE', KEYS[3])['ok'] == 'string' then
  local v = redis.call('GET', KEYS[3])
  if string.match(v, '^-?%d+$') and #v <= 18 then comments = v end
end
return {S.OK, karma, comments}
