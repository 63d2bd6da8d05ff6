-- article_rows.lua: the second round trip of a page: its articles' hashes and, for a
-- logged-in viewer, the viewer's vote on each, in one flat reply (one command to pack and
-- one reply to parse, where a pipeline had three commands an article). The client read the
-- ids in the first round trip and names every key here: nothing is built from stored data.
-- The request's rate-limit windows may ride along (ratelimits.ride: an API listing's, on the
-- primary), counted first as ratelimits.check() counts them (INCR, EXPIRE); past a limit
-- no row is read.
-- KEYS[1..n] article:<id>; with a viewer also KEYS[n+1..2n] voted:<id> and
-- KEYS[2n+1..3n] voted_down:<id>, in the same order; then c rate-limit counters
-- ARGV[1] the viewer's member (user:<id>), or "" for no viewer
-- ARGV[2] c, the counters (none when absent)  ARGV[3..] each counter's limit, then its expiry
-- Returns {S.OK, c, c counts, then for each article: m, field, value, ... (m = 2 x its
-- fields; 0 for a deleted article), then with a viewer its up and down flags (1 or 0)}, or
-- {S.OK, c, c counts} past a limit. A key of the wrong type gives its type's name (a
-- string) in place of m or of its flag, so the caller can leave that one article out; any
-- other refusal is the script's error.
local viewer = ARGV[1]
local c = tonumber(ARGV[2] or '0')
local n = #KEYS - c
if viewer ~= '' then n = n / 3 end
local reply = {S.OK, c}
local over = false
for i = 1, c do
  local key, at = KEYS[#KEYS - c + i], 1 + 2 * i
  local count = redis.call('INCR', key)
  redis.call('EXPIRE', key, ARGV[at + 1])
  reply[#reply + 1] = count
  if count > tonumber(ARGV[at]) then over = true end
end
if over then return reply end

-- The reply of a read, or the key's type when the key holds another type; a second
-- value for any other refusal, which the script returns as its error.
local function read(key, command, ...)
  local r = redis.pcall(command, key, ...)
  if type(r) == 'table' and r.err then
    if not string.find(r.err, 'WRONGTYPE', 1, true) then return nil, r end
    return redis.call('TYPE', key)['ok']
  end
  return r
end

for i = 1, n do
  local fields, err = read(KEYS[i], 'HGETALL')
  if err then return err end
  if type(fields) == 'table' then
    reply[#reply + 1] = #fields
    for j = 1, #fields do reply[#reply + 1] = fields[j] end
  else
    reply[#reply + 1] = fields
  end
  if viewer ~= '' then
    for _, key in ipairs({KEYS[n + i], KEYS[2 * n + i]}) do
      local flag, refused = read(key, 'SISMEMBER', viewer)
      if refused then return refused end
      reply[#reply + 1] = flag
    end
  end
end
return reply
