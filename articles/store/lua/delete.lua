-- delete.lua: remove an article from every index, group and voter set in one step.
-- The caller read the article first (to name its keys); the script checks that what it
-- read still holds, so a concurrent change is retried instead of leaving leftovers.
-- KEYS[1] article:<id>  KEYS[2] voted:<id>  KEYS[3] voted_down:<id>  KEYS[4] score:
-- KEYS[5] time:  KEYS[6] good:  KEYS[7] submitted:<pk> (KEYS[1] when the poster is not
-- user:<pk>)  KEYS[8] links:<b> of the link as read (KEYS[1] when none)  KEYS[9] modlog:
-- KEYS[10] votes:  KEYS[11] purge:  KEYS[12] comments_all:<id>  KEYS[13] comments:<id>
-- KEYS[14] comments_new:<id>  KEYS[15..19] keys.PERIOD_KEYS (votes:<period>, votes:periods)
-- KEYS[20] removed:  KEYS[21] domain:<d> of the link as read (KEYS[1] when none)
-- KEYS[22..] per group of the article: group:<g>, score:<g>, time:<g>, groups:ranked
-- KEYS[last #words] postings:<w> for each search word of ARGV[11], in its order
-- ARGV[1] article:<id>  ARGV[2] groups as read  ARGV[3] link as read  ARGV[4] poster as read
-- ARGV[5] the link's field in KEYS[8] (keys.link_slot) or ""
-- ARGV[6] log entry ("" for none)  ARGV[7] log length kept
-- ARGV[8] "open": only while voting is open (a poster deleting their own), else ""
-- ARGV[9] now ("" for Redis' own clock)  ARGV[10] window (s)
-- ARGV[11] the search words of ARGV[14..16] ("" for none)
-- ARGV[12] what removed: keeps of a deletion by staff ({time, reason} as JSON), "" for none
-- ARGV[13] "archived": the article's hash left for the database (store/archive.py) and
--   only its ranking entries are here to remove ("" otherwise)
-- ARGV[14] title, ARGV[15] text, ARGV[16] link as read (content_as_read in _lib.lua)
-- Its comments do not go in this step, whose work must not grow with them: the article's
-- top-level orderings are unlinked (freed off the main thread), and the article is added
-- to purge: when comments_all:<id> lists comments, which article_purge.lua then deletes
-- in bounded batches (a comment of a missing article is shown nowhere and is what the
-- audit calls an orphan, so check_votes --repair also completes an interrupted purge).
-- Returns {S.NOT_FOUND} | {S.RETRY} changed since read | {S.VOTING_CLOSED} | {S.OK} deleted
local specs = {KEYS[1], 'hash', KEYS[2], 'set', KEYS[3], 'set', KEYS[4], 'zset',
  KEYS[5], 'zset', KEYS[6], 'zset', KEYS[8], 'hash', KEYS[9], 'list', KEYS[10], 'zset',
  KEYS[11], 'set', KEYS[12], 'zset', KEYS[13], 'zset', KEYS[14], 'zset', KEYS[20], 'hash'}
if KEYS[7] ~= KEYS[1] then specs[#specs + 1] = KEYS[7]; specs[#specs + 1] = 'zset' end
local words = split_words(ARGV[11])
local wk = #KEYS - #words -- KEYS[wk + i] is postings:<words[i]>
word_specs(specs, wk, #words)
period_specs(specs, 15)
if KEYS[21] ~= KEYS[1] then specs[#specs + 1] = KEYS[21]; specs[#specs + 1] = 'zset' end
group_specs(specs, 22, wk)
local bad = bad_types(specs)
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[13] ~= 'archived' then return {S.NOT_FOUND} end
else
  if ARGV[13] == 'archived' then return {S.RETRY} end
  local f = redis.call('HMGET', KEYS[1], 'groups', 'link', 'poster')
  if (f[1] or '') ~= ARGV[2] or (f[2] or '') ~= ARGV[3] or (f[3] or '') ~= ARGV[4] then
    return {S.RETRY}
  end
  if not content_as_read(KEYS[1], 14) then return {S.RETRY} end
end
if ARGV[8] == 'open' then
  local t = tonumber(redis.call('HGET', KEYS[1], 'time') or '')
  if not t or clock(ARGV[9]) >= t + tonumber(ARGV[10]) then return {S.VOTING_CLOSED} end
end
local member = ARGV[1]
local karma = article_karma_open(ARGV[4], member, KEYS[10]) -- its part leaves the poster's
if redis.call('ZCARD', KEYS[12]) > 0 then redis.call('SADD', KEYS[11], member) end
-- Its top-level comments leave the poster's inbox now, while the poster is known
-- (bounded by the inbox's size; article_purge.lua takes the replies from theirs).
inbox_drop(ARGV[4], KEYS[14])
redis.call('UNLINK', KEYS[13], KEYS[14])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], member)
redis.call('ZREM', KEYS[5], member)
redis.call('ZREM', KEYS[6], member)
redis.call('ZREM', KEYS[10], member)
period_remove(15, member)
if KEYS[7] ~= KEYS[1] then redis.call('ZREM', KEYS[7], member) end
link_release(KEYS[8], ARGV[5], member)
local posting = article_id_of(member)
for i = 1, #words do redis.call('SREM', KEYS[wk + i], posting) end
if KEYS[21] ~= KEYS[1] then redis.call('ZREM', KEYS[21], member) end
for k = 22, wk, 4 do
  redis.call('SREM', KEYS[k], member)
  group_rank(k, member, nil, nil)
end
log_action(KEYS[9], ARGV[6], ARGV[7])
if ARGV[12] ~= '' then redis.call('HSET', KEYS[20], member, ARGV[12]) end
article_karma_close(karma)
return {S.OK}
