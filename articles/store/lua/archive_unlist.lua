-- archive_unlist.lua: one bounded batch of a deleted archived article's comments taken
-- off what still names them in Redis (its hashes left with the archive; their rows are
-- deleted after): the site's and their authors' comment lists, the replies inbox each
-- went to, and their votes off their authors' comment_karma:, as article_purge.lua takes
-- a deleted article's. Keys are named from each comment's author and inbox owner
-- (user:<pk>), as the comment scripts name them (_lib.lua).
-- KEYS[1] comments:
-- ARGV: per comment, 4 each: comment:<id>, its author (user:<pk> or ""), its part of the
--   author's figure (up - down while visible, else 0), whose inbox it went to (or "")
-- Returns {S.OK}
local site = redis.call('TYPE', KEYS[1])['ok'] == 'zset'
for i = 1, #ARGV, 4 do
  local member, author, part, owner = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  if site then redis.call('ZREM', KEYS[1], member) end
  local pk = string.match(author, '^user:([1-9]%d*)$')
  if pk and redis.call('TYPE', 'user_comments:' .. pk)['ok'] == 'zset' then
    redis.call('ZREM', 'user_comments:' .. pk, member)
  end
  karma_add(author, -(part or 0))
  inbox_remove(owner, member)
end
return {S.OK}
