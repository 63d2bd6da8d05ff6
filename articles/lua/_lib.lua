-- _lib.lua: helpers prepended to every script by scripts.py (Lua has no includes).
-- scripts.py puts the table S before this file: the status codes of types.Status
-- (S.OK, S.REPEATED, S.NOT_FOUND, S.VOTING_CLOSED, S.RETRY, S.NO_GROUP, S.GROUP_EXISTS,
-- S.ID_TAKEN, S.DUPLICATE_LINK, S.BAD_DATA). Every script answers {status, ...}.

-- Append a moderation-log entry (JSON) and keep the newest `keep`; "" logs nothing.
local function log_action(key, entry, keep)
  if entry ~= '' then
    redis.call('LPUSH', key, entry)
    redis.call('LTRIM', key, 0, tonumber(keep) - 1)
  end
end

-- Replicate what the scripts write, not the scripts: they read TIME (the default since
-- Redis 5; said here so a server configured otherwise cannot refuse the writes).
redis.replicate_commands()

-- Redis' own clock, in seconds: the clock EXPIREAT and every expiry run by.
local function server_time()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end

-- The clock of the rules (voting window, post time): Redis' own, unless the caller fixed
-- the time (`given` not ""), which only tests and tools do; the site never does.
local function clock(given)
  if given ~= '' then return tonumber(given) end
  return server_time()
end

-- The UTC day (YYYY-MM-DD) of Unix time t; Redis' Lua has no os.date (civil_from_days).
local function utc_day(t)
  local z = math.floor(t / 86400) + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524)
    - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02d', y, m, d)
end

-- Checks made before a script's first write. Redis does not undo a script that fails
-- half-way, so a script that would write to a key of the wrong type, or count with a
-- value that is not a count, refuses with {S.BAD_DATA, key, what is wrong} instead and
-- changes nothing. Each returns nil when all is well.

-- `specs` is {key, type, key, type, ...}; a missing key is fine (it will be created).
local function bad_types(specs)
  for i = 1, #specs, 2 do
    local kind = redis.call('TYPE', specs[i])['ok']
    if kind ~= 'none' and kind ~= specs[i + 1] then
      return {S.BAD_DATA, specs[i], 'is a ' .. kind .. ', not a ' .. specs[i + 1]}
    end
  end
end

-- Hash fields that HINCRBY will count with: absent, or a whole number.
local function bad_counts(key, fields)
  local values = redis.call('HMGET', key, unpack(fields))
  for i = 1, #fields do
    local v = values[i]
    if v and not (string.match(v, '^-?%d+$') and #v <= 18) then
      return {S.BAD_DATA, key, fields[i] .. ' is "' .. v .. '", not a whole number'}
    end
  end
end

-- A post time the rules can use: a finite number of Unix seconds that EXPIREAT accepts.
local function bad_time(key, value)
  local t = tonumber(value)
  if not t or t ~= t or t < 0 or t > 1e11 then
    return {S.BAD_DATA, key, 'time is "' .. tostring(value) .. '", not a post time'}
  end
end

-- Search words (search.py): an ARGV of words "w1 w2 ..." as a list. Their idx:<w> keys
-- come in KEYS in the same order, where each script says.
local function split_words(s)
  local words = {}
  for w in string.gmatch(s or '', '%S+') do words[#words + 1] = w end
  return words
end

-- Add {key, 'set'} for KEYS[first + 1 .. first + n] to a bad_types spec list.
-- Type specs of the per-group key triples KEYS[from..to]: group:<g> (set), score:<g> and
-- time:<g> (zsets, the cached rankings), appended to `specs` for bad_types.
local function group_specs(specs, from, to)
  for k = from, to, 3 do
    specs[#specs + 1] = KEYS[k]; specs[#specs + 1] = 'set'
    specs[#specs + 1] = KEYS[k + 1]; specs[#specs + 1] = 'zset'
    specs[#specs + 1] = KEYS[k + 2]; specs[#specs + 1] = 'zset'
  end
  return specs
end

local function word_specs(specs, first, n)
  for i = 1, n do
    specs[#specs + 1] = KEYS[first + i]
    specs[#specs + 1] = 'set'
  end
  return specs
end
