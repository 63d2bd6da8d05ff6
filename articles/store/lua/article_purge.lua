-- article_purge.lua: one bounded batch of a deleted article's comments, deleted with all
-- their keys, so deleting an article with 100,000 comments never holds Redis for long
-- (delete.lua took the article itself away, in one small step, and queued it in purge:).
-- Each comment's keys are named from its id, as every walk of a thread does (_lib.lua),
-- and the inbox its replies went to from its author (inbox_drop: bounded by the inbox).
-- KEYS[1] comments_all:<aid>  KEYS[2] comments:  KEYS[3] purge:  KEYS[4] article:<aid>
-- ARGV[1] article:<aid>  ARGV[2] how many comments at most
-- ARGV[3..] member, seen, search words of each comment the caller read of the batch
--   (comments_given in _lib.lua): the batch stops at a comment it has none for
-- A comment hash naming another article is only taken off this list (the audit judges
-- it); a key of the wrong type is never written to, only unlinked when it is the
-- comment's own. The article is dequeued when its list is empty, or when the article
-- exists again (an import reused the id: its comments are not ours to delete).
-- Returns {S.OK, comments left to purge}
if redis.call('EXISTS', KEYS[4]) == 1 or redis.call('TYPE', KEYS[1])['ok'] ~= 'zset' then
  redis.call('SREM', KEYS[3], ARGV[1])
  return {S.OK, 0}
end
local site = redis.call('TYPE', KEYS[2])['ok'] == 'zset'
local given = comments_given(3)
local batch = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local done = {}
for _, member in ipairs(batch) do
  local cid = comment_id_of(member)
  local kind = redis.call('TYPE', member)['ok']
  local author, ours, part = '', kind == 'none', 0
  if cid and kind == 'hash' then
    local f = redis.call('HMGET', member, 'article', 'author', 'state', 'votes', 'downvotes')
    ours = f[1] == ARGV[1]
    author = f[2] or ''
    part = karma_part(f[3], f[4], f[5])
  end
  if cid and ours then
    -- search: its comment_postings:<word> entries (_lib.lua)
    if not comment_unindex_given(member, given) then break end
    -- Its replies leave its author's inbox, while this hash still names the author.
    inbox_drop(author, 'replies_new:' .. cid)
    comment_unlink(member, cid)
    if site then redis.call('ZREM', KEYS[2], member) end
    local pk = string.match(author, '^user:([1-9]%d*)$')
    if pk and redis.call('TYPE', 'user_comments:' .. pk)['ok'] == 'zset' then
      redis.call('ZREM', 'user_comments:' .. pk, member)
    end
    karma_add(author, -part) -- its votes leave its author's comment_karma:<pk>
  end
  done[#done + 1] = member
end
if #done > 0 then redis.call('ZREM', KEYS[1], unpack(done)) end
local left = redis.call('ZCARD', KEYS[1])
if left == 0 then redis.call('SREM', KEYS[3], ARGV[1]) end
return {S.OK, left}
