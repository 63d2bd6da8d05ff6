-- unindex.lua: drop a stale search entry: postings:<w> holds the article's id, but the
-- article is gone or no longer has the word (reindex_search, check_votes --repair).
-- KEYS[1] postings:<w>  KEYS[2] article:<id>  ARGV[1] <id>  ARGV[2] the word
-- Returns {S.OK, 1} removed | {S.OK, 0} the entry holds (or is already gone)
local bad = bad_types({KEYS[1], 'set', KEYS[2], 'hash'})
if bad then return bad end
local words = redis.call('HGET', KEYS[2], 'words')
if words and string.find(' ' .. words .. ' ', ' ' .. ARGV[2] .. ' ', 1, true) then
  return {S.OK, 0}
end
return {S.OK, redis.call('SREM', KEYS[1], ARGV[1])}
