-- edit.lua: change an article's title and link, keeping the link index in step.
-- KEYS[1] article:<id>  KEYS[2] links:  KEYS[3] modlog:
-- ARGV[1] article:<id>  ARGV[2] title  ARGV[3] link  ARGV[4] link as read
-- ARGV[5] old normalised link or ""  ARGV[6] new normalised link or ""
-- ARGV[7] log entry  ARGV[8] log length kept
-- Returns {S.NOT_FOUND} | {S.RETRY} the link changed since read | {S.OK} edited
local bad = bad_types({KEYS[1], 'hash', KEYS[2], 'hash', KEYS[3], 'list'})
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {S.NOT_FOUND} end
if (redis.call('HGET', KEYS[1], 'link') or '') ~= ARGV[4] then return {S.RETRY} end
local member, old, new = ARGV[1], ARGV[5], ARGV[6]
redis.call('HSET', KEYS[1], 'title', ARGV[2], 'link', ARGV[3])
if old ~= new then
  if old ~= '' and redis.call('HGET', KEYS[2], old) == member then
    redis.call('HDEL', KEYS[2], old)
  end
  if new ~= '' then redis.call('HSET', KEYS[2], new, member) end
end
log_action(KEYS[3], ARGV[7], ARGV[8])
return {S.OK}
