-- comment_thread.lua: one page of an article's comment thread in one call, whatever the
-- thread's size: the article, a page of its top-level comments (or of the focus
-- comment's replies) in the order asked, and under each its replies depth-first in the
-- same order, down to the display depth and up to a cap on rows; with each comment the
-- viewer's vote. Replies are taken a level at a time within what the cap leaves, so
-- siblings come before the deep replies of the first of them.
-- The page's time is its rows: every string that crosses into Lua (~0.1-0.3 µs each,
-- with the command's arguments) and each command's own cost. So a row is one HMGET of
-- the values the caller decodes (no field names), and a command runs only where that
-- read cannot answer: no ZCARD under a comment whose `replies` is 0 (the count every
-- script moves with the orderings; the audit checks it), none after a ZREVRANGE that
-- got fewer than it asked for (that was all of them), no SISMEMBER on a voter set
-- whose count in the hash is 0 (comment_vote.lua moves both together).
-- KEYS[1] article:<aid>  KEYS[2] the root ordering: comments:<aid> / comments_new:<aid>,
-- or replies:<fid> / replies_new:<fid> with a focus  KEYS[3] voted:<aid>
-- KEYS[4] voted_down:<aid>  KEYS[5] the focus comment:<fid> (KEYS[1] for none)
-- ARGV[1] "best" | "new"  ARGV[2] start  ARGV[3] stop (of the root ordering)
-- ARGV[4] display depth (levels shown below the root)  ARGV[5] cap on reply rows
-- ARGV[6] the viewer's user:<pk> ("" for none)  ARGV[7..] the comment fields to read,
-- among them votes, downvotes and replies
-- Returns {S.NOT_FOUND} | {S.COMMENT_NOT_FOUND} the focus is not this article's
--   | {S.OK, count of the root ordering, n, article field, value, ... (n values),
--     article up flag, down flag, then per comment: id, more (0/1), {the value of each
--     field asked, nil when absent}, up flag, down flag}. A key of the wrong type is
--     read as missing (check_votes reports it), so one bad comment never takes a
--     thread down.
local viewer, display = ARGV[6], tonumber(ARGV[4])
local kids_prefix = ARGV[1] == 'new' and 'replies_new:' or 'replies:'
local fields, at = {}, {}
for i = 7, #ARGV do
  fields[i - 6] = ARGV[i]
  at[ARGV[i]] = i - 6
end
local nf = #fields
local up_at, down_at, replies_at = at['votes'], at['downvotes'], at['replies']

local article = try('HGETALL', KEYS[1])
if not article or #article == 0 then return {S.NOT_FOUND} end
if KEYS[5] ~= KEYS[1] then
  local of = try('HGET', KEYS[5], 'article')
  if of ~= KEYS[1] then return {S.COMMENT_NOT_FOUND} end
end

local reply = {S.OK, try('ZCARD', KEYS[2]) or 0, #article}
local n = 3
for i = 1, #article do reply[n + i] = article[i] end
n = n + #article
reply[n + 1] = viewer == '' and 0 or (try('SISMEMBER', KEYS[3], viewer) or 0)
reply[n + 2] = viewer == '' and 0 or (try('SISMEMBER', KEYS[4], viewer) or 0)
n = n + 2

local function flag(prefix, cid, count) return comment_flag(prefix, cid, count, viewer) end

-- One comment's row, or nil (and nothing added) when its hash is missing. Returns the
-- position of its `more` and its `replies` value. (try() inlined: once a row.)
local rcall = redis.pcall
local function row(member, cid)
  local f = rcall('HMGET', member, unpack(fields))
  if f.err then
    if string.find(f.err, 'WRONGTYPE', 1, true) then return nil end
    return error(f.err)
  end
  if not f[1] then
    local found = false
    for i = 2, nf do
      if f[i] then found = true; break end
    end
    if not found then return nil end
  end
  local more_at = n + 2
  reply[n + 1], reply[more_at], reply[n + 3] = cid, 0, f
  reply[n + 4] = flag('comment_voted:', cid, f[up_at])
  reply[n + 5] = flag('comment_voted_down:', cid, f[down_at])
  n = n + 5
  return more_at, f[replies_at]
end

local budget = tonumber(ARGV[5])

local function emit(member, level)
  local cid = comment_id_of(member)
  if not cid then return end
  local more_at, replies = row(member, cid)
  if not more_at or replies == '0' then return end
  local kids_key = kids_prefix .. cid
  if level + 1 >= display or budget <= 0 then
    if (try('ZCARD', kids_key) or 0) > 0 then reply[more_at] = 1 end
    return
  end
  local asked = budget
  local kids = try('ZREVRANGE', kids_key, 0, asked - 1) or {}
  budget = budget - #kids
  if #kids == asked and (try('ZCARD', kids_key) or 0) > asked then reply[more_at] = 1 end
  for _, kid in ipairs(kids) do emit(kid, level + 1) end
end

if KEYS[5] ~= KEYS[1] then
  -- The focus heads the page; its replies are the page's root level.
  row(KEYS[5], comment_id_of(KEYS[5]))
end
local root_level = KEYS[5] ~= KEYS[1] and 1 or 0
for _, member in ipairs(try('ZREVRANGE', KEYS[2], ARGV[2], ARGV[3]) or {}) do
  emit(member, root_level)
end
return reply
