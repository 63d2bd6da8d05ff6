-- reindex.lua: put one article's search words in step with its title, text and link
-- (reindex_search, check_votes --repair): for articles the book's code wrote, and after
-- the normalisation rules change. Safe to run again: a second run changes nothing.
-- KEYS[1] article:<id>  KEYS[2..] postings:<w> of each word of ARGV[2], then of ARGV[3]
-- ARGV[1] article:<id>  ARGV[2] the hash's `words` as read  ARGV[3] the words to index
-- ARGV[4] title as read  ARGV[5] text as read  ARGV[6] link as read
-- Returns {S.NOT_FOUND} | {S.RETRY} the article changed since read | {S.OK, changed 0/1}
local was_words, new_words = split_words(ARGV[2]), split_words(ARGV[3])
local bad = bad_types(word_specs({KEYS[1], 'hash'}, 1, #was_words + #new_words))
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {S.NOT_FOUND} end
local f = redis.call('HMGET', KEYS[1], 'words', 'title', 'text', 'link')
if (f[1] or '') ~= ARGV[2] or (f[2] or '') ~= ARGV[4] or (f[3] or '') ~= ARGV[5]
    or (f[4] or '') ~= ARGV[6] then
  return {S.RETRY}
end
local posting = article_id_of(ARGV[1])
local keep = {}
for _, w in ipairs(new_words) do keep[w] = true end
local changed = 0
for i = 1, #was_words do
  if not keep[was_words[i]] then
    changed = changed + redis.call('SREM', KEYS[1 + i], posting)
  end
end
for i = 1, #new_words do
  changed = changed + redis.call('SADD', KEYS[1 + #was_words + i], posting)
end
if ARGV[2] ~= ARGV[3] or not f[1] then
  redis.call('HSET', KEYS[1], 'words', ARGV[3])
  changed = changed + 1
end
return {S.OK, changed > 0 and 1 or 0}
