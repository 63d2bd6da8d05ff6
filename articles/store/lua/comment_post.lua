-- comment_post.lua: add one comment (top level or a reply) in one step: its hash, its
-- place in its parent's two orderings, the article's list and count, the parent's reply
-- count, the site-wide and the author's lists. Every check comes before the first write.
-- KEYS[1] article:<aid>  KEYS[2] comment:<cid>  KEYS[3] best ordering (comments:<aid> or
-- replies:<pid>)  KEYS[4] new ordering (comments_new:<aid> or replies_new:<pid>)
-- KEYS[5] the parent comment:<pid> (KEYS[2] for a top-level comment)  KEYS[6] comments:
-- KEYS[7] user_comments:<pk>  KEYS[8] comments_all:<aid>
-- KEYS[9] comment_idempotency:<pk>:<token> (KEYS[2] when none)
-- KEYS[10] inbox:<to>  KEYS[11] inbox_state:<to>, of the user the comment answers (the
--   article's poster, or the parent's author): KEYS[2] both when none
-- KEYS[12] live: (the `comment` event, and the answered user's `inbox` event when the
--   comment enters their inbox; see live_event in _lib.lua)
-- ARGV[1] comment id  ARGV[2] user:<pk>  ARGV[3] author name  ARGV[4] text
-- ARGV[5] now ("" for Redis' own clock)  ARGV[6] commenting time after the post (s)
-- ARGV[7] max depth  ARGV[8] idempotency ttl (0: none)  ARGV[9] request fingerprint
-- ARGV[10] the comment's search words (search.comment_words; "" for none)
-- ARGV[11] user:<to> ("" for none)  ARGV[12] how many replies an inbox keeps
-- ARGV[13] live events kept (ARTICLES_LIVE_EVENTS; 0 or absent: none written)
-- The reply goes into user:<to>'s inbox only if that user still is the poster or parent
-- author (read here, so a forgotten account gets none) and is not the commenter; the
-- inbox keeps its newest ARGV[12], trimmed here: constant work a comment.
-- The idempotency key keeps "<id>:<time>:<depth>:<fingerprint>", so a repeat is answered
-- with the comment as it was created, even if it was deleted since.
-- Returns {S.OK, time, depth} | {S.REPEATED, id, time, depth} | {S.KEY_REUSED, id}
--   | {S.NOT_FOUND}
--   | {S.COMMENTING_CLOSED} | {S.COMMENT_NOT_FOUND} parent missing or of another article
--   | {S.COMMENT_GONE} parent deleted | {S.TOO_DEEP, max depth} | {S.ID_TAKEN, author}
local bad = bad_types(live_specs({KEYS[1], 'hash', KEYS[2], 'hash', KEYS[3], 'zset',
  KEYS[4], 'zset', KEYS[5], 'hash', KEYS[6], 'zset', KEYS[7], 'zset', KEYS[8], 'zset',
  KEYS[9], 'string'}, KEYS[12], ARGV[13]))
  or bad_counts(KEYS[1], {'comments'})
local to = ARGV[11] or '' -- a caller naming no inbox (a bulk load) sends none
if not bad and to ~= '' then
  bad = bad_types({KEYS[10], 'zset', KEYS[11], 'hash'}) or bad_counts(KEYS[11], {'seq'})
end
if bad then return bad end
local idem_ttl = tonumber(ARGV[8])
if idem_ttl > 0 then
  local prior = redis.call('GET', KEYS[9])
  if prior then
    local id, posted, depth, print = string.match(prior, '^(%d+):(%d+):(%d+):(%x+)$')
    if id and print == ARGV[9] then return {S.REPEATED, id, posted, depth} end
    return {S.KEY_REUSED, id or ''}
  end
end
local posted = redis.call('HGET', KEYS[1], 'time')
if not posted then return {S.NOT_FOUND} end
bad = bad_time(KEYS[1], posted)
if bad then return bad end
local now = math.floor(clock(ARGV[5]))
if now >= tonumber(posted) + tonumber(ARGV[6]) then return {S.COMMENTING_CLOSED} end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {S.ID_TAKEN, redis.call('HGET', KEYS[2], 'author') or ''}
end
local depth, parent = 0, ''
local answered = redis.call('HGET', KEYS[1], 'poster')
if KEYS[5] ~= KEYS[2] then
  local p = redis.call('HMGET', KEYS[5], 'article', 'state', 'depth', 'author')
  if p[1] ~= KEYS[1] then return {S.COMMENT_NOT_FOUND} end
  if (p[2] or '') ~= '' then return {S.COMMENT_GONE, p[2]} end
  bad = bad_counts(KEYS[5], {'depth', 'replies'})
  if bad then return bad end
  depth = (tonumber(p[3]) or 0) + 1
  if depth > tonumber(ARGV[7]) then return {S.TOO_DEEP, ARGV[7]} end
  parent = KEYS[5]
  answered = p[4]
end

-- Search (comment_index in _lib.lua): its comment_postings:<word> sets, checked before any
-- write.
bad = comment_index_bad(KEYS[2], ARGV[10])
if bad then return bad end

local cid = tonumber(ARGV[1])
-- No `edited`, `state` or `reason` until there is one to keep: every reader takes a
-- missing one as empty (a visible comment, never edited), and the three cost 32 B.
redis.call('HSET', KEYS[2], 'article', KEYS[1], 'parent', parent, 'author', ARGV[2],
  'author_name', ARGV[3], 'text', ARGV[4], 'time', now, 'votes', 0,
  'downvotes', 0, 'depth', depth, 'replies', 0)
redis.call('ZADD', KEYS[3], comment_best(cid, 0, 0), KEYS[2])
redis.call('ZADD', KEYS[4], ARGV[1], KEYS[2])
if parent ~= '' then redis.call('HINCRBY', parent, 'replies', 1) end
redis.call('HINCRBY', KEYS[1], 'comments', 1)
redis.call('ZADD', KEYS[6], now, KEYS[2])
redis.call('ZADD', KEYS[7], now, KEYS[2])
redis.call('ZADD', KEYS[8], now, KEYS[2])
comment_index(KEYS[2], ARGV[10], '')
live_event(KEYS[12], ARGV[13], 'e', 'comment', 'a', article_id_of(KEYS[1]) or '',
  'c', ARGV[1], 'p', comment_id_of(parent) or '')
if to ~= '' and to ~= ARGV[2] and answered == to then
  local seq = redis.call('HINCRBY', KEYS[11], 'seq', 1)
  redis.call('ZADD', KEYS[10], seq, KEYS[2])
  redis.call('ZREMRANGEBYRANK', KEYS[10], 0, -(tonumber(ARGV[12]) + 1))
  local read = redis.call('HGET', KEYS[11], 'read') or '0'
  live_event(KEYS[12], ARGV[13], 'e', 'inbox', 'u', string.match(to, '^user:(%d+)$') or '',
    'n', redis.call('ZCOUNT', KEYS[10], '(' .. read, '+inf'))
end
if idem_ttl > 0 then
  redis.call('SET', KEYS[9], ARGV[1] .. ':' .. string.format('%d', now) .. ':' .. depth
    .. ':' .. ARGV[9], 'EX', idem_ttl)
end
return {S.OK, now, depth}
