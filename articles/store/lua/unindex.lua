-- unindex.lua: drop a stale search entry: postings:<w> holds the article's id, but the
-- article is gone or no longer has the word (reindex_search, check_votes --repair).
-- KEYS[1] postings:<w>  KEYS[2] article:<id>  ARGV[1] <id>  ARGV[2] the word
-- ARGV[3] title, ARGV[4] text, ARGV[5] link as read, whose search words lack ARGV[2]
--   (all "" when the article was gone)
-- Returns {S.OK, 1} removed | {S.OK, 0} already gone | {S.RETRY} the article changed since
local bad = bad_types({KEYS[1], 'set', KEYS[2], 'hash'})
if bad then return bad end
if redis.call('EXISTS', KEYS[2]) == 1 and not content_as_read(KEYS[2], 3) then
  return {S.RETRY}
end
return {S.OK, redis.call('SREM', KEYS[1], ARGV[1])}
