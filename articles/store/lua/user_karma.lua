-- user_karma.lua: a user's karma, the net votes (up - down) on the articles they posted
-- that still exist, read in one round trip whatever their number.
-- KEYS[1] submitted:<pk>, KEYS[2] votes: (article:<id> -> net votes)
-- Returns {S.OK, karma}
local karma = 0
for _, item in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  karma = karma + (tonumber(redis.call('ZSCORE', KEYS[2], item)) or 0)
end
return {S.OK, karma}
