-- user_forget.lua: one bounded batch of a deleted account's items, each then attributed
-- to nobody: its owner field cleared and its name field set to the name shown instead,
-- so no listing shows the old name (which a new account may take) and nothing in the
-- store names the account. Each item renamed is taken off the index, so the index
-- empties (and is gone) when the last batch has run, and an interrupted run resumes.
-- KEYS[1] an index of the user's items (submitted:<pk>: article:<id> -> time;
--   user_comments:<pk>: comment:<id> -> time), each member naming an item hash
-- ARGV[1] the user's member (user:<pk>)  ARGV[2] the name to show instead ("[deleted]")
-- ARGV[3] "<owner field> <name field>" of its items ("poster poster_name",
--   "author author_name")  ARGV[4] how many items at most
-- KEYS[2] votes: (with submitted:<pk> only): each article's part leaves the account's
--   article_karma:<pk> as it leaves the index, and the figure goes with the last one
-- Items are renamed only while their owner field still names the user (an item's id may
-- have been reused by an import); a missing item is skipped.
-- Returns {S.OK, items renamed, items left} | {S.BAD_DATA, key, what}
local bad = bad_types({KEYS[1], 'zset'})
if bad then return bad end
local owner, name = string.match(ARGV[3], '^(%S+) (%S+)$')
local batch = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[4]) - 1)
local renamed = 0
-- articles (KEYS[2] votes:): each leaves submitted:<pk>, so its part leaves the figure
local karmas = {}
if KEYS[2] then
  for i, item in ipairs(batch) do karmas[i] = article_karma_open(ARGV[1], item, KEYS[2]) end
end
for _, item in ipairs(batch) do
  if redis.call('TYPE', item)['ok'] == 'hash' and redis.call('HGET', item, owner) == ARGV[1] then
    if owner == 'author' then -- a comment: its part of the account's comment karma goes
      local f = redis.call('HMGET', item, 'state', 'votes', 'downvotes')
      karma_add(ARGV[1], -karma_part(f[1], f[2], f[3]))
    end
    redis.call('HSET', item, owner, '', name, ARGV[2])
    renamed = renamed + 1
  end
end
if #batch > 0 then redis.call('ZREM', KEYS[1], unpack(batch)) end
for i = 1, #batch do article_karma_close(karmas[i]) end
local pk = string.match(ARGV[1], '^user:([1-9]%d*)$')
if KEYS[2] and pk and redis.call('EXISTS', KEYS[1]) == 0 then -- nothing left names the account
  redis.call('DEL', 'article_karma:' .. pk)
  if redis.call('TYPE', KARMA_FILL)['ok'] == 'hash' then redis.call('HDEL', KARMA_FILL, pk) end
end
return {S.OK, renamed, redis.call('ZCARD', KEYS[1])}
