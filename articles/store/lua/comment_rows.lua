-- comment_rows.lua: comments outside a thread in one call: a page of a listing zset
-- (comments:, user_comments:<pk>: newest first), the newest visible comments of an
-- article (comments_all:<aid>, for its feed), or one comment; each with its article's
-- title and the viewer's vote.
-- A row is one HMGET of the values the caller decodes (no field names: the strings
-- crossing into Lua are most of a row's time), as in comment_thread.lua, and no
-- SISMEMBER on a voter set whose count in the hash is 0 (comment_vote.lua moves both).
-- KEYS[1] the listing zset, or the comment:<cid> (mode "one"); KEYS: comment:<cid>, ...
-- (mode "members")
-- ARGV[1] "list" | "visible" | "one" | "members"  ARGV[2] start  ARGV[3] stop (list), or how many
-- (visible)  ARGV[4] the viewer's user:<pk> ("" for none)  ARGV[5..] the comment fields
-- to read, among them article, state, votes and downvotes
-- Returns {S.OK, count of the listing, then per comment: id, {the value of each field
--   asked, nil when absent}, article title, up flag, down flag}; in a list, a member
--   whose hash is gone is answered with 0 for its values (archived: store/archive.py,
--   read from the database by the caller). A key of the wrong type is read as missing.
-- The listings are scored by post time in whole seconds; newest first means by score,
-- then by comment id (the counter's order), which ZREVRANGE alone does not give: it
-- orders equal scores as text, "comment:9" before "comment:10".
local mode, viewer = ARGV[1], ARGV[4]
local fields, place = {}, {}
for i = 5, #ARGV do
  fields[i - 4] = ARGV[i]
  place[ARGV[i]] = i - 4
end
local nf = #fields
local article_at, state_at = place['article'], place['state']
local up_at, down_at = place['votes'], place['downvotes']

local reply = {S.OK, 0}

local function flag(prefix, cid, count) return comment_flag(prefix, cid, count, viewer) end

local function emit(member, values)
  local cid = comment_id_of(member)
  local article = values[article_at] or ''
  local title = article_id_of(article) and try('HGET', article, 'title')
  local n = #reply
  reply[n + 1], reply[n + 2], reply[n + 3] = cid, values, title or ''
  reply[n + 4] = flag('comment_voted:', cid, values[up_at])
  reply[n + 5] = flag('comment_voted_down:', cid, values[down_at])
end

local function later(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end

-- The members at ranks start..stop of a time-scored listing, newest first with equal
-- times by id. It reads the whole of the page's first and last seconds, so a page costs
-- its size plus the comments sharing those two seconds.
local function newest(key, start, stop)
  local edge = try('ZREVRANGE', key, start, stop, 'WITHSCORES') or {}
  if #edge == 0 then return {} end
  local hi, lo = edge[2], edge[#edge]
  local above = try('ZCOUNT', key, '(' .. hi, '+inf')
  local flat = try('ZREVRANGEBYSCORE', key, hi, lo, 'WITHSCORES')
  local rows = {}
  for i = 1, #flat, 2 do
    rows[#rows + 1] = {flat[i], tonumber(flat[i + 1]), comment_id_of(flat[i]) or ''}
  end
  table.sort(rows, function(a, b)
    if a[2] ~= b[2] then return a[2] > b[2] end
    if a[3] ~= b[3] then return later(a[3], b[3]) end
    return a[1] > b[1]
  end)
  local members = {}
  for i = start - above + 1, math.min(stop - above + 1, #rows) do
    members[#members + 1] = rows[i][1]
  end
  return members
end

-- The values of a comment's fields, or nil when its hash is missing (or not a hash).
local function row(member)
  if not comment_id_of(member) then return nil end
  local values = try('HMGET', member, unpack(fields))
  if not values then return nil end
  for i = 1, nf do
    if values[i] then return values end
  end
  return nil
end

-- Comment search (issue 24): KEYS are a page of comment:<cid>, answered in that order.
-- A listed member whose hash is gone (archived: the caller reads it from the database)
-- is answered with 0 for its values.
local function gone(member)
  if not comment_id_of(member) then return end
  local n = #reply
  reply[n + 1], reply[n + 2], reply[n + 3], reply[n + 4], reply[n + 5] =
    comment_id_of(member), 0, '', 0, 0
end

if mode == 'members' then
  for _, member in ipairs(KEYS) do
    local values = row(member)
    if values then
      reply[2] = reply[2] + 1
      emit(member, values)
    else
      gone(member)
    end
  end
  return reply
end

if mode == 'one' then
  local values = row(KEYS[1])
  if not values then return {S.COMMENT_NOT_FOUND} end
  reply[2] = 1
  emit(KEYS[1], values)
  return reply
end
reply[2] = try('ZCARD', KEYS[1]) or 0
if mode == 'list' then
  for _, member in ipairs(newest(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))) do
    local values = row(member)
    if values then emit(member, values) else gone(member) end
  end
  return reply
end
-- "visible": the newest `want` visible ones, looking at no more than 20 x want.
local want, found, at = tonumber(ARGV[3]), 0, 0
while found < want and at < 20 * want do
  local chunk = newest(KEYS[1], at, at + want - 1)
  if #chunk == 0 then break end
  at = at + #chunk
  for _, member in ipairs(chunk) do
    local values = row(member)
    if values and found < want then
      if (values[state_at] or '') == '' then
        emit(member, values)
        found = found + 1
      end
    end
  end
end
return reply
