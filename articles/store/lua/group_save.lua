-- group_save.lua: create a group, or change its description, and log it.
-- KEYS[1] groups:  KEYS[2] modlog:
-- ARGV[1] name  ARGV[2] description  ARGV[3] mode ("create" | "update")
-- ARGV[4] log entry  ARGV[5] log length kept
-- Returns {S.GROUP_EXISTS} (create) | {S.NO_GROUP, name} (update) | {S.OK} saved
local bad = bad_types({KEYS[1], 'hash', KEYS[2], 'list'})
if bad then return bad end
local exists = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if ARGV[3] == 'create' and exists then return {S.GROUP_EXISTS} end
if ARGV[3] == 'update' and not exists then return {S.NO_GROUP, ARGV[1]} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
log_action(KEYS[2], ARGV[4], ARGV[5])
return {S.OK}
