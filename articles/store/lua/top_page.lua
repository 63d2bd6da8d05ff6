-- top_page.lua: one page of the top of a period (day, week, month, year), by net votes.
-- Kept period (selectors/rankings.py gives the design): trim at most ARGV[6] articles
-- aged out of votes:<p>, then read the page: O(log n + page + limit), whatever the size
-- of the period. While aged-out articles remain after the trim, answer {S.RETRY}: the
-- caller calls again (each call takes the next ARGV[6] away), so no call grows with the
-- backlog and no answer ever counts an article out of its period.
-- Not kept yet (a store written before the periods were kept, or by the book's code,
-- until top_repair() backfills it; an empty store until its first post: a read never
-- starts keeping, so a backup restored into a store only read so far is not left
-- unranked): the former rebuild, cached ARGV[2] s in top:<p>
-- (ZRANGESTORE of time: from the period's start, ZINTERSTORE with votes:, O(period)).
-- The same rebuild, uncached, answers a read of a moment the frontier has passed (a
-- fixed `now` in the past: tests and tools; Redis' own clock allows ARGV[2] s of slack).
-- KEYS[1] top:<p> (cache)  KEYS[2] time:  KEYS[3] votes:  KEYS[4] top:<p>:tmp (scratch)
-- KEYS[5] votes:<p>  KEYS[6] votes:periods  KEYS[7] hidden:<pk> of a logged-in reader
--   (optional): their hidden articles are left out (unhidden_page in _lib.lua)
-- ARGV[1] period  ARGV[2] cache ttl (s)  ARGV[3] start  ARGV[4] stop
-- ARGV[5] now ("" for Redis' own clock)  ARGV[6] how many aged-out articles a call trims
-- Returns {S.OK, count, member, score, ...} | {S.RETRY} call again | {S.BAD_DATA, key, why}
local bad = bad_types({KEYS[1], 'zset', KEYS[2], 'zset', KEYS[3], 'zset', KEYS[4], 'zset',
  KEYS[5], 'zset', KEYS[6], 'hash', KEYS[7] or KEYS[5], 'zset'})
if bad then return bad end
local name, ttl = ARGV[1], tonumber(ARGV[2])
local seconds
for i = 1, #PERIODS do
  if PERIODS[i][1] == name then seconds = PERIODS[i][2] end
end
local now = clock(ARGV[5])
local cutoff = now - seconds

local function page(key)
  local rows, hid = unhidden_page(key, KEYS[7] or '', ARGV[3], ARGV[4])
  local reply = {S.OK, redis.call('ZCARD', key) - hid}
  for i = 1, #rows do reply[#reply + 1] = rows[i] end
  return reply
end

-- votes: restricted to the articles posted since cutoff, into `into` (KEYS[1] or KEYS[4]).
local function rebuild(into)
  redis.call('ZRANGESTORE', KEYS[4], KEYS[2], exact(cutoff), '+inf', 'BYSCORE')
  redis.call('ZINTERSTORE', into, 2, KEYS[4], KEYS[3], 'WEIGHTS', 0, 1)
  if into ~= KEYS[4] then redis.call('DEL', KEYS[4]) end
end

local kept = not redis.call('HGET', KEYS[6], name .. ':fill')
local trimmed = kept and period_trim(KEYS[2], KEYS[5], KEYS[6], name, cutoff,
  tonumber(ARGV[6]), ARGV[5] == '' and ttl or 0)
if trimmed == 'done' then return page(KEYS[5]) end
if trimmed == 'more' then return {S.RETRY} end
if trimmed == 'ahead' then
  rebuild(KEYS[4])
  local reply = page(KEYS[4])
  redis.call('DEL', KEYS[4])
  return reply
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  rebuild(KEYS[1])
  redis.call('EXPIRE', KEYS[1], ttl)
end
return page(KEYS[1])
