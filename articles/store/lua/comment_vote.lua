-- comment_vote.lua: set one user's vote on one comment to up (1), none (0) or down (-1),
-- with vote.lua's state semantics, and move the comment in its parent's best ordering.
-- The voter sets expire when the ARTICLE's voting window closes; after it, VOTING_CLOSED.
-- KEYS[1] comment:<cid>  KEYS[2] comment_voted:<cid>  KEYS[3] comment_voted_down:<cid>
-- (the article, the ordering and the author's comment_karma:<pk> are named from the
-- hash: see _lib.lua)
-- ARGV[1] comment id  ARGV[2] user:<pk>  ARGV[3] direction  ARGV[4] now ("": Redis' clock)
-- ARGV[5] window (s)  ARGV[6] live events kept (ARTICLES_LIVE_EVENTS; 0 or absent: none)
-- KEYS[4] live: (a counted change appends its `cvote` event; see live_event in _lib.lua)
-- Returns {S.COMMENT_NOT_FOUND} | {S.NOT_FOUND} | {S.VOTING_CLOSED} | {S.COMMENT_GONE, state}
--   | {S.OK, changed (0/1), vote now, field, value, ...} the comment's hash
local bad = bad_types(live_specs({KEYS[1], 'hash', KEYS[2], 'set', KEYS[3], 'set'},
  KEYS[4], ARGV[6]))
if bad then return bad end
local c = redis.call('HMGET', KEYS[1], 'article', 'parent', 'state', 'author')
if not c[1] then return {S.COMMENT_NOT_FOUND} end
if not article_id_of(c[1]) or ((c[2] or '') ~= '' and not comment_id_of(c[2])) then
  return {S.BAD_DATA, KEYS[1], 'names no article or parent a script can use'}
end
local best = comment_orderings(c[1], c[2] or '')
bad = bad_types({c[1], 'hash', best, 'zset'}) or bad_counts(KEYS[1], {'votes', 'downvotes'})
if bad then return bad end
local t = redis.call('HGET', c[1], 'time')
if not t then return {S.NOT_FOUND} end
bad = bad_time(c[1], t)
if bad then return bad end
t = tonumber(t)
local now, window = clock(ARGV[4]), tonumber(ARGV[5])
local expire_at = math.ceil(t + window)
if now >= t + window or server_time() >= expire_at then return {S.VOTING_CLOSED} end
if (c[3] or '') ~= '' then return {S.COMMENT_GONE, c[3]} end

local user, dir = ARGV[2], tonumber(ARGV[3])
local cur = current_vote(KEYS[2], KEYS[3], user)
local changed = 0
if cur ~= dir then
  changed = 1
  move_vote(KEYS[1], KEYS[2], KEYS[3], user, cur, dir, expire_at)
  karma_add(c[4], dir - cur) -- its author's comment karma, in the same step
  local counts = redis.call('HMGET', KEYS[1], 'votes', 'downvotes')
  redis.call('ZADD', best,
    comment_best(tonumber(ARGV[1]), tonumber(counts[1]) or 0, tonumber(counts[2]) or 0),
    KEYS[1])
  redis.call('HSET', KEYS[1], 'last_vote', now)
  live_event(KEYS[4], ARGV[6], 'e', 'cvote', 'a', article_id_of(c[1]), 'c', ARGV[1],
    'n', string.format('%d', (tonumber(counts[1]) or 0) - (tonumber(counts[2]) or 0)))
end
local reply = {S.OK, changed, dir}
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields do reply[#reply + 1] = fields[i] end
return reply
