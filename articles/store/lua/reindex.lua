-- reindex.lua: put one article in the postings:<w> sets of the words its title, text and
-- link give (reindex_search, check_votes --repair): for articles the book's code wrote, and
-- after the rules of search.py change; entries for words it no longer has are unindex.lua's.
-- Drops the `words` field a hash written before kept. Safe to run again: a second run
-- changes nothing.
-- KEYS[1] article:<id>  KEYS[2..] postings:<w> of each word of ARGV[2]
-- ARGV[1] article:<id>  ARGV[2] the words to index (search.article_words of ARGV[3..5])
-- ARGV[3] title as read  ARGV[4] text as read  ARGV[5] link as read
-- Returns {S.NOT_FOUND} | {S.RETRY} the article changed since read | {S.OK, changed 0/1}
local words = split_words(ARGV[2])
local bad = bad_types(word_specs({KEYS[1], 'hash'}, 1, #words))
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {S.NOT_FOUND} end
if not content_as_read(KEYS[1], 3) then return {S.RETRY} end
local posting = article_id_of(ARGV[1])
local changed = redis.call('HDEL', KEYS[1], 'words')
for i = 1, #words do
  changed = changed + redis.call('SADD', KEYS[1 + i], posting)
end
return {S.OK, changed > 0 and 1 or 0}
