-- delete.lua: remove an article from every index, group and voter set in one step.
-- The caller read the article first (to name its keys); the script checks that what it
-- read still holds, so a concurrent change is retried instead of leaving leftovers.
-- KEYS[1] article:<id>  KEYS[2] voted:<id>  KEYS[3] voted_down:<id>  KEYS[4] score:
-- KEYS[5] time:  KEYS[6] good:  KEYS[7] submitted:<pk> (KEYS[1] when the poster is not
-- user:<pk>)  KEYS[8] links:  KEYS[9] modlog:
-- KEYS[10] votes:
-- KEYS[11..] per group of the article: group:<g>, score:<g>, time:<g>
-- KEYS[last #words] idx:<w> for each search word of ARGV[11], in its order
-- ARGV[1] article:<id>  ARGV[2] groups as read  ARGV[3] link as read  ARGV[4] poster as read
-- ARGV[5] normalised link or ""  ARGV[6] log entry ("" for none)  ARGV[7] log length kept
-- ARGV[8] "open": only while voting is open (a poster deleting their own), else ""
-- ARGV[9] now ("" for Redis' own clock)  ARGV[10] window (s)
-- ARGV[11] the hash's `words` as read (its search words, "" for none)
-- The article's comments go in the same step: every comment in comments_all:<aid>, with
-- its voter sets, reply orderings and entries in comments: and user_comments:<pk>, and
-- the article's own comment orderings.
-- Returns {S.NOT_FOUND} | {S.RETRY} changed since read | {S.VOTING_CLOSED} | {S.OK} deleted
local specs = {KEYS[1], 'hash', KEYS[2], 'set', KEYS[3], 'set', KEYS[4], 'zset',
  KEYS[5], 'zset', KEYS[6], 'zset', KEYS[8], 'hash', KEYS[9], 'list', KEYS[10], 'zset'}
if KEYS[7] ~= KEYS[1] then specs[#specs + 1] = KEYS[7]; specs[#specs + 1] = 'zset' end
local words = split_words(ARGV[11])
local wk = #KEYS - #words -- KEYS[wk + i] is idx:<words[i]>
word_specs(specs, wk, #words)
group_specs(specs, 11, wk)
local bad = bad_types(specs)
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {S.NOT_FOUND} end
local f = redis.call('HMGET', KEYS[1], 'groups', 'link', 'poster')
if (f[1] or '') ~= ARGV[2] or (f[2] or '') ~= ARGV[3] or (f[3] or '') ~= ARGV[4] then
  return {S.RETRY}
end
if (redis.call('HGET', KEYS[1], 'words') or '') ~= ARGV[11] then return {S.RETRY} end
if ARGV[8] == 'open' then
  local t = tonumber(redis.call('HGET', KEYS[1], 'time') or '')
  if not t or clock(ARGV[9]) >= t + tonumber(ARGV[10]) then return {S.VOTING_CLOSED} end
end
local member = ARGV[1]
local aid = article_id_of(member)
local comments, bad_comment = article_comment_keys(aid)
if bad_comment then return bad_comment end
delete_comments(aid, comments)
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], member)
redis.call('ZREM', KEYS[5], member)
redis.call('ZREM', KEYS[6], member)
redis.call('ZREM', KEYS[10], member)
if KEYS[7] ~= KEYS[1] then redis.call('ZREM', KEYS[7], member) end
if ARGV[5] ~= '' and redis.call('HGET', KEYS[8], ARGV[5]) == member then
  redis.call('HDEL', KEYS[8], ARGV[5])
end
for i = 1, #words do redis.call('SREM', KEYS[wk + i], member) end
for k = 11, wk, 3 do
  redis.call('SREM', KEYS[k], member)
  redis.call('DEL', KEYS[k + 1], KEYS[k + 2])
end
log_action(KEYS[9], ARGV[6], ARGV[7])
return {S.OK}
