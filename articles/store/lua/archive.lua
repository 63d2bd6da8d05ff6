-- archive.lua: take a batch of articles whose voting closed out of Redis, once the
-- database holds them (store/archive.py wrote their rows first, in one transaction).
-- Each article is checked unchanged since it was read: its hash holds exactly the fields
-- and values the rows were made from; one that changed (a late flag, a staff edit) or is
-- gone is left as it is, for the next run. What goes: the hash, its search postings, its
-- links:<b> entry, its comment orderings; its comments are queued in archive: and taken away
-- by archive_comments.lua in bounded batches (the thread is read from the database as
-- soon as the hash is gone). What stays: score:, time:, votes:, votes:<period>,
-- submitted:<pk>, good:, domain:<d>, the group sets and rankings: every listing still
-- lists it, and reads it from the database (selectors/archived.py).
-- KEYS[1] archive:  KEYS[2] archive:at (the post time before which every article is
--   archived: where the next run starts), set to ARGV[1] in the same step
-- KEYS per article, in ARGV's order: article:<id>, comments:<id>, comments_new:<id>,
--   comments_all:<id>, links:<b> of its link (article:<id> when none), then postings:<w>
--   for each of its m words
-- ARGV[1] the new archive:at; then per article: member, its link's field in links:<b>
--   (keys.link_slot) or "", n, then n field/value pairs as read,
--   then m (its words, whose keys are in KEYS)
-- Returns {S.OK, archived, then per article 1 (archived), 2 (archived, its comments
--   queued in archive:) or 0 (changed or gone)}
local bad = bad_types({KEYS[1], 'set', KEYS[2], 'string'})
if bad then return bad end
local reply = {S.OK, 0}
local k, a = 3, 2
while a <= #ARGV do
  local member, norm, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  local at = a + 3
  local m = tonumber(ARGV[at + 2 * n])
  local hash, top, new, all, links = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]
  local same = redis.call('TYPE', hash)['ok'] == 'hash' and redis.call('HLEN', hash) == n
  if same then
    local names = {}
    for i = 1, n do names[i] = ARGV[at + 2 * (i - 1)] end
    local got = redis.call('HMGET', hash, unpack(names))
    for i = 1, n do
      if got[i] ~= ARGV[at + 2 * (i - 1) + 1] then same = false; break end
    end
  end
  if same then
    -- A set of another type (written by others) refuses the SREM and is left alone.
    local posting = article_id_of(member)
    for i = 1, m do redis.pcall('SREM', KEYS[k + 4 + i], posting) end
    if redis.call('TYPE', links)['ok'] == 'hash' then link_release(links, norm, member) end
    local queued = redis.call('TYPE', all)['ok'] == 'zset' and redis.call('ZCARD', all) > 0
    if queued then redis.call('SADD', KEYS[1], member) end
    redis.call('UNLINK', top, new)
    redis.call('DEL', hash)
    reply[2] = reply[2] + 1
    reply[#reply + 1] = queued and 2 or 1
  else
    reply[#reply + 1] = 0
  end
  k = k + 5 + m
  a = at + 2 * n + 1
end
redis.call('SET', KEYS[2], ARGV[1])
return reply
