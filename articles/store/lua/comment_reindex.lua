-- comment_reindex.lua: put one comment's search entries in step with its text
-- (reindex_search, check_votes --repair), or drop one stale entry. Safe to run again.
-- The caller makes the words from the state and text it read and passes their `seen`
-- (comment_as_read in _lib.lua): a comment changed since is answered {S.RETRY}.
-- KEYS[1] comment:<cid>  ARGV[1] "index" | "drop"
-- "index": ARGV[2] seen  ARGV[3] the words to index (search.comment_words of the text; ""
--   for a tombstone or with comment search off). A former `words` field is dropped, and
--   its words' entries that ARGV[3] lacks.
--   Returns {S.COMMENT_NOT_FOUND} | {S.RETRY} | {S.OK, changed 0/1}
-- "drop": KEYS[2] comment_postings:<w>  ARGV[2] the word  ARGV[3] seen of a state and
--   text whose words lack ARGV[2] (any, when the comment is gone): remove the comment's
--   id from KEYS[2].
--   Returns {S.OK, 1} removed | {S.OK, 0} already gone | {S.RETRY}
local member = KEYS[1]
local posting = comment_id_of(member) -- the sets hold ids: intsets
if ARGV[1] == 'drop' then
  local bad = bad_types({KEYS[2], 'set', member, 'hash'})
  if bad then return bad end
  if redis.call('EXISTS', member) == 1 and not comment_as_read(member, ARGV[3]) then
    return {S.RETRY}
  end
  return {S.OK, redis.call('SREM', KEYS[2], posting)}
end

local bad = bad_types({member, 'hash'}) or comment_index_bad(member, ARGV[3])
if bad then return bad end
if not redis.call('HGET', member, 'time') then return {S.COMMENT_NOT_FOUND} end
if not comment_as_read(member, ARGV[2]) then return {S.RETRY} end
local keep, changed = {}, 0
for _, k in ipairs(comment_word_keys(ARGV[3])) do keep[k] = true end
for _, k in ipairs(comment_word_keys(redis.call('HGET', member, 'words')) or {}) do
  if not keep[k] and redis.call('TYPE', k)['ok'] == 'set' then
    changed = changed + redis.call('SREM', k, posting)
  end
end
for k in pairs(keep) do changed = changed + redis.call('SADD', k, posting) end
changed = changed + redis.call('HDEL', member, 'words')
return {S.OK, changed > 0 and 1 or 0}
