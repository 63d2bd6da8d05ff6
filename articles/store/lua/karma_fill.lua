-- karma_fill.lua: one bounded step of building a user's article_karma:<pk> when it is not
-- kept yet (a store written before the figure existed, or by the book's code): the next
-- ARGV[2] articles of submitted:<pk> (in its order: post time, then member) after the
-- cursor are added to the partial sum, both kept in article_karma_fill: (pk -> "P" or
-- "P T member"); the last step writes the figure and drops the cursor. Meanwhile the
-- writes move the partial sum for the articles at or before the cursor (article_karma_close
-- in _lib.lua), and the step reads the current votes: scores of the rest, so the figure
-- it writes is the sum however the two interleave.
-- KEYS[1] article_karma:<pk>  KEYS[2] submitted:<pk>  KEYS[3] votes:
-- KEYS[4] article_karma_fill:
-- ARGV[1] pk  ARGV[2] articles a step
-- Returns {S.OK, 1 when kept (done) else 0, articles added by this step}
--   | {S.BAD_DATA, key, what}
local bad = bad_types({KEYS[1], 'string', KEYS[2], 'zset', KEYS[3], 'zset', KEYS[4], 'hash'})
if bad then return bad end
local pk, n = ARGV[1], tonumber(ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HDEL', KEYS[4], pk)
  return {S.OK, 1, 0}
end
local p, rest = string.match(redis.call('HGET', KEYS[4], pk) or '0', '^(%S+)(.*)$')
local ft, fm = string.match(rest or '', '^ (%S+) (%S+)$')
p, ft = whole_or_nil(p), tonumber(ft)
if not p or (rest ~= '' and not ft) then p, ft = 0, nil end -- not a fill's state: start again
local start = 0
if ft then -- the index after the cursor, also when its member has been deleted since
  local s = redis.call('ZSCORE', KEYS[2], fm)
  if s and tonumber(s) == ft then
    start = redis.call('ZRANK', KEYS[2], fm) + 1
  else
    start = redis.call('ZCOUNT', KEYS[2], '-inf', '(' .. exact(ft))
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], exact(ft), exact(ft))) do
      if m <= fm then start = start + 1 end
    end
  end
end
local rows = redis.call('ZRANGE', KEYS[2], start, start + n - 1, 'WITHSCORES')
if #rows > 0 then
  local members = {}
  for i = 1, #rows, 2 do members[#members + 1] = rows[i] end
  for _, v in ipairs(redis.call('ZMSCORE', KEYS[3], unpack(members))) do
    p = p + (tonumber(v) or 0)
  end
end
if #rows < 2 * n then
  redis.call('SET', KEYS[1], string.format('%d', p))
  redis.call('HDEL', KEYS[4], pk)
  return {S.OK, 1, #rows / 2}
end
redis.call('HSET', KEYS[4], pk, string.format('%d', p) .. ' ' .. rows[#rows] .. ' ' .. rows[#rows - 1])
return {S.OK, 0, #rows / 2}
