-- archive_comments.lua: one bounded batch of an archived article's comments taken out of
-- Redis (the database holds them: store/archive.py wrote them before the article left),
-- so an article with 100,000 comments never holds Redis for long. As article_purge.lua,
-- but nothing is deleted for readers: the votes stay in their authors' comment_karma:,
-- and the site's and the authors' comment lists (comments:, user_comments:<pk>) and the
-- replies inboxes (inbox:<pk>) keep naming them, read from the database. Keys are named
-- from each comment's id, as every walk of a thread does (_lib.lua).
-- KEYS[1] comments_all:<aid>  KEYS[2] archive:  KEYS[3] article:<aid>
-- ARGV[1] article:<aid>  ARGV[2] how many comments at most
-- ARGV[3..] member, seen, search words of each comment the caller read of the batch
--   (comments_given in _lib.lua): the batch stops at a comment it has none for
-- The article is dequeued when its list is empty, or when the article exists again (an
-- import reused the id: its comments are not ours to take away).
-- Returns {S.OK, comments left}
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('TYPE', KEYS[1])['ok'] ~= 'zset' then
  redis.call('SREM', KEYS[2], ARGV[1])
  return {S.OK, 0}
end
local given = comments_given(3)
local batch = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local done = {}
for _, member in ipairs(batch) do
  local cid = comment_id_of(member)
  if cid and redis.call('TYPE', member)['ok'] == 'hash'
    and redis.call('HGET', member, 'article') == ARGV[1] then
    if not comment_unindex_given(member, given) then break end
    comment_unlink(member, cid)
  end
  done[#done + 1] = member
end
if #done > 0 then redis.call('ZREM', KEYS[1], unpack(done)) end
local left = redis.call('ZCARD', KEYS[1])
if left == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
return {S.OK, left}
