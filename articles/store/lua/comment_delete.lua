-- comment_delete.lua: its author deletes a comment, or staff remove one (with a reason,
-- logged). A comment with replies stays as a tombstone (state "deleted" or "removed",
-- text, author and author_name cleared: shown as "[deleted]"/"[removed]"); one without
-- is removed entirely: its hash, voter sets, and places in its parent's orderings, the
-- article's list, the site-wide and the author's lists (and out of the author's
-- comment_karma:<pk>). A tombstone whose last reply
-- goes away is removed with it, up the thread. The article's `comments` (visible
-- comments) drops by one if the comment was visible, and a visible one leaves the inbox
-- of the user it answered (named from the hashes read, as the author's list is); the
-- replies to one left as a tombstone leave its author's inbox.
-- Checks come before the first write.
-- KEYS[1] comment:<cid>  KEYS[2] comments:  KEYS[3] modlog:
-- ARGV[1] "author" | "staff"  ARGV[2] user:<pk> (author)  ARGV[3] reason (staff)
-- ARGV[4] log entry ("" for none)  ARGV[5] log length kept
-- ARGV[6] the comment's search words as read  ARGV[7] their `seen` (comment_as_read)
-- Returns {S.COMMENT_NOT_FOUND} | {S.NOT_AUTHOR} | {S.COMMENT_GONE, state}
--   | {S.RETRY} changed since read | {S.OK, "tombstone" | "removed", comments removed entirely}
local bad = bad_types({KEYS[1], 'hash', KEYS[2], 'zset', KEYS[3], 'list'})
if bad then return bad end
local mode = ARGV[1]

-- What a removal touches, read and type-checked before any write.
local function info(member)
  local f = redis.call('HMGET', member, 'article', 'parent', 'author', 'state', 'votes',
    'downvotes')
  local cid = comment_id_of(member)
  if not f[1] or not cid then return nil end
  if not article_id_of(f[1]) or ((f[2] or '') ~= '' and not comment_id_of(f[2])) then
    return nil, {S.BAD_DATA, member, 'names no article or parent a script can use'}
  end
  local best, new = comment_orderings(f[1], f[2] or '')
  local c = {member = member, cid = cid, article = f[1], parent = f[2] or '',
    author = f[3] or '', state = f[4] or '', best = best, new = new,
    part = karma_part(f[4], f[5], f[6]),
    all = 'comments_all:' .. article_id_of(f[1])}
  local pk = string.match(c.author, '^user:([1-9]%d*)$')
  c.mine = pk and ('user_comments:' .. pk) or nil
  local specs = {f[1], 'hash', best, 'zset', new, 'zset', c.all, 'zset',
    'replies:' .. cid, 'zset', 'replies_new:' .. cid, 'zset',
    'comment_voted:' .. cid, 'set', 'comment_voted_down:' .. cid, 'set'}
  if c.parent ~= '' then specs[#specs + 1] = c.parent; specs[#specs + 1] = 'hash' end
  if c.mine then specs[#specs + 1] = c.mine; specs[#specs + 1] = 'zset' end
  local wrong = bad_types(specs) or bad_counts(f[1], {'comments'})
  if not wrong and c.parent ~= '' then wrong = bad_counts(c.parent, {'replies'}) end
  if wrong then return nil, wrong end
  -- Whose inbox it went to (comment_post.lua): its parent's author's, or its poster's.
  c.to = redis.call('HGET', c.parent ~= '' and c.parent or f[1],
    c.parent ~= '' and 'author' or 'poster')
  c.children = redis.call('ZCARD', 'replies_new:' .. cid)
  return c
end

local c, wrong = info(KEYS[1])
if wrong then return wrong end
if not c then return {S.COMMENT_NOT_FOUND} end
if mode == 'author' then
  if c.state ~= '' then return {S.COMMENT_GONE, c.state} end
  if c.author ~= ARGV[2] then return {S.NOT_AUTHOR} end
elseif c.state == 'removed' then
  return {S.COMMENT_GONE, c.state}
end
if not comment_as_read(c.member, ARGV[7]) then return {S.RETRY} end

-- The comments to remove entirely: this one if it has no replies, then each tombstone
-- above whose only reply that was.
local gone = {}
if c.children == 0 then
  gone[1] = c
  local below = c
  while below.parent ~= '' do
    local up, err = info(below.parent)
    if err then return err end
    if not up or up.state == '' or up.children ~= 1 then break end
    gone[#gone + 1] = up
    below = up
  end
end

-- Search (comment_unindex in _lib.lua): a tombstone or a removed comment is found by
-- no word. The tombstones removed with it have none (but a former `words` field).
comment_unindex(c.member, ARGV[6])
for _, g in ipairs(gone) do comment_unindex(g.member, '') end

if c.state == '' then
  if redis.call('EXISTS', c.article) == 1 then redis.call('HINCRBY', c.article, 'comments', -1) end
  redis.call('ZREM', KEYS[2], c.member)
  if c.mine then redis.call('ZREM', c.mine, c.member) end
  karma_add(c.author, -c.part) -- no longer visible: out of its author's comment karma
  inbox_remove(c.to, c.member)
  -- A tombstone names no author: the replies to it leave its author's inbox now, while
  -- the hash still says whose it is (bounded by the inbox's size).
  if #gone == 0 then inbox_drop(c.author, 'replies_new:' .. c.cid) end
end
if #gone == 0 then
  redis.call('HSET', c.member, 'state', mode == 'author' and 'deleted' or 'removed',
    'text', '', 'author', '', 'author_name', '')
  hset_or_drop(c.member, 'reason', mode == 'staff' and ARGV[3] or '')
else
  for _, g in ipairs(gone) do
    redis.call('DEL', g.member, 'comment_voted:' .. g.cid, 'comment_voted_down:' .. g.cid,
      'replies:' .. g.cid, 'replies_new:' .. g.cid)
    redis.call('ZREM', g.best, g.member)
    redis.call('ZREM', g.new, g.member)
    redis.call('ZREM', g.all, g.member)
    if g.parent ~= '' and redis.call('EXISTS', g.parent) == 1 then
      redis.call('HINCRBY', g.parent, 'replies', -1)
    end
  end
end
log_action(KEYS[3], ARGV[4], ARGV[5])
return {S.OK, #gone == 0 and 'tombstone' or 'removed', #gone}
