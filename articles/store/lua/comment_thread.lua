-- comment_thread.lua: one page of an article's comment thread in one call, whatever the
-- thread's size: the article, a page of its top-level comments (or of the focus
-- comment's replies) in the order asked, and under each its replies depth-first in the
-- same order, down to the display depth and up to a cap on rows; with each comment the
-- viewer's vote. Replies are taken a level at a time within what the cap leaves, so
-- siblings come before the deep replies of the first of them.
-- KEYS[1] article:<aid>  KEYS[2] the root ordering: comments:<aid> / comments_new:<aid>,
-- or replies:<fid> / replies_new:<fid> with a focus  KEYS[3] voted:<aid>
-- KEYS[4] voted_down:<aid>  KEYS[5] the focus comment:<fid> (KEYS[1] for none)
-- ARGV[1] "best" | "new"  ARGV[2] start  ARGV[3] stop (of the root ordering)
-- ARGV[4] display depth (levels shown below the root)  ARGV[5] cap on reply rows
-- ARGV[6] the viewer's user:<pk> ("" for none)
-- Returns {S.NOT_FOUND} | {S.COMMENT_NOT_FOUND} the focus is not this article's
--   | {S.OK, count of the root ordering, n, article field, value, ... (n values),
--     article up flag, down flag, then per comment: id, more (0/1), n, field, value, ...,
--     up flag, down flag}. A key of the wrong type is read as missing (check_votes
--     reports it), so one bad comment never takes a thread down.
local viewer, display = ARGV[6], tonumber(ARGV[4])
local kids_prefix = ARGV[1] == 'new' and 'replies_new:' or 'replies:'

local function flags(up_key, down_key, reply)
  if viewer == '' then
    reply[#reply + 1] = 0; reply[#reply + 1] = 0
  else
    reply[#reply + 1] = try('SISMEMBER', up_key, viewer) or 0
    reply[#reply + 1] = try('SISMEMBER', down_key, viewer) or 0
  end
end

local article = try('HGETALL', KEYS[1])
if not article or #article == 0 then return {S.NOT_FOUND} end
if KEYS[5] ~= KEYS[1] then
  local of = try('HGET', KEYS[5], 'article')
  if of ~= KEYS[1] then return {S.COMMENT_NOT_FOUND} end
end

local reply = {S.OK, try('ZCARD', KEYS[2]) or 0, #article}
for i = 1, #article do reply[#reply + 1] = article[i] end
flags(KEYS[3], KEYS[4], reply)

local budget = tonumber(ARGV[5])

local function emit(member, level)
  local cid = comment_id_of(member)
  local fields = cid and try('HGETALL', member)
  if not fields or #fields == 0 then return end
  reply[#reply + 1] = cid
  local more_at = #reply + 1
  reply[more_at] = 0
  reply[#reply + 1] = #fields
  for i = 1, #fields do reply[#reply + 1] = fields[i] end
  flags('comment_voted:' .. cid, 'comment_voted_down:' .. cid, reply)
  local kids_key = kids_prefix .. cid
  local count = try('ZCARD', kids_key) or 0
  if count == 0 then return end
  if level + 1 >= display or budget <= 0 then
    reply[more_at] = 1
    return
  end
  local kids = try('ZREVRANGE', kids_key, 0, budget - 1) or {}
  budget = budget - #kids
  if #kids < count then reply[more_at] = 1 end
  for _, kid in ipairs(kids) do emit(kid, level + 1) end
end

if KEYS[5] ~= KEYS[1] then
  -- The focus heads the page; its replies are the page's root level.
  local cid = comment_id_of(KEYS[5])
  local fields = try('HGETALL', KEYS[5]) or {}
  reply[#reply + 1] = cid
  reply[#reply + 1] = 0
  reply[#reply + 1] = #fields
  for i = 1, #fields do reply[#reply + 1] = fields[i] end
  flags('comment_voted:' .. cid, 'comment_voted_down:' .. cid, reply)
end
local root_level = KEYS[5] ~= KEYS[1] and 1 or 0
for _, member in ipairs(try('ZREVRANGE', KEYS[2], ARGV[2], ARGV[3]) or {}) do
  emit(member, root_level)
end
return reply
