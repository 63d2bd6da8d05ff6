-- search.lua: one page of a search (Redis in Action ch. 7): the articles holding every
-- included word and none of the excluded ones, optionally in a group and posted since a
-- time, ordered by score, time or net votes, with work bounded per call whatever the size
-- of the store. The ordered result is kept in one of a fixed number of cache slots for a
-- short time; Redis runs scripts one at a time, so however many requests for one search
-- arrive together, each step of it is done once.
-- KEYS[1] search:<slot>  KEYS[2] search:<slot>:q (which search the slot holds, and how far
-- it has got)  KEYS[3] search:<slot>:tmp (names "no group" in KEYS[7]; nothing is
-- written there)  KEYS[4] score:  KEYS[5] time:
-- KEYS[6] votes:  KEYS[7] group:<g> (KEYS[3] when no group)  KEYS[8] search:stemmer
-- KEYS[9 .. 8+t] postings:<stem> of the t words, included then excluded
-- KEYS[9+t .. 8+2t] postings:<word as typed> of each (its KEYS[8+i] when the same)
-- KEYS[9+2t .. 8+3t] search:<slot>:u<i>, scratch unions of the two, deleted here
-- KEYS[9+3t] votes:<period> (votes: when none)  KEYS[10+3t] votes:periods
-- ARGV[1] the search, spelled one way (order, group, period, words)  ARGV[2] ttl (s)
-- ARGV[3] start  ARGV[4] stop  ARGV[5] "score" | "time" | "votes"
-- ARGV[6] how many of the t words are included  ARGV[7] earliest post time or ""
-- ARGV[8] the stemmer's language (conf.search_language)  ARGV[9] BUILD_MAX  ARGV[10] STEP
-- ARGV[11] the period's name ("" for all time)  ARGV[12] SMALL_SET
-- ARGV[13] what a ranking's member holds before the id the words' sets hold: "article:"
--   (postings:<w>) or "comment:" (comment_postings:<w>)
-- Returns {S.OK, count, exact (1 | 0), more (1 | 0), member, ...}: `exact` 0 when count
-- is an estimate; `more` 1 when the page may lack results not reached yet (call again:
-- the next call goes on from where this one stopped).
-- Until reindex_search has built the whole index with this language (and says so in
-- search:stemmer), articles indexed before may hold the word as typed ("tools") rather
-- than its stem ("tool"): each such word then reads both sets, so a search finds at least
-- what it found before the change while the index is rebuilt.
--
-- Two ways to a result, chosen per search, both bounded:
-- * Build when that costs at most BUILD_MAX member operations: the smallest candidate
--   set (an included word's, the group's, or the period's articles) is read and each of
--   its members asked of the other sets once per pass, as the book's ZINTERSTORE walks
--   its smallest input. The result is whole, its count exact.
-- * Walk otherwise: read the order's own ranking (score:, time: or votes:, net votes as
--   score: - time: / 432, SPEC §1) from the top, STEP members a call at most, keep those
--   every set holds and no excluded set does (SMISMEMBER per set, smallest first; the
--   period by time), in the slot with the ranking's score, and stop once the page and one
--   more are found. The slot's :q remembers how many ranks were read, so the next page or
--   the next call goes on from there. Ties come out alike both ways: the slot holds the
--   ranking's scores, and a sorted set orders equal scores by member. Until the walk has
--   read the whole ranking the count is estimated (found so far over ranks read, times
--   the ranking's size, at most the smallest set's), except for one word alone, whose set
--   is the result. By newest within a period, the walk ends at the period's start.
-- A single word with nothing else is walked even when small, when the expected reads (page
-- end x ranking / SCARD, twice over) are fewer than SCARD; a walk that has read as many
-- members as the smallest set holds, and found too few, builds the result after all
-- (which costs about that much).
local cache, query = KEYS[1], KEYS[2]
local grouped = KEYS[7] ~= KEYS[3]
local t = (#KEYS - 10) / 3
local period_votes, period_state = KEYS[#KEYS - 1], KEYS[#KEYS]
local n = tonumber(ARGV[6])
local specs = {cache, 'zset', query, 'string', KEYS[4], 'zset', KEYS[5], 'zset',
  KEYS[6], 'zset', KEYS[8], 'string', period_votes, 'zset', period_state, 'hash'}
if grouped then specs[#specs + 1] = KEYS[7]; specs[#specs + 1] = 'set' end
local bad = bad_types(word_specs(specs, 8, 3 * t))
if bad then return bad end

local BUILD_MAX = tonumber(ARGV[9]) -- member operations a build may cost (BUILD_COST)
local STEP = tonumber(ARGV[10]) -- ranking members a call of the walk reads at most
-- The words' sets (postings:<w> or comment_postings:<w>, and the scratch unions of them)
-- hold ids, not article:<id> or comment:<id>: Redis keeps a set of integers as an intset,
-- 4 bytes a member, looked up by bisection. Every other set here (a group's) holds the
-- rankings' own members.
local PREFIX = ARGV[13]
local id_sets = {}
for i = 9, 8 + 3 * t do id_sets[KEYS[i]] = true end
local function ids_of(members)
  local ids, from = {}, #PREFIX + 1
  for j = 1, #members do ids[j] = string.sub(members[j], from) end
  return ids
end
-- A set of at most SMALL_SET strings is a listpack (Redis 7.2+), which SMISMEMBER scans
-- once per member asked (2,000 against 512 members: 3.1 ms); such a set is read into a
-- table once a call instead (~0.2 ms). `holds` answers as SMISMEMBER does, for members
-- as the rankings hold them (article:<id> or comment:<id>).
local SMALL_SET = tonumber(ARGV[12])
local small_sets = {}
local function holds(key, members)
  if id_sets[key] then return redis.call('SMISMEMBER', key, unpack(ids_of(members))) end
  if redis.call('SCARD', key) > SMALL_SET then
    return redis.call('SMISMEMBER', key, unpack(members))
  end
  local set = small_sets[key]
  if not set then
    set = {}
    for _, m in ipairs(redis.call('SMEMBERS', key)) do set[m] = true end
    small_sets[key] = set
  end
  local out = {}
  for j = 1, #members do out[j] = set[members[j]] and 1 or 0 end
  return out
end
local WALK_MARGIN = 2

local order = ARGV[5]
local ranking = order == 'time' and KEYS[5] or order == 'votes' and KEYS[6] or KEYS[4]
local earliest = ARGV[7] ~= '' and tonumber(ARGV[7]) or nil
local start, stop = tonumber(ARGV[3]), tonumber(ARGV[4])
local want = stop + 2 -- the page and one more: whether a next page exists
local ttl = tonumber(ARGV[2])
-- By votes within a period, the walk reads the period's own ranking when the writes keep
-- it (votes:<p>: every article after its frontier; not while it is being backfilled), and
-- the frontier has not passed the period's start by more than the cache's lifetime (a
-- search's window may be that old): the period's articles are few among all of votes:.
if order == 'votes' and earliest and ARGV[11] ~= '' then
  local kept = redis.call('HMGET', period_state, ARGV[11], ARGV[11] .. ':fill')
  local since = kept[1] and tonumber(string.match(kept[1], '^(%S+)'))
  if since and not kept[2] and since <= earliest + ttl then ranking = period_votes end
end

-- The sets each word reads: its stem's, and while bridging the typed word's too.
local bridged = redis.call('GET', KEYS[8]) ~= ARGV[8]
local sets_of, bridging = {}, false
for i = 1, t do
  sets_of[i] = {KEYS[8 + i]}
  if bridged and KEYS[8 + t + i] ~= KEYS[8 + i] then
    sets_of[i][2] = KEYS[8 + t + i]
    bridging = true
  end
end

-- What the slot holds: "<the search>\n<ranks read or all> <members>". While bridging,
-- "tools" and "tool" are one search (one stem) reading different typed sets: the slot
-- names them. A slot whose members are not all there (evicted) is started again.
local spelled = ARGV[1]
if bridging then
  for i = 1, t do spelled = spelled .. ' ' .. (sets_of[i][2] or '') end
end
local held = redis.call('GET', query)
local state
if held then
  local was, progress, members = string.match(held, '^(.*)\n(%w+) (%d+)$')
  if was == spelled and tonumber(members) == redis.call('ZCARD', cache) then
    state = progress
  end
end

local function answer(count, exact, more)
  local reply = {S.OK, count, exact and 1 or 0, more and 1 or 0}
  local page = redis.call('ZREVRANGE', cache, start, stop)
  for i = 1, #page do reply[#reply + 1] = page[i] end
  return reply
end

-- Build: the smallest candidate source's members (the period's articles, the group's, or
-- an included word's), kept if every other source holds them and no excluded word does,
-- each with its score in the order's ranking, as ZINTERSTORE of them all would give
-- (net votes as score: - time:, weights 1 and -1, written with every digit). The words'
-- sets hold ids, so they are asked of, not intersected with the rankings.
local function build()
  redis.call('DEL', cache)
  local words = {}
  for i = 1, t do
    words[i] = KEYS[8 + i]
    if sets_of[i][2] then
      words[i] = KEYS[8 + 2 * t + i]
      redis.call('SUNIONSTORE', words[i], KEYS[8 + i], KEYS[8 + t + i])
    end
  end
  local source, size = nil, math.huge
  for i = 1, n do
    local c = redis.call('SCARD', words[i])
    if c < size then source, size = i, c end
  end
  local group_size = grouped and redis.call('SCARD', KEYS[7]) or math.huge
  local period_size = earliest and redis.call('ZCOUNT', KEYS[5], earliest, '+inf') or math.huge
  local members, from = {}, source
  if period_size < math.min(size, group_size) then
    members, from = redis.call('ZRANGE', KEYS[5], earliest, '+inf', 'BYSCORE'), 'period'
  elseif group_size < size then
    members, from = redis.call('SMEMBERS', KEYS[7]), 'group'
  elseif source then
    members = redis.call('SMEMBERS', words[source])
    for j = 1, #members do members[j] = PREFIX .. members[j] end
  end
  local function keep(key, wanted)
    if #members == 0 then return end
    local out, kept = holds(key, members), {}
    for j = 1, #members do
      if (out[j] == 1) == wanted then kept[#kept + 1] = members[j] end
    end
    members = kept
  end
  for i = 1, n do
    if i ~= from then keep(words[i], true) end
  end
  if grouped and from ~= 'group' then keep(KEYS[7], true) end
  for i = n + 1, t do keep(words[i], false) end
  local ranked = order == 'time' and KEYS[5] or KEYS[4]
  local scores = #members > 0 and redis.call('ZMSCORE', ranked, unpack(members)) or {}
  local times = (earliest or order == 'votes') and #members > 0
    and redis.call('ZMSCORE', KEYS[5], unpack(members)) or {}
  local args = {'ZADD', cache}
  for j = 1, #members do
    local score, posted = scores[j], times[j]
    if score and (not earliest or (posted and tonumber(posted) >= earliest)) then
      if order == 'votes' then
        score = posted and string.format('%.17g', tonumber(score) - tonumber(posted))
      end
      if score then
        args[#args + 1] = score
        args[#args + 1] = members[j]
      end
    end
    if #args >= 2000 then redis.call(unpack(args)); args = {'ZADD', cache} end
  end
  if #args > 2 then redis.call(unpack(args)) end
  redis.call('DEL', unpack(KEYS, 9 + 2 * t, 8 + 3 * t))
  redis.call('EXPIRE', cache, ttl)
  local count = redis.call('ZCARD', cache)
  redis.call('SET', query, spelled .. '\nall ' .. count, 'EX', ttl)
  return answer(count, true, false)
end

if state == 'all' then return answer(redis.call('ZCARD', cache), true, false) end

-- The candidate sets' sizes: each included word's (both sets while bridging), the group's.
local sizes, smallest = {}, math.huge
for i = 1, t do
  local size = 0
  for _, k in ipairs(sets_of[i]) do size = size + redis.call('SCARD', k) end
  sizes[i] = size
  if i <= n then smallest = math.min(smallest, size) end
end
if grouped then smallest = math.min(smallest, redis.call('SCARD', KEYS[7])) end
local in_period = earliest and redis.call('ZCOUNT', KEYS[5], earliest, '+inf') or nil
local candidates = math.min(smallest, in_period or math.huge)
-- By newest within a period, the period's articles are the ranking's first ranks.
local total = order == 'time' and in_period or redis.call('ZCARD', ranking)
-- What building costs: the intersection reads the smallest candidate set once per pass,
-- and an exclusion or a period takes two more passes (copy and difference, or scores and
-- trim): in member operations, measured at ~0.3 µs each.
local build_cost = candidates * (1 + (t > n and 2 or 0) + (earliest and 2 or 0))
local alone = t == 1 and n == 1 and not grouped and not earliest and not bridging

local fresh = not state
if fresh then
  local walk_alone = alone and order ~= 'votes' and smallest > 0
    and want * total * WALK_MARGIN < smallest * smallest
  if not walk_alone and build_cost <= BUILD_MAX then return build() end
  redis.call('DEL', cache)
  state = '0'
end

local read = tonumber(state)
local found = redis.call('ZCARD', cache)
-- The checks, most selective first: {kind, sets, required}.
local checks = {}
for i = 1, t do
  checks[#checks + 1] = {sets_of[i], i <= n, sizes[i]}
end
if grouped then checks[#checks + 1] = {{KEYS[7]}, true, redis.call('SCARD', KEYS[7])} end
table.sort(checks, function(a, b)
  if a[2] ~= b[2] then return a[2] end
  return a[3] < b[3]
end)

local spent = 0
while found < want and read < total and spent < STEP do
  if read >= candidates and build_cost <= BUILD_MAX then return build() end
  local chunk
  if found > 0 then
    chunk = math.ceil((want - found) * read / found * 1.2)
  else
    chunk = math.ceil(want * total / math.max(candidates, 1) * 1.2)
  end
  chunk = math.min(STEP - spent, math.max(100, chunk))
  if build_cost <= BUILD_MAX then chunk = math.min(chunk, candidates - read) end
  chunk = math.min(chunk, total - read)
  local members = redis.call('ZREVRANGE', ranking, read, read + chunk - 1)
  if #members == 0 then break end
  read = read + #members
  spent = spent + #members
  for _, check in ipairs(checks) do
    if #members == 0 then break end
    local hit = {}
    for _, k in ipairs(check[1]) do
      local replies = holds(k, members)
      for j = 1, #members do
        if replies[j] == 1 then hit[j] = true end
      end
    end
    local kept = {}
    for j = 1, #members do
      if (hit[j] == true) == check[2] then kept[#kept + 1] = members[j] end
    end
    members = kept
  end
  if earliest and order ~= 'time' and #members > 0 then
    local times = redis.call('ZMSCORE', KEYS[5], unpack(members))
    local kept = {}
    for j = 1, #members do
      if times[j] and tonumber(times[j]) >= earliest then kept[#kept + 1] = members[j] end
    end
    members = kept
  end
  if #members > 0 then
    local scores = redis.call('ZMSCORE', ranking, unpack(members))
    local args = {'ZADD', cache}
    for j, m in ipairs(members) do
      args[#args + 1] = scores[j] or 0 -- gone since read: it leaves when the slot does
      args[#args + 1] = m
    end
    redis.call(unpack(args))
    found = redis.call('ZCARD', cache) -- a rank read again (the ranking moved) counts once
  end
end

-- The slot lives `ttl` from the walk's start, however many calls go on with it.
local finished = read >= total
local progress = spelled .. '\n' .. (finished and 'all' or tostring(read)) .. ' ' .. found
if fresh then
  redis.call('SET', query, progress, 'EX', ttl)
else
  redis.call('SET', query, progress, 'KEEPTTL')
end
if found > 0 then redis.call('PEXPIRE', cache, redis.call('PTTL', query)) end
if finished then return answer(found, true, false) end
if alone then return answer(smallest, true, found < want) end
local estimate = read > 0 and math.floor(found * total / read) or candidates
estimate = math.max(found, math.min(estimate, candidates))
return answer(estimate, false, found < want)
