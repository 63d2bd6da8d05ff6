-- search.lua: one page of a search (Redis in Action ch. 7): the articles holding every
-- included word and none of the excluded ones, optionally in a group and posted since a
-- time, ordered by score, time or net votes. The ordered result is cached in one of a
-- fixed number of slots for a short time; Redis runs scripts one at a time, so however
-- many requests for one search arrive together, it is computed once.
-- KEYS[1] search:<slot>  KEYS[2] search:<slot>:q (which search the slot holds)
-- KEYS[3] search:<slot>:tmp scratch  KEYS[4] score:  KEYS[5] time:
-- KEYS[6] group:<g> (KEYS[3] when no group)  KEYS[7] search:stemmer
-- KEYS[8 .. 7+t] idx:<stem> of the t words, included then excluded
-- KEYS[8+t .. 7+2t] idx:<word as typed> of each (its KEYS[7+i] when the same)
-- KEYS[8+2t .. 7+3t] search:<slot>:u<i>, scratch unions of the two, deleted here
-- ARGV[1] the search, spelled one way (order, group, period, words)  ARGV[2] ttl (s)
-- ARGV[3] start  ARGV[4] stop  ARGV[5] "score" | "time" | "votes"
-- ARGV[6] how many of the t words are included  ARGV[7] earliest post time or ""
-- ARGV[8] the stemmer's language (conf.search_language)
-- Returns {S.OK, count, member, ...}
-- Until reindex_search has built the whole index with this language (and says so in
-- search:stemmer), articles indexed before may hold the word as typed ("tools") rather
-- than its stem ("tool"): each such word then reads the union of both sets, so a search
-- finds at least what it found before the change while the index is rebuilt.
-- Net votes need no index of their own: score: - time: = 432 x (up - down) for every
-- article (SPEC §1), so "votes" orders by ZINTERSTORE score: time: WEIGHTS 1 -1.
--
-- Two ways to a page, chosen per search. Building the result (ZINTERSTORE) costs about
-- one lookup and one sorted-set insert per result: for a word in 6 % of 100,000
-- articles, 20-30 ms, most of a cold search (docs/performance.md). A page of one word
-- by score or time can instead be *walked*: read score: (or time:) from the top, a
-- chunk at a time, keep the members the word's set holds (SMISMEMBER), stop once the
-- page is full. That costs about page_end x ZCARD(order) / SCARD(word) membership
-- tests, small exactly when the result is big, and the count is SCARD. Equal scores
-- come out alike both ways: the built result holds the order's own scores (x 1, plus
-- the set's x 0), and a sorted set orders equal scores by member, ZREVRANGE in reverse.
-- So: walk when the search is one word, no exclusions, no group, no period, not by
-- votes (each of those needs the built result for its order or its count), and the
-- expected tests, twice over (WALK_MARGIN), are fewer than SCARD (what intersecting
-- reads). Members are not spread evenly, so the walk stops after SCARD members read
-- (about what intersecting would have cost) and builds the result after all. A walk is
-- not cached: it costs about as much as reading a cached page.
local cache, query, scratch = KEYS[1], KEYS[2], KEYS[3]
local grouped = KEYS[6] ~= KEYS[3]
local t = (#KEYS - 7) / 3
local specs = {cache, 'zset', query, 'string', KEYS[4], 'zset', KEYS[5], 'zset',
  KEYS[7], 'string'}
if grouped then specs[#specs + 1] = KEYS[6]; specs[#specs + 1] = 'set' end
local bad = bad_types(word_specs(specs, 7, 3 * t))
if bad then return bad end
-- The set each word reads: its stem's, or (bridging) the union made when building.
-- A bridged search is not read from the cache ("tool" may have filled the slot "tools"
-- shares), only written to it.
local words, bridged, unions = {}, redis.call('GET', KEYS[7]) ~= ARGV[8], false
for i = 1, t do
  words[i] = KEYS[7 + i]
  if bridged and KEYS[7 + t + i] ~= KEYS[7 + i] then unions = true end
end
local function bridge()
  for i = 1, t do
    if bridged and KEYS[7 + t + i] ~= KEYS[7 + i] then
      words[i] = KEYS[7 + 2 * t + i]
      redis.call('SUNIONSTORE', words[i], KEYS[7 + i], KEYS[7 + t + i])
    end
  end
end

local WALK_MARGIN = 2
local WALK_CHUNK_MAX = 5000 -- members a ZREVRANGE reads (and SMISMEMBER is given) at most

-- {S.OK, SCARD, the page} by walking `order_key`, or nil when building is cheaper.
local function walk(order_key, word, start, stop)
  local card = redis.call('SCARD', word)
  local total = redis.call('ZCARD', order_key)
  local want = stop + 1
  if card == 0 or want * total * WALK_MARGIN >= card * card then return nil end
  local chunk = math.min(WALK_CHUNK_MAX, math.max(100, math.ceil(want * total / card * 1.2)))
  local found, read = {}, 0
  while #found < want and read < total do
    if read >= card then return nil end -- the word's members are further down: build
    local members = redis.call('ZREVRANGE', order_key, read,
      read + math.min(chunk, card - read) - 1)
    if #members == 0 then break end
    local held = redis.call('SMISMEMBER', word, unpack(members))
    for i = 1, #members do
      if held[i] == 1 then
        found[#found + 1] = members[i]
        if #found == want then break end
      end
    end
    read = read + #members
  end
  local reply = {S.OK, card}
  for i = start + 1, #found do reply[#reply + 1] = found[i] end
  return reply
end

local cached = not unions and redis.call('GET', query) == ARGV[1]
if not cached and tonumber(ARGV[6]) == 1 and t == 1 and not grouped and ARGV[7] == ''
    and ARGV[5] ~= 'votes' and not unions then
  local walked = walk(ARGV[5] == 'time' and KEYS[5] or KEYS[4], KEYS[8],
    tonumber(ARGV[3]), tonumber(ARGV[4]))
  if walked then return walked end
end

if not cached then
  redis.call('DEL', cache, scratch)
  bridge()
  local n = tonumber(ARGV[6])
  local sets = {}
  for i = 1, n do sets[#sets + 1] = words[i] end
  if grouped then sets[#sets + 1] = KEYS[6] end
  if t > n then
    -- SDIFF walks its first set: the (small) intersection, not the excluded words' sets.
    redis.call('SINTERSTORE', scratch, unpack(sets))
    redis.call('SDIFFSTORE', scratch, scratch, unpack(words, n + 1, t))
    sets = {scratch}
  end
  local function into(dest, order_keys, order_weights)
    local args = {'ZINTERSTORE', dest, #sets + #order_keys}
    for _, k in ipairs(sets) do args[#args + 1] = k end
    for _, k in ipairs(order_keys) do args[#args + 1] = k end
    args[#args + 1] = 'WEIGHTS'
    for _ = 1, #sets do args[#args + 1] = 0 end
    for _, w in ipairs(order_weights) do args[#args + 1] = w end
    redis.call(unpack(args))
  end
  if ARGV[7] ~= '' then
    into(scratch, {KEYS[5]}, {1})
    redis.call('ZREMRANGEBYSCORE', scratch, '-inf', '(' .. ARGV[7])
    sets = {scratch}
  end
  if ARGV[5] == 'time' then
    into(cache, {KEYS[5]}, {1})
  elseif ARGV[5] == 'votes' then
    into(cache, {KEYS[4], KEYS[5]}, {1, -1})
  else
    into(cache, {KEYS[4]}, {1})
  end
  redis.call('DEL', scratch, unpack(KEYS, 8 + 2 * t, 7 + 3 * t))
  local ttl = tonumber(ARGV[2])
  redis.call('EXPIRE', cache, ttl)
  redis.call('SET', query, ARGV[1], 'EX', ttl)
end
local reply = {S.OK, redis.call('ZCARD', cache)}
local page = redis.call('ZREVRANGE', cache, ARGV[3], ARGV[4])
for i = 1, #page do reply[#reply + 1] = page[i] end
return reply
