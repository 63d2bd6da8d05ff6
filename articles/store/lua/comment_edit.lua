-- comment_edit.lua: its author changes a comment's text within the edit window.
-- KEYS[1] comment:<cid>
-- ARGV[1] user:<pk>  ARGV[2] text  ARGV[3] now ("" for Redis' clock)  ARGV[4] edit window (s)
-- ARGV[5] the new text's search words (search.comment_words; "" for none)
-- ARGV[6] the search words of the text as read  ARGV[7] their `seen` (comment_as_read)
-- Returns {S.COMMENT_NOT_FOUND} | {S.NOT_AUTHOR} | {S.COMMENT_GONE, state}
--   | {S.EDIT_CLOSED} | {S.RETRY} changed since read | {S.OK, field, value, ...} the hash
local bad = bad_types({KEYS[1], 'hash'})
if bad then return bad end
local c = redis.call('HMGET', KEYS[1], 'author', 'state', 'time')
if not c[3] then return {S.COMMENT_NOT_FOUND} end
if (c[2] or '') ~= '' then return {S.COMMENT_GONE, c[2]} end
if c[1] ~= ARGV[1] then return {S.NOT_AUTHOR} end
bad = bad_time(KEYS[1], c[3])
if bad then return bad end
local now = clock(ARGV[3])
if now >= tonumber(c[3]) + tonumber(ARGV[4]) then return {S.EDIT_CLOSED} end
-- Search (comment_index in _lib.lua): its sets follow the new text.
bad = comment_index_bad(KEYS[1], ARGV[5])
if bad then return bad end
if not comment_as_read(KEYS[1], ARGV[7]) then return {S.RETRY} end
comment_index(KEYS[1], ARGV[5], ARGV[6])
redis.call('HSET', KEYS[1], 'text', ARGV[2], 'edited', math.floor(now))
local reply = {S.OK}
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields do reply[#reply + 1] = fields[i] end
return reply
