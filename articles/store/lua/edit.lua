-- edit.lua: change an article's title, link and text in one step, keeping the link index
-- and the search index (its words come from all three) in step; records `edited`.
-- KEYS[1] article:<id>  KEYS[2] links:<b> of the link as read (KEYS[1] when none)  KEYS[3] modlog:
-- KEYS[4] the article the new link maps to (KEYS[1] when none)
-- ARGV[1] article:<id>  ARGV[2] title  ARGV[3] link  ARGV[4] link as read
-- ARGV[5] the old link's field in KEYS[2], ARGV[6] the new link's in KEYS[7] (keys.link_slot;
--   "" for none)
-- ARGV[7] log entry  ARGV[8] log length kept
-- ARGV[9] the member the new link mapped to when the caller looked ("" for none)
-- ARGV[10] now ("" for Redis' own clock)  ARGV[11] window (s)
-- ARGV[12] the search words of ARGV[17..19]  ARGV[13] the new search words ("w1 w2 ...")
-- ARGV[14] text  ARGV[15] text as read
-- ARGV[16] "open": only while voting is open (a poster editing their own), else ""
-- ARGV[17] title, ARGV[18] text, ARGV[19] link as read (content_as_read in _lib.lua)
-- KEYS[5] domain:<d> of the link as read, KEYS[6] of the new link (KEYS[1] when none)
-- KEYS[7] links:<b> of the new link (KEYS[1] when none)
-- KEYS[8..] postings:<w> of each word of ARGV[12], then of each word of ARGV[13], in order
-- Returns {S.NOT_FOUND} | {S.RETRY} the link, text or index changed since read
--   | {S.VOTING_CLOSED} ARGV[16] is "open" and voting has closed
--   | {S.DUPLICATE_LINK, member} the new link belongs to another open article | {S.OK}
local was_words, new_words = split_words(ARGV[12]), split_words(ARGV[13])
local specs = word_specs({KEYS[1], 'hash', KEYS[2], 'hash', KEYS[3], 'list',
  KEYS[4], 'hash', KEYS[7], 'hash'}, 7, #was_words + #new_words)
for k = 5, 6 do
  if KEYS[k] ~= KEYS[1] then specs[#specs + 1] = KEYS[k]; specs[#specs + 1] = 'zset' end
end
local bad = bad_types(specs)
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {S.NOT_FOUND} end
if (redis.call('HGET', KEYS[1], 'link') or '') ~= ARGV[4] then return {S.RETRY} end
if not content_as_read(KEYS[1], 17) then return {S.RETRY} end
if (redis.call('HGET', KEYS[1], 'text') or '') ~= ARGV[15] then return {S.RETRY} end
if ARGV[16] == 'open' then
  local t = tonumber(redis.call('HGET', KEYS[1], 'time') or '')
  if not t or clock(ARGV[10]) >= t + tonumber(ARGV[11]) then return {S.VOTING_CLOSED} end
end
local member, old, new = ARGV[1], ARGV[5], ARGV[6]
if old ~= new and new ~= '' then
  -- As post.lua: a link maps to one open article; a closed one gives it up.
  local holder = link_holder(KEYS[7], new)
  if holder ~= ARGV[9] then return {S.RETRY} end
  if holder ~= '' and holder ~= member and KEYS[4] ~= KEYS[1] then
    local posted = redis.call('HGET', KEYS[4], 'time')
    if posted and clock(ARGV[10]) < tonumber(posted) + tonumber(ARGV[11]) then
      return {S.DUPLICATE_LINK, holder}
    end
  end
end
redis.call('HSET', KEYS[1], 'title', ARGV[2], 'link', ARGV[3],
  'edited', math.floor(clock(ARGV[10])))
hset_or_drop(KEYS[1], 'text', ARGV[14])
if old ~= new then
  link_release(KEYS[2], old, member)
  if new ~= '' then link_take(KEYS[7], new, member) end
end
-- The article moves to its new link's site, at its post time (a bad time: left for the audit).
if KEYS[5] ~= KEYS[6] and KEYS[5] ~= KEYS[1] then redis.call('ZREM', KEYS[5], member) end
local posted = tonumber(redis.call('HGET', KEYS[1], 'time') or '')
if KEYS[6] ~= KEYS[1] and posted and posted == posted
  and redis.call('HEXISTS', KEYS[1], 'held') == 0 then -- held for its flags: out of it
  redis.call('ZADD', KEYS[6], posted, member)
end
local posting = article_id_of(ARGV[1])
for i = 1, #was_words do redis.call('SREM', KEYS[7 + i], posting) end
for i = 1, #new_words do redis.call('SADD', KEYS[7 + #was_words + i], posting) end
redis.call('HDEL', KEYS[1], 'words')
log_action(KEYS[3], ARGV[7], ARGV[8])
return {S.OK}
