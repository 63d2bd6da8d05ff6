-- votes_withdraw.lua: withdraw a deleted account's votes from a bounded batch of
-- articles and comments, as vote.lua and comment_vote.lua would set them to "none", so
-- the counts stay equal to the voter sets and no voter set names the account.
-- KEYS[1] score:  KEYS[2] votes:  KEYS[3] good:  KEYS[4..8] keys.PERIOD_KEYS
-- KEYS[9..] triples: article:<id>, voted:<id>, voted_down:<id>; or comment:<cid>,
--   comment_voted:<cid>, comment_voted_down:<cid> (a comment's article and ordering are
--   named from its hash, as in every comment script)
-- ARGV[1] user:<pk>  ARGV[2] vote score  ARGV[3] good-article votes  ARGV[4] window (s)
-- An item whose voting has closed (or whose article or comment is gone) only loses the
-- user from its voter sets, which expire with the window anyway: closed counts are
-- final. An item with a key of the wrong type or a count that is not one is skipped
-- (the audit reports it).
-- Returns {S.OK, votes withdrawn}
local user, now = ARGV[1], server_time()
local window, vote_score = tonumber(ARGV[4]), tonumber(ARGV[2])
local top = bad_types(period_specs({KEYS[1], 'zset', KEYS[2], 'zset', KEYS[3], 'zset'}, 4))
local withdrawn = 0

-- The hash whose `time` opens the item's window, and its best ordering (comments), or
-- nil when the item cannot be voted on by a script.
local function article_of(item)
  if article_id_of(item) then return item, nil end
  local c = redis.call('HMGET', item, 'article', 'parent')
  if not article_id_of(c[1]) or ((c[2] or '') ~= '' and not comment_id_of(c[2])) then return nil end
  return c[1], (comment_orderings(c[1], c[2] or ''))
end

for k = 9, #KEYS, 3 do
  local item, up, down = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  if not bad_types({item, 'hash', up, 'set', down, 'set'}) then
    local cur = current_vote(up, down, user)
    local article, best = nil, nil
    if cur ~= 0 and redis.call('EXISTS', item) == 1 then article, best = article_of(item) end
    local t = article and tonumber(redis.call('HGET', article, 'time') or '')
    local open = t and now < math.ceil(t + window)
    if open and best then open = not bad_types({best, 'zset'}) end
    if open and not best then open = not top end
    if open then open = not bad_counts(item, {'votes', 'downvotes'}) end
    if cur == 0 then
      -- nothing to withdraw
    elseif not open then
      redis.call('SREM', up, user)
      redis.call('SREM', down, user)
    else
      local votes = move_vote(item, up, down, user, cur, 0, math.ceil(t + window))
      local counts = redis.call('HMGET', item, 'votes', 'downvotes')
      local up_n, down_n = tonumber(counts[1]) or 0, tonumber(counts[2]) or 0
      redis.call('HSET', item, 'last_vote', now)
      if best then
        redis.call('ZADD', best, comment_best(tonumber(comment_id_of(item)), up_n, down_n), item)
        local f = redis.call('HMGET', item, 'author', 'state')
        if (f[2] or '') == '' then karma_add(f[1], -cur) end -- as comment_vote.lua
      elseif redis.call('HEXISTS', item, 'held') == 0 then -- a held article is unranked
        local karma = article_karma_open(redis.call('HGET', item, 'poster'), item, KEYS[2])
        local value = redis.call('ZINCRBY', KEYS[1], -cur * vote_score, item)
        group_scores(item, item, value) -- as vote.lua
        redis.call('ZADD', KEYS[2], up_n - down_n, item)
        period_set(4, item, t, up_n - down_n)
        article_karma_close(karma) -- as vote.lua
        if votes ~= nil and votes < tonumber(ARGV[3]) then redis.call('ZREM', KEYS[3], item) end
      end
      withdrawn = withdrawn + 1
    end
  end
end
return {S.OK, withdrawn}
