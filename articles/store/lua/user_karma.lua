-- user_karma.lua: a user's karma, the net votes (up - down) on the articles they posted
-- that still exist, and their comment karma: two GETs of the figures the write scripts
-- keep (article_karma:<pk>, comment_karma:<pk>), whatever the number of articles.
-- A figure not kept yet (a store written before it existed, until check_votes --repair
-- fills it) is summed here as before, over at most ARGV[1] articles: exact for a user
-- with no more, else the newest ARGV[1] only, and said so.
-- KEYS[1] article_karma:<pk>  KEYS[2] submitted:<pk>  KEYS[3] votes: (article:<id> -> net)
-- KEYS[4] comment_karma:<pk> (optional)
-- ARGV[1] the most articles an unkept figure is summed over
-- Returns {S.OK, karma, comment karma (0 when absent or not a count),
--   1 when the karma is exact, 0 when it is the newest ARGV[1] articles' only}
local karma, whole = nil, 1
if redis.call('TYPE', KEYS[1])['ok'] == 'string' then
  karma = whole_or_nil(redis.call('GET', KEYS[1]))
end
if not karma then
  karma = 0
  local limit = tonumber(ARGV[1])
  local n = try('ZCARD', KEYS[2]) or 0
  if n > limit then whole = 0 end
  if n > 0 and limit > 0 then
    local members = redis.call('ZREVRANGE', KEYS[2], 0, limit - 1)
    for _, v in ipairs(try('ZMSCORE', KEYS[3], unpack(members)) or {}) do
      karma = karma + (tonumber(v) or 0)
    end
  end
end
local comments = 0
if KEYS[4] and redis.call('TYPE', KEYS[4])['ok'] == 'string' then
  local v = redis.call('GET', KEYS[4])
  if string.match(v, '^-?%d+$') and #v <= 18 then comments = v end
end
return {S.OK, karma, comments, whole}
