-- ranking_page.lua: one page of a group's ranking by score or by time, each call's work
-- bounded whatever the size of the group or the store.
-- The book's get_group_articles rebuilds score:<g> (ZINTERSTORE of group:<g> with score:)
-- when its 60 s cache has expired: O(group), 0.5 s inside Redis for a group of 100,000
-- at 1M articles, stalling every client. Here a group's rankings are kept instead, in
-- the same keys, so the book's code still reads them:
-- - membership by the writes' own scripts (post, delete, groups update, flag and its
--   decision: group_rank in _lib.lua, O(log n) a group), so a moderator's change shows
--   at once, and time:<g> never needs more (a post time never changes);
-- - votes: ours by the vote's own script (group_scores in _lib.lua: the groups its hash
--   names, ZADD XX), at once; the book's own votes (which touch score: alone) by a sweep
--   of score:<g>: at most every ARGV[2] s (the 60 s the spec allows), a read starts one
--   over the group's articles still open to votes (time:<g> from the last sweep's start
--   less the window: no later vote can have moved another), copying what score: says.
--   A read takes at most one step of it (ARGV[7] members) inside this same call and
--   serves the page: a longer sweep goes on over the next reads, at most one step every
--   ARGV[10] s, so a read's work is bounded by the step, never by the group's open
--   articles, and under many reads most take none.
-- A group not kept yet (a store written before this, a new group, or the book's code)
-- is filled in bounded steps (group_fill_step in _lib.lua, ARGV[9] members a call),
-- by its first read or by check_votes --repair.
-- KEYS[1] score:<g>  KEYS[2] time:<g>  KEYS[3] group:<g>  KEYS[4] score:  KEYS[5] time:
-- KEYS[6] groups:  KEYS[7] groups:ranked  KEYS[8] hidden:<pk> of a logged-in reader
--   (optional): their hidden articles are left out (unhidden_page in _lib.lua)
-- ARGV[1] "score" | "time"  ARGV[2] seconds between vote sweeps  ARGV[3] start
-- ARGV[4] stop  ARGV[5] voting window (s)  ARGV[6] group name  ARGV[7] members a sweep step
-- ARGV[8] now ("" for Redis' own clock)  ARGV[9] members a fill step
-- ARGV[10] seconds between two steps of a running sweep
-- Returns {S.NO_GROUP, name} | {S.RETRY} a fill step was taken, call again
--   | {S.OK, count, description, size, member, score, ...}; description and size are
--   the group's, so a group's page needs no separate read of it.
-- Only the keys this order reads are judged: bad data in score: leaves the pages by time.
local scored = ARGV[1] == 'score'
local specs = {KEYS[2], 'zset', KEYS[3], 'set', KEYS[6], 'hash', KEYS[7], 'hash',
  KEYS[8] or KEYS[2], 'zset'}
for _, k in ipairs(scored and {1, 4} or {5}) do
  specs[#specs + 1] = KEYS[k]; specs[#specs + 1] = 'zset'
end
local bad = bad_types(specs)
if bad then return bad end
local name, every, step = ARGV[6], tonumber(ARGV[2]), tonumber(ARGV[7])
local description = redis.call('HGET', KEYS[6], name)
local size = redis.call('SCARD', KEYS[3])
if not description and size == 0 then
  return {S.NO_GROUP, name}
end
local now = clock(ARGV[8])

local began = redis.call('HGET', KEYS[7], name)
if began and size > 0 and redis.call('EXISTS', KEYS[1], KEYS[2]) < 2 then
  -- A kept ranking gone while the group has members (an operator's DEL): fill again.
  redis.call('HDEL', KEYS[7], name, name .. ':at')
  began = nil
end
local key, source = KEYS[1], KEYS[4]
if not scored then key, source = KEYS[2], KEYS[5] end
local whole = not bad_types({KEYS[1], 'zset', KEYS[2], 'zset', KEYS[4], 'zset', KEYS[5], 'zset'})
if not began and not whole then
  -- The other order's keys are bad data (the audit reports them), so no fill: the former
  -- 60 s cache of this order, as the book builds it.
  if redis.call('EXISTS', key) == 0 then
    redis.call('ZINTERSTORE', key, 2, KEYS[3], source, 'AGGREGATE', 'MAX')
    redis.call('EXPIRE', key, every)
  end
elseif not began then
  local fill = tonumber(ARGV[9])
  if not group_fill_step(KEYS[3], KEYS[1], KEYS[2], KEYS[4], KEYS[5], KEYS[7], name, fill, now) then
    return {S.RETRY}
  end
elseif scored then
  -- One step of the vote sweep: "T member S" while one runs (its cursor in time:<g>, and
  -- when its last step was taken: the next waits ARGV[10] s, so reads close together pay
  -- for one step between them, not one each).
  local at = redis.call('HGET', KEYS[7], name .. ':at')
  if at then
    local stepped = tonumber(string.match(at, '^%S+ %S+ (%S+)$') or '')
    if stepped and now >= stepped and now - stepped < tonumber(ARGV[10]) then at = nil end
    if at then at = string.match(at, '^%S+ %S+') or at end
  elseif now - tonumber(began) >= every then
    at = exact(tonumber(began) - tonumber(ARGV[5]))
    redis.call('HSET', KEYS[7], name, exact(now))
  end
  if at then
    local ft, fm = frontier_of(at)
    local first = frontier_index(KEYS[2], ft, fm)
    local rows = redis.call('ZRANGE', KEYS[2], first, first + step - 1, 'WITHSCORES')
    local members = {}
    for i = 1, #rows, 2 do members[#members + 1] = rows[i] end
    if #members > 0 then
      -- One ZADD of every score: value (an unchanged one is a look-up and no write, not
      -- replicated), not a second ZMSCORE and a call a member: the step's cost is its
      -- look-ups in two large zsets, which grow dearer with the store (cache misses).
      local want = redis.call('ZMSCORE', KEYS[4], unpack(members))
      local set, gone = {}, {}
      for i = 1, #members do
        if want[i] then
          set[#set + 1] = want[i]; set[#set + 1] = members[i]
        else
          gone[#gone + 1] = members[i]
        end
      end
      if #set > 0 then redis.call('ZADD', KEYS[1], unpack(set)) end
      if #gone > 0 then redis.call('ZREM', KEYS[1], unpack(gone)) end
    end
    if #members < step then
      redis.call('HDEL', KEYS[7], name .. ':at')
    else
      redis.call('HSET', KEYS[7], name .. ':at',
        rows[#rows] .. ' ' .. rows[#rows - 1] .. ' ' .. exact(now))
    end
  end
end

local page, hid = unhidden_page(key, KEYS[8] or '', ARGV[3], ARGV[4])
local reply = {S.OK, redis.call('ZCARD', key) - hid, description or '', size}
for i = 1, #page do reply[#reply + 1] = page[i] end
return reply
