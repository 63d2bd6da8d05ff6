-- link_close.lua: release the links:<b> entries of articles whose voting closed, walking
-- time: from a frontier (links:closed), a bounded batch a call: a duplicate is refused
-- only while the article holding the link is open (post.lua, edit.lua), so a closed
-- article's entry is dead weight, and a year of them turns the buckets into hash tables
-- (71 B an entry against 18). The digest of a link is BLAKE2b, made in Python: the caller
-- reads a batch ("due"), makes each link's slot (keys.link_slot), then sends them back
-- ("close"), which checks the frontier and each link are still those read.
-- The frontier is a position in time:'s order as the periods' (frontier_of in _lib.lua):
-- "T" or "T article:<id>"; every article up to it has had its entry released.
-- KEYS[1] time:  KEYS[2] links:closed
-- "due": ARGV[2] cutoff (articles posted before it are closed)  ARGV[3] how many at most
--   Returns {S.OK, frontier as read ("" for none), member, link, time, ...} (link "" for
--   none) | {S.BAD_DATA, links:closed, why} a frontier that is no position in time:
-- "close": ARGV[2] the frontier as read  ARGV[3] the new frontier ("T member" of the last
--   article of the batch)  ARGV[4..] per article: member, link as read, its field in its
--   bucket ("" for no link); KEYS[3..] its bucket links:<b> (KEYS[2] for no link)
--   Returns {S.OK, entries released} | {S.RETRY} the frontier moved or a link changed
local bad = bad_types({KEYS[1], 'zset', KEYS[2], 'string'})
if bad then return bad end
local frontier = redis.call('GET', KEYS[2]) or ''
if frontier ~= '' and not tonumber((frontier_of(frontier))) then
  return {S.BAD_DATA, KEYS[2], 'is no position in time: (check_votes --repair deletes it)'}
end

if ARGV[1] == 'due' then
  local start = 0
  if frontier ~= '' then
    local ft, fm = frontier_of(frontier)
    start = frontier_index(KEYS[1], ft, fm)
  end
  local before = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. exact(tonumber(ARGV[2])))
  local reply = {S.OK, frontier}
  if before <= start then return reply end
  local stop = math.min(before, start + tonumber(ARGV[3])) - 1
  local batch = redis.call('ZRANGE', KEYS[1], start, stop, 'WITHSCORES')
  for i = 1, #batch, 2 do
    local link = ''
    if redis.call('TYPE', batch[i])['ok'] == 'hash' then
      link = redis.call('HGET', batch[i], 'link') or ''
    end
    reply[#reply + 1] = batch[i]
    reply[#reply + 1] = link
    reply[#reply + 1] = batch[i + 1]
  end
  return reply
end

if frontier ~= ARGV[2] then return {S.RETRY} end
local n = (#ARGV - 3) / 3
local specs = {}
for i = 1, n do
  specs[#specs + 1] = KEYS[2 + i]
  specs[#specs + 1] = KEYS[2 + i] == KEYS[2] and 'string' or 'hash'
end
bad = bad_types(specs)
if bad then return bad end
for i = 1, n do
  local member, link = ARGV[3 + 3 * i - 2], ARGV[3 + 3 * i - 1]
  local now_link = ''
  if redis.call('TYPE', member)['ok'] == 'hash' then
    now_link = redis.call('HGET', member, 'link') or ''
  end
  if now_link ~= link then return {S.RETRY} end
end
local released = 0
for i = 1, n do
  local member, field = ARGV[3 + 3 * i - 2], ARGV[3 + 3 * i]
  if field ~= '' and link_holder(KEYS[2 + i], field) == member then
    redis.call('HDEL', KEYS[2 + i], field)
    released = released + 1
  end
end
redis.call('SET', KEYS[2], ARGV[3])
return {S.OK, released}
