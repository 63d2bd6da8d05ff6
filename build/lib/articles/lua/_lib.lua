-- _lib.lua: helpers prepended to every script by scripts.py (Lua has no includes).
-- scripts.py puts the table S before this file: the status codes of types.Status
-- (S.OK, S.REPEATED, S.NOT_FOUND, S.VOTING_CLOSED, S.RETRY, S.NO_GROUP, S.GROUP_EXISTS,
-- S.ID_TAKEN, S.DUPLICATE_LINK). Every script answers {status, ...}.

-- Append a moderation-log entry (JSON) and keep the newest `keep`; "" logs nothing.
local function log_action(key, entry, keep)
  if entry ~= '' then
    redis.call('LPUSH', key, entry)
    redis.call('LTRIM', key, 0, tonumber(keep) - 1)
  end
end
