-- comment_rows.lua: comments outside a thread in one call: a page of a listing zset
-- (comments:, user_comments:<pk>: newest first), the newest visible comments of an
-- article (comments_all:<aid>, for its feed), or one comment; each with its article's
-- title and the viewer's vote.
-- KEYS[1] the listing zset, or the comment:<cid> (mode "one"); KEYS: comment:<cid>, ...
-- (mode "members")
-- ARGV[1] "list" | "visible" | "one" | "members"  ARGV[2] start  ARGV[3] stop (list), or how many
-- (visible)  ARGV[4] the viewer's user:<pk> ("" for none)
-- Returns {S.OK, count of the listing, then per comment: id, n, field, value, ...,
--   article title, up flag, down flag}. A key of the wrong type is read as missing.
-- The listings are scored by post time in whole seconds; newest first means by score,
-- then by comment id (the counter's order), which ZREVRANGE alone does not give: it
-- orders equal scores as text, "comment:9" before "comment:10".
local mode, viewer = ARGV[1], ARGV[4]

local reply = {S.OK, 0}
local function emit(member, fields)
  local cid = comment_id_of(member)
  reply[#reply + 1] = cid
  reply[#reply + 1] = #fields
  local article = ''
  for i = 1, #fields, 2 do
    reply[#reply + 1] = fields[i]
    reply[#reply + 1] = fields[i + 1]
    if fields[i] == 'article' then article = fields[i + 1] end
  end
  local title = article_id_of(article) and try('HGET', article, 'title')
  reply[#reply + 1] = title or ''
  if viewer == '' then
    reply[#reply + 1] = 0; reply[#reply + 1] = 0
  else
    reply[#reply + 1] = try('SISMEMBER', 'comment_voted:' .. cid, viewer) or 0
    reply[#reply + 1] = try('SISMEMBER', 'comment_voted_down:' .. cid, viewer) or 0
  end
end

-- Higher id first: ids are digit strings without leading zeros, so the longer is higher.
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

local function row(member)
  if not comment_id_of(member) then return nil end
  local fields = try('HGETALL', member)
  if not fields or #fields == 0 then return nil end
  return fields
end

-- Comment search (issue 24): KEYS are a page of comment:<cid>, answered in that order;
-- one that is gone is left out.
if mode == 'members' then
  for _, member in ipairs(KEYS) do
    local fields = row(member)
    if fields then
      reply[2] = reply[2] + 1
      emit(member, fields)
    end
  end
  return reply
end

if mode == 'one' then
  local fields = row(KEYS[1])
  if not fields then return {S.COMMENT_NOT_FOUND} end
  reply[2] = 1
  emit(KEYS[1], fields)
  return reply
end
reply[2] = try('ZCARD', KEYS[1]) or 0
if mode == 'list' then
  for _, member in ipairs(newest(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))) do
    local fields = row(member)
    if fields then emit(member, fields) end
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
    local fields = row(member)
    if fields and found < want then
      local state = ''
      for i = 1, #fields, 2 do if fields[i] == 'state' then state = fields[i + 1] end end
      if state == '' then
        emit(member, fields)
        found = found + 1
      end
    end
  end
end
return reply
