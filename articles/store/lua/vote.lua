-- vote.lua: set one user's vote on one article to up (1), none (0) or down (-1).
-- Every check comes before the first write, so a refused vote changes nothing.
-- KEYS[1] article:<id>  KEYS[2] voted:<id>  KEYS[3] voted_down:<id>  KEYS[4] score:
-- KEYS[5] good:  KEYS[6] stats:votes  KEYS[7] votes: (net votes, set from the counts, so
--   an article the book's code posted or voted on is put right by its next vote here)
-- KEYS[8..12] keys.PERIOD_KEYS: the net votes go to each kept period the article is in
-- KEYS[13] upvoted:<pk>: the voter's own list of articles voted up (newest first, at most
--   UPVOTED_KEEP, scripts.py's constant), kept in the same step as the voter sets
-- KEYS[14] live: (a counted change appends its `vote` event; see live_event in _lib.lua)
-- Also score:<g> of each group the hash's `groups` field names (group_scores in _lib.lua:
--   formed from the hash, as a poster's article_karma:<pk> is; only a member already there)
-- ARGV[1] article:<id>  ARGV[2] user:<pk>  ARGV[3] direction
-- ARGV[4] now (Unix s; "" for Redis' own clock: see clock() in _lib.lua)
-- ARGV[5] vote score  ARGV[6] window (s)  ARGV[7] good-article votes
-- ARGV[8] live events kept (ARTICLES_LIVE_EVENTS; 0 or absent: none written)
-- A counted change records its time in the hash field `last_vote`, so the audit can see
-- a vote counted after the window (by then the voter sets are gone).
-- Returns {S.NOT_FOUND} | {S.VOTING_CLOSED}
--   | {S.OK, changed (0/1), vote now, hash field, value, ...} (the caller computes the score from
--   the hash, as the pages do: it equals score: while the invariants hold)
local bad = bad_types(live_specs(period_specs({KEYS[1], 'hash', KEYS[2], 'set', KEYS[3], 'set',
  KEYS[4], 'zset', KEYS[5], 'zset', KEYS[6], 'hash', KEYS[7], 'zset', KEYS[13], 'zset'}, 8),
  KEYS[14], ARGV[8]))
if bad then return bad end
local t = redis.call('HGET', KEYS[1], 'time')
if not t then return {S.NOT_FOUND} end
bad = bad_time(KEYS[1], t) or bad_counts(KEYS[1], {'votes', 'downvotes'})
if bad then return bad end
t = tonumber(t)
local now, window = clock(ARGV[4]), tonumber(ARGV[6])
-- Voter sets always expire when the window closes, also when recreated after emptying.
local expire_at = math.ceil(t + window)
-- Closed by the rules' clock, or by the clock the voter sets expire by: a vote must
-- never land in a set Redis has already dropped (it would count again and again).
if now >= t + window or server_time() >= expire_at then return {S.VOTING_CLOSED} end
bad = bad_counts(KEYS[6], {utc_day(now)})
if bad then return bad end

local member, user, dir = ARGV[1], ARGV[2], tonumber(ARGV[3])
local cur = current_vote(KEYS[2], KEYS[3], user)

local changed = 0
if cur ~= dir then
  changed = 1
  local karma = article_karma_open(redis.call('HGET', KEYS[1], 'poster'), member, KEYS[7])
  -- the up-vote count, when this change moved it
  local votes = move_vote(KEYS[1], KEYS[2], KEYS[3], user, cur, dir, expire_at)
  -- A held article (flag.lua) is out of the rankings until staff decide: its vote counts
  -- in the hash alone, and a dismissal ranks it by the counts (flag_decide.lua).
  local ranked = redis.call('HEXISTS', KEYS[1], 'held') == 0
  if ranked then
    local value = redis.call('ZINCRBY', KEYS[4], (dir - cur) * tonumber(ARGV[5]), member)
    group_scores(KEYS[1], member, value) -- its groups' kept rankings, at once
  end
  local counts = redis.call('HMGET', KEYS[1], 'votes', 'downvotes')
  local net = (tonumber(counts[1]) or 0) - (tonumber(counts[2]) or 0)
  if ranked then
    redis.call('ZADD', KEYS[7], net, member)
    period_set(8, member, t, net)
  end
  redis.call('HSET', KEYS[1], 'last_vote', now)
  if dir ~= 0 then redis.call('HINCRBY', KEYS[6], utc_day(now), 1) end
  if dir == 1 then
    redis.call('ZADD', KEYS[13], exact(now), member)
    if redis.call('ZCARD', KEYS[13]) > UPVOTED_KEEP then
      redis.call('ZREMRANGEBYRANK', KEYS[13], 0, -UPVOTED_KEEP - 1)
    end
  elseif cur == 1 then
    redis.call('ZREM', KEYS[13], member)
  end
  if votes ~= nil and ranked then
    if votes >= tonumber(ARGV[7]) then
      redis.call('ZADD', KEYS[5], t, member)
    else
      redis.call('ZREM', KEYS[5], member)
    end
  end
  article_karma_close(karma) -- its poster's article_karma:<pk>, in the same step
  live_event(KEYS[14], ARGV[8], 'e', 'vote', 'a', article_id_of(member) or '',
    'n', string.format('%d', net))
end

local reply = {S.OK, changed, dir}
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields do reply[#reply + 1] = fields[i] end
return reply
