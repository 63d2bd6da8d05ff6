-- comment_repair.lua: check_votes --repair for comments, one small step a call, each
-- judged from what the store holds when it runs (so it is safe beside the site).
-- ARGV[1] mode, KEYS[1] what it acts on:
-- "comment" (KEYS[1] comment:<cid>; ARGV[2] now, ARGV[3] window, ARGV[4] cid, ARGV[5]
--   its search words as read, ARGV[6] their `seen`, comment_as_read in _lib.lua): put one
--   comment right from its hash: a comment of a missing article, or a tombstone with no
--   replies, is removed with its keys; a parent that is missing or of another article
--   makes it top level; its depth is its parent's + 1; while the article's window is
--   open the voter sets are the truth of its counts (a user in both counts as up) and
--   expire with the window; its entries in its parent's orderings (scores from its
--   counts), comments_all:<aid>, and, if visible, comments: and user_comments:<pk>.
-- "stale" (KEYS[1] a comment zset; ARGV[2] member): remove the member unless its hash
--   places it there.
-- "voters" (KEYS[1] comment_voted(_down):<cid>; ARGV[2] comment:<cid>): delete the set
--   if the comment is gone.
-- "count" (KEYS[1] article:<aid>; ARGV[2] the rank to go on from, ARGV[3] the visible
--   comments counted so far, ARGV[4] and ARGV[5] what the first step found in
--   comments_all:<aid>'s size and `comments`, ARGV[6] the comments a step reads): its
--   `comments` = the visible comments it lists, walked ARGV[6] at a time so a thread of
--   any length holds Redis no longer than a step; RETRY when a post or delete came between
--   two steps; a step that leaves some to walk returns {S.OK, 0, next rank, counted,
--   size, comments}.
-- "replies" (KEYS[1] comment:<cid>; ARGV[2] cid): its `replies` = its replies listed.
-- Returns {S.OK, 1 if it changed something else 0} | {S.BAD_DATA, key, what}
--   | {S.OK, 0, ...} ("count": more to walk)
--   | {S.RETRY} ("comment": its state or text changed since read; "count": a post or
--   delete came between two of its steps)
local mode = ARGV[1]

-- The keys a comment's hash places it in: {key = score or true}, or nil if it has none.
local function homes(member, f)
  local cid = comment_id_of(member)
  local aid = article_id_of(f.article)
  if not cid or not aid or redis.call('EXISTS', f.article) == 0 then return nil end
  local best, new = comment_orderings(f.article, f.parent)
  local h = {[best] = true, [new] = true, ['comments_all:' .. aid] = true}
  if f.state == '' then
    h['comments:'] = true
    local pk = string.match(f.author, '^user:([1-9]%d*)$')
    if pk then h['user_comments:' .. pk] = true end
  end
  return h
end

local function fields(member)
  local v = redis.call('HMGET', member, 'article', 'parent', 'author', 'state', 'time',
    'votes', 'downvotes', 'depth')
  if not v[1] then return nil end
  return {article = v[1], parent = v[2] or '', author = v[3] or '', state = v[4] or '',
    time = v[5], votes = v[6], downvotes = v[7], depth = v[8]}
end

local function remove_entirely(member, cid, f, words)
  local aid = article_id_of(f.article)
  comment_unindex(member, words) -- search: its comment_postings:<word> entries (_lib.lua)
  redis.call('DEL', member, 'comment_voted:' .. cid, 'comment_voted_down:' .. cid,
    'replies:' .. cid, 'replies_new:' .. cid)
  redis.call('ZREM', 'comments:', member)
  local pk = string.match(f.author, '^user:([1-9]%d*)$')
  if pk then redis.call('ZREM', 'user_comments:' .. pk, member) end
  if aid then
    redis.call('ZREM', 'comments_all:' .. aid, member)
    local best, new = comment_orderings(f.article, f.parent)
    redis.call('ZREM', best, member)
    redis.call('ZREM', new, member)
  end
end

if mode == 'stale' then
  local bad = bad_types({KEYS[1], 'zset'})
  if bad then return bad end
  local member = ARGV[2]
  local f = comment_id_of(member) and redis.call('TYPE', member)['ok'] == 'hash'
    and fields(member)
  local h = f and homes(member, f)
  if h and h[KEYS[1]] then return {S.OK, 0} end
  return {S.OK, redis.call('ZREM', KEYS[1], member)}
end

if mode == 'voters' then
  if redis.call('EXISTS', ARGV[2]) == 1 then return {S.OK, 0} end
  return {S.OK, redis.call('DEL', KEYS[1])}
end

if mode == 'count' then
  local bad = bad_types({KEYS[1], 'hash'})
  if bad then return bad end
  if redis.call('EXISTS', KEYS[1]) == 0 then return {S.OK, 0} end
  local aid = article_id_of(KEYS[1])
  local all = 'comments_all:' .. aid
  bad = bad_types({all, 'zset'})
  if bad then return bad end
  local start, visible, step = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[6])
  local total = redis.call('ZCARD', all)
  local count = redis.call('HGET', KEYS[1], 'comments') or ''
  -- Every post adds to comments_all: and to `comments`, every delete takes one from
  -- `comments`: the walk's earlier steps still count what is there only if neither moved.
  if start > 0 and (tostring(total) ~= ARGV[4] or count ~= ARGV[5]) then return {S.RETRY} end
  for _, member in ipairs(redis.call('ZRANGE', all, start, start + step - 1)) do
    local f = redis.call('TYPE', member)['ok'] == 'hash'
      and redis.call('HMGET', member, 'time', 'state')
    if f and f[1] and (f[2] or '') == '' then -- a comment, visible
      visible = visible + 1
    end
  end
  if start + step < total then return {S.OK, 0, start + step, visible, total, count} end
  if tonumber(count ~= '' and count or '0') == visible then return {S.OK, 0} end
  redis.call('HSET', KEYS[1], 'comments', visible)
  return {S.OK, 1}
