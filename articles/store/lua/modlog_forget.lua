-- modlog_forget.lua: in a bounded range of the moderation log, replace each JSON fragment
-- naming a deleted account (its name as actor or author_name, its user:<pk> as author)
-- with a neutral one; the entry itself, the staff action, stays. The fragments are
-- matched as plain text: a string value's own quotes are escaped in JSON, so a reason or
-- title cannot hold them.
-- KEYS[1] modlog:
-- ARGV[1] first index  ARGV[2] how many entries  ARGV[3..] pairs: fragment, replacement
-- Returns {S.OK, entries changed, entries in the log}
local bad = bad_types({KEYS[1], 'list'})
if bad then return bad end

local function replace_plain(s, old, new)
  local out, i = {}, 1
  while true do
    local a, b = string.find(s, old, i, true)
    if not a then break end
    out[#out + 1] = string.sub(s, i, a - 1)
    out[#out + 1] = new
    i = b + 1
  end
  out[#out + 1] = string.sub(s, i)
  return table.concat(out)
end

local first = tonumber(ARGV[1])
local entries = redis.call('LRANGE', KEYS[1], first, first + tonumber(ARGV[2]) - 1)
local changed = 0
for i, entry in ipairs(entries) do
  local new = entry
  for p = 3, #ARGV, 2 do new = replace_plain(new, ARGV[p], ARGV[p + 1]) end
  if new ~= entry then
    redis.call('LSET', KEYS[1], first + i - 1, new)
    changed = changed + 1
  end
end
return {S.OK, changed, redis.call('LLEN', KEYS[1])}
