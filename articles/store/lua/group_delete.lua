-- group_delete.lua: delete a group in one small step, whatever its size: its registry
-- entry goes, its set is renamed to purge:group:<g> (queued in purge:) and its cached
-- rankings are unlinked (freed off the main thread) and no longer kept, so its page is
-- gone at once; group_purge.lua then takes its
-- name off the member articles' `groups` fields in bounded batches.
-- KEYS[1] groups:  KEYS[2] group:<g>  KEYS[3] score:<g>  KEYS[4] time:<g>  KEYS[5] modlog:
-- KEYS[6] purge:  KEYS[7] purge:group:<g>  KEYS[8] groups:ranked
-- ARGV[1] name  ARGV[2] log entry  ARGV[3] log length kept  ARGV[4] group:<g>
-- Returns {S.NO_GROUP, name} | {S.RETRY} an earlier deletion of a group of this name is
--   still being purged (the caller finishes it first) | {S.OK} deleted
local name = ARGV[1]
local bad = bad_types({KEYS[1], 'hash', KEYS[2], 'set', KEYS[3], 'zset', KEYS[4], 'zset',
  KEYS[5], 'list', KEYS[6], 'set', KEYS[7], 'set', KEYS[8], 'hash'})
if bad then return bad end
if redis.call('HEXISTS', KEYS[1], name) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then
  return {S.NO_GROUP, name}
end
if redis.call('EXISTS', KEYS[7]) == 1 then return {S.RETRY} end
redis.call('HDEL', KEYS[1], name)
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('RENAME', KEYS[2], KEYS[7])
  redis.call('SADD', KEYS[6], ARGV[4])
end
redis.call('UNLINK', KEYS[3], KEYS[4])
redis.call('HDEL', KEYS[8], name, name .. ':at', name .. ':fill')
log_action(KEYS[5], ARGV[2], ARGV[3])
return {S.OK}
