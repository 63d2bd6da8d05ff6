-- comment_reindex.lua: put one comment's search entries in step with its text
-- (reindex_search, check_votes --repair), or drop one stale entry. Safe to run again.
-- KEYS[1] comment:<cid>  ARGV[1] "index" | "drop"
-- "index": ARGV[2] the hash's `words` as read  ARGV[3] text as read  ARGV[4] state as
--   read  ARGV[5] the words to index (search.comment_words of the text; "" for a
--   tombstone or with comment search off)
--   Returns {S.COMMENT_NOT_FOUND} | {S.RETRY} changed since read | {S.OK, changed 0/1}
-- "drop": KEYS[2] comment_postings:<w>  ARGV[2] the word: remove the comment's id from
--   KEYS[2] unless its `words` holds the word (a comment that is gone holds none).
--   Returns {S.OK, 1} removed | {S.OK, 0} the entry holds (or is already gone)
local member = KEYS[1]
local posting = comment_id_of(member) -- the sets hold ids: intsets
if ARGV[1] == 'drop' then
  local bad = bad_types({KEYS[2], 'set', member, 'hash'})
  if bad then return bad end
  local words = redis.call('HGET', member, 'words')
  if words and string.find(' ' .. words .. ' ', ' ' .. ARGV[2] .. ' ', 1, true) then
    return {S.OK, 0}
  end
  return {S.OK, redis.call('SREM', KEYS[2], posting)}
end

local bad = bad_types({member, 'hash'}) or comment_index_bad(member, ARGV[5])
if bad then return bad end
local f = redis.call('HMGET', member, 'words', 'text', 'state', 'time')
if not f[4] then return {S.COMMENT_NOT_FOUND} end
if (f[1] or '') ~= ARGV[2] or (f[2] or '') ~= ARGV[3] or (f[3] or '') ~= ARGV[4] then
  return {S.RETRY}
end
local keep, changed = {}, 0
for _, k in ipairs(comment_word_keys(ARGV[5])) do keep[k] = true end
for _, k in ipairs(comment_word_keys(f[1]) or {}) do
  if not keep[k] and redis.call('TYPE', k)['ok'] == 'set' then
    changed = changed + redis.call('SREM', k, posting)
  end
end
for k in pairs(keep) do changed = changed + redis.call('SADD', k, posting) end
if ARGV[5] == '' then
  changed = changed + redis.call('HDEL', member, 'words')
elseif f[1] ~= ARGV[5] then
  redis.call('HSET', member, 'words', ARGV[5])
  changed = changed + 1
end
return {S.OK, changed > 0 and 1 or 0}