end

if mode == 'replies' then
  local bad = bad_types({KEYS[1], 'hash', 'replies_new:' .. ARGV[2], 'zset'})
  if bad then return bad end
  if redis.call('EXISTS', KEYS[1]) == 0 then return {S.OK, 0} end
  redis.call('HSET', KEYS[1], 'replies', redis.call('ZCARD', 'replies_new:' .. ARGV[2]))
  return {S.OK, 1}
end

-- mode "comment"
local member, cid = KEYS[1], ARGV[4]
local up, down = 'comment_voted:' .. cid, 'comment_voted_down:' .. cid
local bad = bad_types({member, 'hash', up, 'set', down, 'set', 'replies:' .. cid, 'zset',
  'replies_new:' .. cid, 'zset', 'comments:', 'zset'})
if bad then return bad end
local f = fields(member)
if not f then
  redis.call('DEL', up, down, 'replies:' .. cid, 'replies_new:' .. cid)
  redis.call('ZREM', 'comments:', member)
  return {S.OK, 1}
end
local aid = article_id_of(f.article)
if not aid or (f.parent ~= '' and not comment_id_of(f.parent)) then
  return {S.BAD_DATA, member, 'names no article or parent a repair can use'}
end
local pk = string.match(f.author, '^user:([1-9]%d*)$')
local specs = {f.article, 'hash', 'comments_all:' .. aid, 'zset',
  'comments:' .. aid, 'zset', 'comments_new:' .. aid, 'zset'}
if f.parent ~= '' then
  local pid = comment_id_of(f.parent)
  for _, k in ipairs({f.parent, 'hash', 'replies:' .. pid, 'zset', 'replies_new:' .. pid, 'zset'}) do
    specs[#specs + 1] = k
  end
end
if pk then specs[#specs + 1] = 'user_comments:' .. pk; specs[#specs + 1] = 'zset' end
bad = bad_types(specs)
if bad then return bad end
local posted = redis.call('HGET', f.article, 'time')
local t = tonumber(f.time)
if not t or t ~= t then return {S.BAD_DATA, member, 'time is not a number'} end
if not posted or (f.state ~= '' and redis.call('ZCARD', 'replies_new:' .. cid) == 0) then
  if not comment_as_read(member, ARGV[6]) then return {S.RETRY} end
  remove_entirely(member, cid, f, ARGV[5])
  return {S.OK, 1}
end
-- Its parent: missing or of another article makes it top level.
local depth = 0
if f.parent ~= '' then
  local p = redis.call('HMGET', f.parent, 'article', 'depth')
  if p[1] ~= f.article then
    local best, new = comment_orderings(f.article, f.parent)
    redis.call('ZREM', best, member)
    redis.call('ZREM', new, member)
    f.parent = ''
  else
    depth = (tonumber(p[2]) or 0) + 1
  end
end
local votes, downvotes = tonumber(f.votes or '0'), tonumber(f.downvotes or '0')
local closes = tonumber(posted) + tonumber(ARGV[3])
if tonumber(ARGV[2]) < closes then
  local both = redis.call('SINTER', up, down)
  if #both > 0 then redis.call('SREM', down, unpack(both)) end
  votes, downvotes = redis.call('SCARD', up), redis.call('SCARD', down)
  redis.call('EXPIREAT', up, math.ceil(closes))
  redis.call('EXPIREAT', down, math.ceil(closes))
elseif not votes or not downvotes then
  return {S.BAD_DATA, member, 'votes or downvotes is not a number, and voting has closed'}
end
redis.call('HSET', member, 'parent', f.parent, 'depth', depth, 'votes', votes,
  'downvotes', downvotes)
local best, new = comment_orderings(f.article, f.parent)
redis.call('ZADD', best, comment_best(tonumber(cid), votes, downvotes), member)
redis.call('ZADD', new, cid, member)
redis.call('ZADD', 'comments_all:' .. aid, f.time, member)
if f.state == '' then
  redis.call('ZADD', 'comments:', f.time, member)
  if pk then redis.call('ZADD', 'user_comments:' .. pk, f.time, member) end
else
  redis.call('ZREM', 'comments:', member)
  if pk then redis.call('ZREM', 'user_comments:' .. pk, member) end
end
return {S.OK, 1}
