-- _lib.lua: helpers prepended to every script by scripts.py (Lua has no includes).

-- Append a moderation-log entry (JSON) and keep the newest `keep`; "" logs nothing.
local function log_action(key, entry, keep)
  if entry ~= '' then
    redis.call('LPUSH', key, entry)
    redis.call('LTRIM', key, 0, tonumber(keep) - 1)
  end
end

