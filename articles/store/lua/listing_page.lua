-- listing_page.lua: one page of a ranking (score:, time:, votes:, submitted:<pk>) for a
-- logged-in reader, without the articles they hid (unhidden_page in _lib.lua), in the
-- page's first round trip as the anonymous page's ZCARD + ZREVRANGE are. The front page
-- also asks for the newest good articles (KEYS[3]) the reader has not hidden, in the same
-- call.
-- KEYS[1] the ranking zset  KEYS[2] hidden:<pk>  KEYS[3] good: (optional)
-- ARGV[1] start  ARGV[2] stop (ranks of what the reader sees)
-- ARGV[3] how many of the newest good articles (with KEYS[3])
-- Returns {S.OK, count the reader sees, member, score, ...}, with KEYS[3]
--   {S.OK, count, {good member, time, ...}, member, score, ...} | {S.BAD_DATA, key, why}
local bad = bad_types({KEYS[1], 'zset', KEYS[2], 'zset', KEYS[3] or KEYS[1], 'zset'})
if bad then return bad end
local rows, hid = unhidden_page(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
local reply = {S.OK, redis.call('ZCARD', KEYS[1]) - hid}
if KEYS[3] then
  reply[3] = unhidden_page(KEYS[3], KEYS[2], 0, tonumber(ARGV[3]) - 1)
end
for i = 1, #rows do reply[#reply + 1] = rows[i] end
return reply
