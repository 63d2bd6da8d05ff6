-- top_fill.lua: one bounded step of building votes:<p> for a store whose period is not
-- kept yet (written before the periods were kept, or by the book's code).
-- The first step sets the frontier to now - period and a fill cursor at the same place;
-- each step copies the votes: scores of the next ARGV[3] articles of time: after the
-- cursor (or after the frontier, should a trim have moved it further), and the last one
-- drops the cursor: from then on the reads use votes:<p>. Meanwhile the writes already
-- keep votes:<p> (they write the current net votes, as a step does, so either order
-- gives the same), the reads still rebuild, and a delete removes from both sides.
-- KEYS[1] time:  KEYS[2] votes:  KEYS[3] votes:<p>  KEYS[4] votes:periods
-- ARGV[1] period  ARGV[2] now ("" for Redis' own clock)  ARGV[3] articles a step
-- Returns {S.OK, 1 when kept (done) else 0, articles copied by this step}
local bad = bad_types({KEYS[1], 'zset', KEYS[2], 'zset', KEYS[3], 'zset', KEYS[4], 'hash'})
if bad then return bad end
local name, limit = ARGV[1], tonumber(ARGV[3])
local fill_field = name .. ':fill'
local front = redis.call('HGET', KEYS[4], name)
local fill = redis.call('HGET', KEYS[4], fill_field)
if front and not fill then return {S.OK, 1, 0} end
if not front then
  local seconds
  for i = 1, #PERIODS do
    if PERIODS[i][1] == name then seconds = PERIODS[i][2] end
  end
  front = exact(clock(ARGV[2]) - seconds)
  fill = front
  redis.call('UNLINK', KEYS[3]) -- what an interrupted or foreign build left
  redis.call('HSET', KEYS[4], name, front, fill_field, fill)
end
local start = math.max(frontier_index(KEYS[1], frontier_of(front)),
  frontier_index(KEYS[1], frontier_of(fill)))
local batch = redis.call('ZRANGE', KEYS[1], start, start + limit - 1, 'WITHSCORES')
local copied = 0
if #batch > 0 then
  local members = {}
  for i = 1, #batch, 2 do members[#members + 1] = batch[i] end
  local nets = redis.call('ZMSCORE', KEYS[2], unpack(members))
  local pairs_ = {}
  for i = 1, #members do
    if nets[i] then
      pairs_[#pairs_ + 1] = nets[i]
      pairs_[#pairs_ + 1] = members[i]
    end
  end
  if #pairs_ > 0 then redis.call('ZADD', KEYS[3], unpack(pairs_)) end
  copied = #pairs_ / 2
end
if #batch < 2 * limit then
  redis.call('HDEL', KEYS[4], fill_field)
  return {S.OK, 1, copied}
end
redis.call('HSET', KEYS[4], fill_field, batch[#batch] .. ' ' .. batch[#batch - 1])
return {S.OK, 0, copied}
