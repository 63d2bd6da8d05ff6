-- inbox_page.lua: a user's replies inbox in one call: how many replies it holds, how many
-- are unread, and a page of them (newest first) with each comment's fields and its
-- article's title. Reads only; a key of the wrong type is read as empty.
-- KEYS[1] inbox:<pk>  KEYS[2] inbox_state:<pk>  KEYS[3] (mode "count", optional) the
--   user's credential_epoch:<pk>, read in the same call (a logged-in page's one check)
-- ARGV[1] "page" (ranks ARGV[2]..ARGV[3]) | "count" (no replies) | "digest" (the newest
--   ARGV[3] unread replies not yet in a digest)  ARGV[2] start  ARGV[3] stop, or how many
-- Returns {S.OK, count, unread, read, digest, newest, then per reply: its number, comment
--   id, n, field, value, ..., article title}; a comment gone since has n = 0. In mode
--   "count" with KEYS[3]: {S.OK, count, unread, read, digest, newest, epoch or ""}.
-- Unread are the replies numbered above `read`: ZCOUNT, O(log n), whatever the inbox holds.
local mode = ARGV[1]
local function whole(v) return tonumber(v) and math.floor(tonumber(v)) or 0 end
local state = try('HMGET', KEYS[2], 'read', 'digest', 'seq') or {}
local read, digest = whole(state[1]), whole(state[2])
local reply = {S.OK, try('ZCARD', KEYS[1]) or 0, try('ZCOUNT', KEYS[1], '(' .. read, '+inf') or 0,
  read, digest, whole(state[3])}
if mode == 'count' then
  if KEYS[3] then reply[#reply + 1] = try('GET', KEYS[3]) or '' end
  return reply
end

local flat
if mode == 'digest' then
  flat = try('ZREVRANGEBYSCORE', KEYS[1], '+inf', '(' .. math.max(read, digest), 'WITHSCORES',
    'LIMIT', 0, tonumber(ARGV[3])) or {}
else
  flat = try('ZREVRANGE', KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]), 'WITHSCORES') or {}
end
for i = 1, #flat, 2 do
  local member = flat[i]
  local cid = comment_id_of(member)
  local fields = cid and try('HGETALL', member) or {}
  reply[#reply + 1] = flat[i + 1]
  reply[#reply + 1] = cid or 0
  reply[#reply + 1] = #fields
  local article = ''
  for j = 1, #fields, 2 do
    reply[#reply + 1] = fields[j]
    reply[#reply + 1] = fields[j + 1]
    if fields[j] == 'article' then article = fields[j + 1] end
  end
  reply[#reply + 1] = article_id_of(article) and try('HGET', article, 'title') or ''
end
return reply
