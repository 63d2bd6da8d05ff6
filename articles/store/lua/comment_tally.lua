-- comment_tally.lua: an article's `comments` and the visible comments its lists hold, in
-- one step, for the audit's re-read of a count: an article being commented on changes
-- between any two reads, so the count and what it is checked against are read together.
-- Its visible comments are the members of both comments_all:<aid> (all of its comments,
-- tombstones included) and comments: (every visible comment): ZINTERCARD counts them in
-- the server, one lookup per comment of the article, stopping one past the count. The
-- audit trusts these lists only once it found nothing wrong with them. Reads only.
-- KEYS[1] article:<aid>  KEYS[2] comments_all:<aid>  KEYS[3] comments:
-- Returns {S.OK, `comments` (false when absent), visible, limit (visible stops there)}
--   | {S.NOT_FOUND} | {S.BAD_DATA, key, what is wrong}
local bad = bad_types({KEYS[1], 'hash', KEYS[2], 'zset', KEYS[3], 'zset'})
if bad then return bad end
local f = redis.call('HMGET', KEYS[1], 'time', 'comments')
if not f[1] then return {S.NOT_FOUND} end
local count = tonumber(f[2] or '0')
-- A count that is not a whole number >= 0 is wrong whatever the lists hold.
local limit = 1
if count and count >= 0 and count < 2^53 and count == math.floor(count) then
  limit = count + 1
end
local visible = redis.call('ZINTERCARD', 2, KEYS[2], KEYS[3], 'LIMIT',
  string.format('%d', limit))
return {S.OK, f[2] or false, visible, limit}
