-- post.lua: create one article atomically (the book's post_article, plus our indexes).
-- KEYS[1] article:<id>  KEYS[2] voted:<id>  KEYS[3] score:  KEYS[4] time:  KEYS[5] good:
-- KEYS[6] submitted:<pk>  KEYS[7] links:<b> of the link (KEYS[1] when none)  KEYS[8] groups:
-- KEYS[9] stats:posts
-- KEYS[10] the article the link already maps to (KEYS[1] when none)
-- KEYS[11] idempotency:<pk>:<token> (KEYS[1] when none)
-- KEYS[12] votes:  KEYS[13..17] keys.PERIOD_KEYS (votes:<period> each, votes:periods)
-- KEYS[18] domain:<d> of the link's site (KEYS[1] when none)
-- KEYS[19] live: (a new article appends its `post` event; see live_event in _lib.lua)
-- KEYS[20..] per group: group:<g>, score:<g>, time:<g>, groups:ranked (keys.group_keys)
-- KEYS[last #words] postings:<w> for each search word of ARGV[17], in its order
-- ARGV[1] article:<id>  ARGV[2] user:<pk>  ARGV[3] title  ARGV[4] link  ARGV[5] text
-- ARGV[6] poster name  ARGV[7] now (Unix s; "" for Redis' own clock)  ARGV[8] vote score
-- ARGV[9] window (s)  ARGV[10] good-article votes
-- ARGV[11] the link's field in KEYS[7] (keys.link_slot) or ""
-- ARGV[12] idempotency ttl (0: none)  ARGV[13] groups "a,b"  ARGV[14] article id
-- ARGV[15] the member the link mapped to when the caller looked ("" for none)
-- ARGV[16] fingerprint of the request (validation.post_fingerprint), kept with the key
-- ARGV[17] the search words "w1 w2 ..." (search.article_words of title, text and link)
-- ARGV[18] live events kept (ARTICLES_LIVE_EVENTS; 0: none written)
-- Returns {S.OK, post time} posted
--   | {S.REPEATED, id, post time} the same request was already posted with this key
--     (post time absent for a key written before fingerprints were kept)
--   | {S.KEY_REUSED, id} the key was used for a different request
--   | {S.ID_TAKEN, poster} this id exists | {S.NO_GROUP, name}
--   | {S.DUPLICATE_LINK, member} the link is posted and open
--   | {S.RETRY} the link index changed since the caller looked: read again and retry
local member, user = ARGV[1], ARGV[2]
local now = math.floor(clock(ARGV[7]))
local vote_score, window = tonumber(ARGV[8]), tonumber(ARGV[9])
local norm, idem_ttl = ARGV[11], tonumber(ARGV[12])
local words = split_words(ARGV[17])
local wk = #KEYS - #words -- KEYS[wk + i] is postings:<words[i]>

local specs = {KEYS[2], 'set', KEYS[3], 'zset', KEYS[4], 'zset', KEYS[5], 'zset',
  KEYS[6], 'zset', KEYS[7], 'hash', KEYS[8], 'hash', KEYS[9], 'hash', KEYS[10], 'hash',
  KEYS[11], 'string', KEYS[12], 'zset'}
word_specs(specs, wk, #words)
period_specs(specs, 13)
if KEYS[18] ~= KEYS[1] then specs[#specs + 1] = KEYS[18]; specs[#specs + 1] = 'zset' end
live_specs(specs, KEYS[19], ARGV[18])
group_specs(specs, 20, wk)
local bad = bad_types(specs) or bad_counts(KEYS[9], {utc_day(now)})
if bad then return bad end

if idem_ttl > 0 then
  local prior = redis.call('GET', KEYS[11])
  if prior then
    local id, posted, print = string.match(prior, '^(%d+):(%-?%d+):(%x+)$')
    if not id then return {S.REPEATED, prior} end
    if print ~= ARGV[16] then return {S.KEY_REUSED, id} end
    return {S.REPEATED, id, posted}
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {S.ID_TAKEN, redis.call('HGET', KEYS[1], 'poster') or ''}
end

local groups = {}
for name in string.gmatch(ARGV[13], '[^,]+') do
  if redis.call('HEXISTS', KEYS[8], name) == 0 then return {S.NO_GROUP, name} end
  groups[#groups + 1] = name
end

if norm ~= '' then
  local current = link_holder(KEYS[7], norm)
  if current ~= ARGV[15] then return {S.RETRY} end
  if current ~= '' then
    local posted = tonumber(redis.call('HGET', KEYS[10], 'time') or '')
    if posted and posted == posted and now < posted + window then return {S.DUPLICATE_LINK, current} end
  end
end

-- the poster's article_karma:<pk>: kept from a first article on (see _lib.lua)
local karma = article_karma_open(user, member, KEYS[12], true)
-- as the book's post_article, plus the poster's name; no `downvotes` until one (HINCRBY)
redis.call('HSET', KEYS[1], 'title', ARGV[3], 'link', ARGV[4], 'poster', user,
  'poster_name', ARGV[6], 'time', now, 'votes', 1)
hset_or_drop(KEYS[1], 'text', ARGV[5])
hset_or_drop(KEYS[1], 'groups', ARGV[13])
redis.call('SADD', KEYS[2], user)
redis.call('EXPIREAT', KEYS[2], math.ceil(now + window))
redis.call('ZADD', KEYS[3], now + vote_score, member)
period_start_empty(KEYS[4], 13, now)
redis.call('ZADD', KEYS[4], now, member)
redis.call('ZADD', KEYS[12], 1, member)
-- Into each kept period, and a few articles aged out of it (as many a post as age out
-- on average, with room to catch up): the reads find little or nothing left to trim.
period_set(13, member, now, 1)
for i = 1, #PERIODS do
  period_trim(KEYS[4], KEYS[12 + i], KEYS[17], PERIODS[i][1], now - PERIODS[i][2], 4, math.huge)
end
redis.call('ZADD', KEYS[6], now, member)
if norm ~= '' then link_take(KEYS[7], norm, member) end
if KEYS[18] ~= KEYS[1] then redis.call('ZADD', KEYS[18], now, member) end
redis.call('HINCRBY', KEYS[9], utc_day(now), 1)
if 1 >= tonumber(ARGV[10]) then redis.call('ZADD', KEYS[5], now, member) end
for i = 1, #groups do
  local k = 20 + (i - 1) * 4
  redis.call('SADD', KEYS[k], member)
  group_rank(k, member, KEYS[3], KEYS[4])
end
local posting = article_id_of(member) -- postings:<w> hold ids: intsets
for i = 1, #words do redis.call('SADD', KEYS[wk + i], posting) end
if idem_ttl > 0 then
  redis.call('SET', KEYS[11], ARGV[14] .. ':' .. string.format('%d', now) .. ':' .. ARGV[16],
    'EX', idem_ttl)
end
article_karma_close(karma)
live_event(KEYS[19], ARGV[18], 'e', 'post', 'a', ARGV[14])
return {S.OK, now}
