-- restore_claim.lua: claim the scratch database ARGV[1] for an import (operations.backup):
-- mark it KEYS[1] (restore:staging) if it holds no key, in one step, so two imports
-- cannot stage into it at once. Returns the number of keys it already held (0: claimed).
-- The SELECT is the script's own: the caller's connection stays on its database.
redis.call('SELECT', ARGV[1])
local size = redis.call('DBSIZE')
if size == 0 then
  redis.call('SET', KEYS[1], '1')
end
return size
