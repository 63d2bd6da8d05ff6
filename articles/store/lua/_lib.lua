-- _lib.lua: helpers prepended to every script by scripts.py (Lua has no includes).
-- scripts.py puts the table S before this file: the status codes of types.Status
-- (S.OK, S.REPEATED, S.NOT_FOUND, S.VOTING_CLOSED, S.RETRY, S.NO_GROUP, S.GROUP_EXISTS,
-- S.ID_TAKEN, S.DUPLICATE_LINK, S.BAD_DATA). Every script answers {status, ...}.

-- Append a moderation-log entry (JSON) and keep the newest `keep`; "" logs nothing.
local function log_action(key, entry, keep)
  if entry ~= '' then
    redis.call('LPUSH', key, entry)
    redis.call('LTRIM', key, 0, tonumber(keep) - 1)
  end
end

-- Replicate what the scripts write, not the scripts: they read TIME (the default since
-- Redis 5; said here so a server configured otherwise cannot refuse the writes).
redis.replicate_commands()

-- Redis' own clock, in seconds: the clock EXPIREAT and every expiry run by.
local function server_time()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end

-- The clock of the rules (voting window, post time): Redis' own, unless the caller fixed
-- the time (`given` not ""), which only tests and tools do; the site never does.
local function clock(given)
  if given ~= '' then return tonumber(given) end
  return server_time()
end

-- The UTC day (YYYY-MM-DD) of Unix time t; Redis' Lua has no os.date (civil_from_days).
local function utc_day(t)
  local z = math.floor(t / 86400) + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524)
    - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02d', y, m, d)
end

-- Checks made before a script's first write. Redis does not undo a script that fails
-- half-way, so a script that would write to a key of the wrong type, or count with a
-- value that is not a count, refuses with {S.BAD_DATA, key, what is wrong} instead and
-- changes nothing. Each returns nil when all is well.

-- A read of a key that may hold another type: nil then (the caller leaves that item out);
-- any other refusal is the script's error (comment threads and listings).
local function try(command, key, ...)
  local r = redis.pcall(command, key, ...)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'WRONGTYPE', 1, true) then return nil end
    return error(r.err)
  end
  return r
end

-- The viewer's membership (0/1) of a comment's voter set `prefix`<cid>, for a row of a
-- thread or listing: read only when `count`, the set's count in the comment's hash, is
-- not 0 (comment_vote.lua moves both together); 0 for no viewer ("").
local function comment_flag(prefix, cid, count, viewer)
  if count == '0' or viewer == '' then return 0 end
  return try('SISMEMBER', prefix .. cid, viewer) or 0
end

-- A user's vote now, by the voter sets: 1 up, -1 down, 0 none (articles and comments).
local function current_vote(up_set, down_set, user)
  if redis.call('SISMEMBER', up_set, user) == 1 then return 1 end
  if redis.call('SISMEMBER', down_set, user) == 1 then return -1 end
  return 0
end

-- Move a user's vote from `cur` to `dir` (1 up, -1 down, 0 none) in the voter sets and
-- the hash's votes/downvotes counts; a set written to expires at `expire_at` (the close
-- of the voting window). Returns the new up-vote count when it moved, else nil.
local function move_vote(hash, up_set, down_set, user, cur, dir, expire_at)
  local votes = nil
  if cur == 1 then
    redis.call('SREM', up_set, user)
    votes = redis.call('HINCRBY', hash, 'votes', -1)
  elseif cur == -1 then
    redis.call('SREM', down_set, user)
    redis.call('HINCRBY', hash, 'downvotes', -1)
  end
  if dir == 1 then
    redis.call('SADD', up_set, user)
    redis.call('EXPIREAT', up_set, expire_at)
    votes = redis.call('HINCRBY', hash, 'votes', 1)
  elseif dir == -1 then
    redis.call('SADD', down_set, user)
    redis.call('EXPIREAT', down_set, expire_at)
    redis.call('HINCRBY', hash, 'downvotes', 1)
  end
  return votes
end

-- Set an optional field (an article's `text`, `groups`; a comment's `reason`), or drop it
-- when empty: the book's own article hashes have neither, so every reader takes a
-- missing one as empty, and an empty one costs ~10-17 B (bench.memory_split's articles).
local function hset_or_drop(key, field, value)
  if value == '' then
    redis.call('HDEL', key, field)
  else
    redis.call('HSET', key, field, value)
  end
end

-- `specs` is {key, type, key, type, ...}; a missing key is fine (it will be created).
local function bad_types(specs)
  for i = 1, #specs, 2 do
    local kind = redis.call('TYPE', specs[i])['ok']
    if kind ~= 'none' and kind ~= specs[i + 1] then
      return {S.BAD_DATA, specs[i], 'is a ' .. kind .. ', not a ' .. specs[i + 1]}
    end
  end
end

-- Hash fields that HINCRBY will count with: absent, or a whole number.
local function bad_counts(key, fields)
  local values = redis.call('HMGET', key, unpack(fields))
  for i = 1, #fields do
    local v = values[i]
    if v and not (string.match(v, '^-?%d+$') and #v <= 18) then
      return {S.BAD_DATA, key, fields[i] .. ' is "' .. v .. '", not a whole number'}
    end
  end
end

-- A post time the rules can use: a finite number of Unix seconds that EXPIREAT accepts.
local function bad_time(key, value)
  local t = tonumber(value)
  if not t or t ~= t or t < 0 or t > 1e11 then
    return {S.BAD_DATA, key, 'time is "' .. tostring(value) .. '", not a post time'}
  end
end

-- Search words (search.py): an ARGV of words "w1 w2 ..." as a list. Their postings:<w> keys
-- come in KEYS in the same order, where each script says.
local function split_words(s)
  local words = {}
  for w in string.gmatch(s or '', '%S+') do words[#words + 1] = w end
  return words
end

-- An article's search words are made from its title, text and link (search.article_words)
-- and kept nowhere else: the postings:<w> sets hold its id, the hash no list of them (~90 B
-- an article). A script given the words a caller made from those fields checks that they
-- are still the ones read, ARGV[at..at + 2]; a hash written before keeps a `words` field,
-- which such a script drops (HDEL).
local function content_as_read(key, at)
  local f = redis.call('HMGET', key, 'title', 'text', 'link')
  return (f[1] or '') == ARGV[at] and (f[2] or '') == ARGV[at + 1]
    and (f[3] or '') == ARGV[at + 2]
end

-- Type specs of the per-group key quads KEYS[from..to]: group:<g> (set), score:<g> and
-- time:<g> (zsets, its rankings), groups:ranked (hash), appended to `specs` for bad_types.
local function group_specs(specs, from, to)
  for k = from, to, 4 do
    specs[#specs + 1] = KEYS[k]; specs[#specs + 1] = 'set'
    specs[#specs + 1] = KEYS[k + 1]; specs[#specs + 1] = 'zset'
    specs[#specs + 1] = KEYS[k + 2]; specs[#specs + 1] = 'zset'
    specs[#specs + 1] = KEYS[k + 3]; specs[#specs + 1] = 'hash'
  end
  return specs
end

local function word_specs(specs, first, n)
  for i = 1, n do
    specs[#specs + 1] = KEYS[first + i]
    specs[#specs + 1] = 'set'
  end
  return specs
end

-- --- comments (issue 12) -------------------------------------------------------------
-- The comment scripts name the keys of a comment's article and parent from its hash
-- (`article`, `parent`), as a walk of a thread must: the store is one Redis, not a
-- Cluster. Every such name is checked against the forms keys.py makes.

-- The id in "comment:<id>" (or nil), and in "article:<id>" (or nil).
local function comment_id_of(member)
  return member and string.match(member, '^comment:([1-9]%d*)$')
end
local function article_id_of(member)
  return member and string.match(member, '^article:([1-9]%d*)$')
end

-- The duplicate-link check: links:<b> maps a link's digest `field` (keys.link_slot) to the
-- id of the article that has it. The member it maps to, or '' for none.
local function link_holder(key, field)
  local id = redis.call('HGET', key, field)
  return id and ('article:' .. id) or ''
end

-- Map `field` of links:<b> to `member`.
local function link_take(key, field, member)
  redis.call('HSET', key, field, article_id_of(member))
end

-- Unmap `field` of links:<b> if it still maps to `member`.
local function link_release(key, field, member)
  if field ~= '' and link_holder(key, field) == member then redis.call('HDEL', key, field) end
end

-- The score of a comment in its parent's best order: types.comment_best, the same
-- operations in the same order (the Wilson lower bound at z = 1.281551565545, in steps
-- of 1/10,000, times 2^38, plus 2^38 - 1 - id so the older of equals comes first),
-- formatted whole: Redis would write a Lua number with only 14 digits.
local function comment_best(id, up, down)
  local n = up + down
  local w = 0
  if n > 0 and up > 0 then
    local z = 1.281551565545
    local p = up / n
    w = (p + z * z / (2 * n) - z * math.sqrt((p * (1 - p) + z * z / (4 * n)) / n))
      / (1 + z * z / n)
  end
  local tie_base = 274877906944 -- 2^38
  local tie = 0
  if id < tie_base then tie = tie_base - 1 - id end
  return string.format('%.0f', math.floor(w * 10000) * tie_base + tie)
end

-- The orderings a comment sits in under its parent: {best, new}.
local function comment_orderings(article, parent)
  local pid = comment_id_of(parent)
  if pid then return 'replies:' .. pid, 'replies_new:' .. pid end
  local aid = article_id_of(article)
  return 'comments:' .. aid, 'comments_new:' .. aid
end

-- --- the top of each period, kept by the writes ---------------------------------------
-- selectors/rankings.py gives the design. scripts.py puts PERIODS ({name, seconds}, in
-- keys.PERIODS' order) before this file. A write passes keys.PERIOD_KEYS as a block:
-- KEYS[first + i - 1] is votes:<PERIODS[i]>, KEYS[first + #PERIODS] is votes:periods.
-- A period's frontier is a position in time:'s order (score, then member): "T" (every
-- article posted before T is out of votes:<p>) or "T article:<id>" (and those at T up to
-- that member, in time:'s order). votes:<p> holds exactly the members of votes: that come
-- after the frontier in time:, with their votes: scores. No frontier: not kept yet.

-- A number as Redis writes a score: %.17g round-trips a double (Lua's own %.14g does not).
local function exact(x)
  return string.format('%.17g', x)
end

-- The frontier "T" / "T member" as T (string), member ('' for none).
local function frontier_of(value)
  local t, m = string.match(value, '^(%S+) ?(.*)$')
  return t, m
end

-- Whether an article posted at t is after the frontier. One posted at exactly T of a
-- frontier inside a tie (T member) is taken as trimmed: such a frontier lies a whole
-- period in the trimming call's past, where no article is still to be ranked.
local function after_frontier(t, ft, fm)
  local T = tonumber(ft)
  if t ~= T then return t > T end
  return fm == ''
end

-- The index in `time_key` of the first article after the frontier.
local function frontier_index(time_key, ft, fm)
  if fm ~= '' then
    local s = redis.call('ZSCORE', time_key, fm)
    if s and tonumber(s) == tonumber(ft) then return redis.call('ZRANK', time_key, fm) + 1 end
  end
  return redis.call('ZCOUNT', time_key, '-inf', '(' .. ft)
end

-- Type specs of the period block at KEYS[first..], appended to `specs` for bad_types.
local function period_specs(specs, first)
  for i = 1, #PERIODS do
    specs[#specs + 1] = KEYS[first + i - 1]; specs[#specs + 1] = 'zset'
  end
  specs[#specs + 1] = KEYS[first + #PERIODS]; specs[#specs + 1] = 'hash'
  return specs
end

-- The frontiers of every period, {value or false, ...}, from the block at KEYS[first..].
local function period_frontiers(first)
  local names = {}
  for i = 1, #PERIODS do names[i] = PERIODS[i][1] end
  return redis.call('HMGET', KEYS[first + #PERIODS], unpack(names))
end

-- Set `member` (posted at t) to `net` in every kept period it belongs to (post, vote,
-- withdrawal): the same value votes: gets, so the order of two writers never matters.
local function period_set(first, member, t, net)
  local fronts = period_frontiers(first)
  for i = 1, #PERIODS do
    if fronts[i] then
      local ft, fm = frontier_of(fronts[i])
      if after_frontier(t, ft, fm) then redis.call('ZADD', KEYS[first + i - 1], net, member) end
    end
  end
end

-- Take out of `zset` at most `limit` articles posted before `cutoff`, walking time: from
-- the period's frontier, and move the frontier past them. Returns 'done' (none left
-- before cutoff), 'more' (the limit was reached first), 'ahead' (the frontier is already
-- past cutoff + slack: this cutoff lies in the trimmed past) or nil (not kept).
local function period_trim(time_key, zset, state, name, cutoff, limit, slack)
  local f = redis.call('HGET', state, name)
  if not f then return nil end
  local ft, fm = frontier_of(f)
  local T = tonumber(ft)
  if T > cutoff + slack then return 'ahead' end
  if T > cutoff or (T == cutoff and fm ~= '') then
    if slack == 0 then return 'ahead' end
    return 'done'
  end
  local start = frontier_index(time_key, ft, fm)
  -- the articles before cutoff end at index `before` - 1: read no further
  local before = redis.call('ZCOUNT', time_key, '-inf', '(' .. exact(cutoff))
  if before <= start then return 'done' end
  local done = before - start <= limit
  local stop = math.min(before, start + limit) - 1
  local batch = redis.call('ZRANGE', time_key, start, stop, 'WITHSCORES')
  local gone = {}
  for i = 1, #batch, 2 do gone[#gone + 1] = batch[i] end
  redis.call('ZREM', zset, unpack(gone))
  if done then
    redis.call('HSET', state, name, exact(cutoff))
    return 'done'
  end
  redis.call('HSET', state, name, batch[#batch] .. ' ' .. batch[#batch - 1])
  return 'more'
end

-- Remove `member` from every period's zset (delete).
local function period_remove(first, member)
  for i = 1, #PERIODS do redis.call('ZREM', KEYS[first + i - 1], member) end
end

-- A store with no article yet needs no backfill: its periods are kept from now on.
local function period_start_empty(time_key, first, now)
  local fronts = period_frontiers(first)
  local empty = nil
  for i = 1, #PERIODS do
    if not fronts[i] and empty == nil then empty = redis.call('ZCARD', time_key) == 0 end
    if not fronts[i] and empty then
      redis.call('HSET', KEYS[first + #PERIODS], PERIODS[i][1], exact(now - PERIODS[i][2]))
    end
  end
end

-- --- comment karma ----------------------------------------------------------------------
-- comment_karma:<pk> (string, absent when 0): the net votes on the visible comments
-- (state "") whose `author` is user:<pk>, kept by every script that changes one of those
-- sums; named from the author, as the comment scripts name a comment's other keys.

-- A visible comment's part of its author's figure: up - down (a count that is not a
-- whole number counts 0, as the audit counts it).
local function karma_part(state, votes, downvotes)
  if (state or '') ~= '' then return 0 end
  local function whole(v)
    if v and string.match(v, '^-?%d+$') and #v <= 18 then return tonumber(v) end
    return 0
  end
  return whole(votes) - whole(downvotes)
end

-- Add `delta` to the figure of `author` (a user:<pk>, else nothing); the key goes at 0.
-- A figure of the wrong type or not a count is left as it is (the audit reports it), so
-- this never fails half-way through a script.
local function karma_add(author, delta)
  local pk = string.match(author or '', '^user:([1-9]%d*)$')
  if not pk or delta == 0 then return end
  local key = 'comment_karma:' .. pk
  local kind = redis.call('TYPE', key)['ok']
  if kind == 'string' then
    local v = redis.call('GET', key)
    if not (string.match(v, '^-?%d+$') and #v <= 18) then return end
  elseif kind ~= 'none' then
    return
  end
  if redis.call('INCRBY', key, delta) == 0 then redis.call('DEL', key) end
end

-- --- article karma ----------------------------------------------------------------------
-- article_karma:<pk> (string): the net votes (votes: score) of the articles in
-- submitted:<pk>, the sum user_karma.lua would otherwise walk. Present = kept: every
-- script that moves an article's votes: score or its place in submitted:<pk> moves it in
-- the same step (article_karma_open before the writes, article_karma_close after), so a
-- read is one GET; it goes with the user's last article (the sum of nothing) and comes
-- back with their next post. Absent while submitted:<pk> is not = not kept yet (a store
-- written before, or by the book's code): the writes leave it absent, and karma_fill.lua
-- builds it in bounded steps, keeping its partial sum and a cursor (post time, member)
-- in article_karma_fill: (pk -> "P" or "P T member"); while a fill runs, a write moves
-- the partial sum for the articles at or before the cursor, those the fill has already
-- added. The keys are named from the poster (user:<pk>), as the comment scripts name a
-- comment's keys from its hash.
local KARMA_FILL = 'article_karma_fill:'

local function whole_or_nil(v)
  if type(v) == 'string' and string.match(v, '^-?%d+$') and #v <= 18 then return tonumber(v) end
  return nil
end

-- Whether (t, m) comes at or before the fill cursor (T, M) in submitted:'s order.
local function karma_counted(t, m, ft, fm)
  if not ft then return false end
  if t ~= ft then return t < ft end
  return m <= fm
end

-- The part of `member` in the figure of state `k`: its votes: score when it is in the
-- user's submitted: and (while filling) already counted, else 0.
local function article_karma_part(k, member)
  local t = try('ZSCORE', k.sub, member)
  if not t then return 0, false end
  if k.mode == 'fill' and not karma_counted(tonumber(t), member, k.ft, k.fm) then
    return 0, true
  end
  return tonumber(try('ZSCORE', k.votes, member) or '0') or 0, true
end

-- Before a script's writes to `member` (an article posted by `poster`, votes: `votes`):
-- what its poster's figure is (kept, being filled, or `fresh`: post.lua starting the
-- figure of a user with no article yet) and the article's part now. nil: nothing to keep
-- (no user:<pk>, not kept, or a key of the wrong type, which the audit reports).
local function article_karma_open(poster, member, votes, fresh)
  local pk = string.match(poster or '', '^user:([1-9]%d*)$')
  if not pk then return nil end
  local k = {pk = pk, key = 'article_karma:' .. pk, sub = 'submitted:' .. pk, votes = votes}
  local v = try('GET', k.key) -- one call when kept; the checks below only when not
  if v then
    if not whole_or_nil(v) then return nil end
    k.mode = 'kept'
  elseif redis.call('TYPE', k.key)['ok'] ~= 'none' then
    return nil
  else
    local f = try('HGET', KARMA_FILL, pk)
    if f then
      local p, rest = string.match(f, '^(%S+)(.*)$')
      local ft, fm = string.match(rest, '^ (%S+) (%S+)$')
      k.mode, k.p, k.rest, k.ft, k.fm = 'fill', whole_or_nil(p), rest, tonumber(ft), fm
      if not k.p or (rest ~= '' and not k.ft) then return nil end
    elseif fresh and (try('ZCARD', k.sub) or 1) == 0 then
      k.mode = 'new'
    else
      return nil
    end
  end
  k.member, k.before = member, article_karma_part(k, member)
  return k
end

-- After the writes: move the figure (or the fill's partial sum) by the part's change.
local function article_karma_close(k)
  if not k then return end
  local after, listed = article_karma_part(k, k.member)
  local d = after - k.before
  if k.mode == 'new' then
    redis.call('SET', k.key, d)
  elseif k.mode == 'kept' then
    -- no article left: no figure (the sum of nothing; a next post starts it again)
    if not listed and redis.call('EXISTS', k.sub) == 0 then
      redis.call('DEL', k.key)
    elseif d ~= 0 then
      redis.call('INCRBY', k.key, d)
    end
  elseif d ~= 0 then -- read again: another item of the same script may have moved it
    local p = whole_or_nil(string.match(redis.call('HGET', KARMA_FILL, k.pk) or '', '^(%S+)'))
    redis.call('HSET', KARMA_FILL, k.pk, string.format('%d', (p or k.p) + d) .. k.rest)
  end
end

-- --- a reader's hidden articles (keys.hidden) ------------------------------------------
-- Ranks start..stop (highest first, as ZREVRANGE counts them) of `zset` once the members
-- of `hidden` are left out, exactly: page 2 starts where page 1 ended, and every page is
-- full while the ranking has articles enough. The hidden set is capped (keys.HIDDEN_KEEP,
-- m of them), and no hidden article is ranked one by one unless it must be: one ZMSCORE
-- gives each its score in the ranking (a hash lookup each). Those scoring above the
-- article at rank start - 1 come before the page, those scoring below it after; only a tie
-- with it is ranked (ZREVRANK: a walk of the skip list, ~3-5 us on 1M articles; ranking
-- all 500 of an earlier cap cost ~2.7 ms a page). Only one scoring at least the article at rank
-- stop + m can reach the page (its candidates, c of them), so the page is the visible rows
-- of one ZREVRANGE from rank start, size + c long: those hidden before the page shift it
-- by as many visible rows. `hidden` '' (no viewer): a plain page. Measured on 1M articles
-- with 200 hidden: ~0.35 ms a call (0.08 ms with none), ~0.5 ms when they are the top 200.
-- Returns the rows {member, score, ...} and how many hidden articles the ranking holds
-- (its count less these is the count the viewer sees).
local function unhidden_page(zset, hidden, start, stop)
  start, stop = tonumber(start), tonumber(stop)
  local members = hidden ~= '' and redis.call('ZRANGE', hidden, 0, -1) or {}
  if #members == 0 then return redis.call('ZREVRANGE', zset, start, stop, 'WITHSCORES'), 0 end
  local scores = redis.call('ZMSCORE', zset, unpack(members))
  local edge = redis.call('ZREVRANGE', zset, stop + #members, stop + #members, 'WITHSCORES')
  local floor = edge[2] and tonumber(edge[2])
  local above = nil -- the score at rank start - 1, on a page after the first
  if start > 0 then
    above = tonumber(redis.call('ZREVRANGE', zset, start - 1, start - 1, 'WITHSCORES')[2])
  end
  local skip, present, candidates, before = {}, 0, 0, 0
  for i, member in ipairs(members) do
    if scores[i] then
      present = present + 1
      skip[member] = true
      local score = tonumber(scores[i])
      if not floor or not score or score >= floor then
        candidates = candidates + 1
        if start > 0 and (not score or not above or score >= above) then
          if score and above and score > above then
            before = before + 1
          elseif redis.call('ZREVRANK', zset, member) < start then
            before = before + 1
          end
        end
      end
    end
  end
  if present == 0 then return redis.call('ZREVRANGE', zset, start, stop, 'WITHSCORES'), 0 end
  local size = stop - start + 1
  local rows = redis.call('ZREVRANGE', zset, start, start + size + candidates - 1, 'WITHSCORES')
  local page, passed = {}, 0
  for j = 1, #rows, 2 do
    if not skip[rows[j]] then
      passed = passed + 1
      if passed > before and #page < 2 * size then
        page[#page + 1] = rows[j]
        page[#page + 1] = rows[j + 1]
      end
    end
  end
  return page, present
end

-- --- comment search (issue 24) -------------------------------------------------------
-- A comment's search words (search.comment_words of its text; none for a tombstone) are
-- kept nowhere but in the sets comment_postings:<word> that hold its id (intsets, as
-- postings:<word>): the hash keeps no list of them (~150 B a comment). A script that
-- takes a comment out of those sets is given the words by its caller, made from the state
-- and text it read, with `seen`, the SHA-1 of "<state>\n<text>" as read
-- (services/_common.comment_words_seen), and checks them with comment_as_read. A hash
-- written before keeps a `words` field: its sets are left too, and the field dropped.
-- The set names are formed here from words, as the comment scripts form a comment's
-- other keys from its hash: a word is letters and digits only (ASCII letters and digits,
-- or the bytes of other scripts' letters), so it can name no other key.

-- The comment_postings:<word> keys of words "w1 w2 ..."; nil if a word is not one
-- search.py makes.
local function comment_word_keys(words)
  local found = {}
  for w in string.gmatch(words or '', '%S+') do
    if not string.find(w, '^[%w\128-\255]+$') then return nil end
    found[#found + 1] = 'comment_postings:' .. w
  end
  return found
end

-- Whether `member`'s state and text are still those `seen` was made from.
local function comment_as_read(member, seen)
  local f = redis.call('HMGET', member, 'state', 'text')
  return redis.sha1hex((f[1] or '') .. '\n' .. (f[2] or '')) == seen
end

-- {S.BAD_DATA, ...} before a write, if a word is malformed or a set is of another type.
local function comment_index_bad(member, words)
  local sets = comment_word_keys(words)
  if not sets then return {S.BAD_DATA, member, 'words holds something not a search word'} end
  local specs = {}
  for _, k in ipairs(sets) do specs[#specs + 1] = k; specs[#specs + 1] = 'set' end
  return bad_types(specs)
end

-- Take `member`'s id out of the sets of `words` (made by the caller from the text as
-- read: check comment_as_read first) and of a former `words` field, and drop the field.
-- A key of another type, or a malformed word, is left alone (the audit reports them):
-- removal paths never refuse. Returns how many entries were removed.
local function comment_unindex(member, words)
  if redis.call('TYPE', member)['ok'] ~= 'hash' then return 0 end
  local sets = comment_word_keys(words) or {}
  for _, k in ipairs(comment_word_keys(redis.call('HGET', member, 'words')) or {}) do
    sets[#sets + 1] = k
  end
  local removed = 0
  for _, k in ipairs(sets) do
    if redis.call('TYPE', k)['ok'] == 'set' then
      removed = removed + redis.call('SREM', k, comment_id_of(member))
    end
  end
  redis.call('HDEL', member, 'words')
  return removed
end

-- A comment's hash and the keys named by its id (its voter sets and reply orderings),
-- freed off the main thread: what every batched removal of comments takes away.
local function comment_unlink(member, cid)
  redis.call('UNLINK', member, 'comment_voted:' .. cid, 'comment_voted_down:' .. cid,
    'replies:' .. cid, 'replies_new:' .. cid)
end

-- What the caller of a batch that takes comments away (article_purge.lua,
-- archive_comments.lua) made of each comment it read: ARGV[from..] as triples of member,
-- `seen` and search words (services/_common.comments_as_read), as {member = {seen, words}}.
local function comments_given(from)
  local given = {}
  for i = from, #ARGV - 2, 3 do given[ARGV[i]] = {ARGV[i + 1], ARGV[i + 2]} end
  return given
end

-- comment_unindex with the words `given` holds for `member`; false, and nothing done, if
-- it holds none or the comment changed since they were made (the batch stops there).
local function comment_unindex_given(member, given)
  local g = given[member]
  if not g or not comment_as_read(member, g[1]) then return false end
  comment_unindex(member, g[2])
  return true
end

-- Index `member`'s id under `words` ("" for none: comment search off, or a tombstone),
-- out of the sets of `former` (its words before, as comment_unindex takes them). Check
-- comment_index_bad(member, words) first.
local function comment_index(member, words, former)
  comment_unindex(member, former)
  local posting = comment_id_of(member)
  for _, k in ipairs(comment_word_keys(words)) do redis.call('SADD', k, posting) end
end

-- The replies inbox of `to` (a user:<pk> member, or anything else for no one): the keys
-- are named from the member, as the author's user_comments:<pk> is (comment_delete.lua),
-- because the deletions that empty an inbox learn whose it is only from the hashes they
-- read. An inbox left empty takes its state with it, so no key outlives its replies.
local function inbox_of(to)
  local pk = type(to) == 'string' and string.match(to, '^user:([1-9]%d*)$')
  if not pk or redis.call('TYPE', 'inbox:' .. pk)['ok'] ~= 'zset' then return nil end
  return 'inbox:' .. pk, 'inbox_state:' .. pk
end

local function inbox_emptied(inbox, state)
  if redis.call('ZCARD', inbox) == 0 then redis.call('DEL', state) end
end

-- Take the comment `member` out of `to`'s inbox.
local function inbox_remove(to, member)
  local inbox, state = inbox_of(to)
  if inbox and redis.call('ZREM', inbox, member) == 1 then inbox_emptied(inbox, state) end
end

-- Take out of `to`'s inbox every comment the zset `list` holds (the replies of a comment,
-- the top-level comments of an article), walking the smaller of the two: an inbox holds
-- at most ARTICLES_INBOX_SIZE, so this is bounded however long the list is.
local function inbox_drop(to, list)
  local inbox, state = inbox_of(to)
  if not inbox or redis.call('TYPE', list)['ok'] ~= 'zset' then return end
  local from, other = inbox, list
  if redis.call('ZCARD', list) < redis.call('ZCARD', inbox) then from, other = list, inbox end
  local gone = {}
  for _, member in ipairs(redis.call('ZRANGE', from, 0, -1)) do
    if redis.call('ZSCORE', other, member) then gone[#gone + 1] = member end
  end
  if #gone > 0 then
    redis.call('ZREM', inbox, unpack(gone))
    inbox_emptied(inbox, state)
  end
end

-- Append one live event to the stream `key` (live:, read by store/live.py), keeping about
-- its newest `keep` entries (ARTICLES_LIVE_EVENTS; "~": Redis trims whole nodes, so the
-- cost stays constant). `keep` 0 or absent (a caller naming no stream) writes nothing.
-- Called after a script's last check, so an event exists exactly when its write does.
local function live_event(key, keep, ...)
  keep = tonumber(keep or '') or 0
  if keep > 0 and key then redis.call('XADD', key, 'MAXLEN', '~', keep, '*', ...) end
end

-- The type check of the live stream, for a script's bad_types specs (none when unnamed).
local function live_specs(specs, key, keep)
  if key and (tonumber(keep or '') or 0) > 0 then
    specs[#specs + 1] = key
    specs[#specs + 1] = 'stream'
  end
  return specs
end

-- A group's rankings kept by the writes (ranking_page.lua gives the design). The quad at
-- KEYS[k]: group:<g>, score:<g>, time:<g>, groups:ranked. While the group is kept (or
-- being filled) a write sets the member in or out of both rankings from score: and time:
-- (the book's ZINTERSTORE, one member at a time: O(log n)); a group not kept yet keeps
-- the former 60 s cache, which the write drops (UNLINK: freed off the main thread).
local function group_kept(k)
  local name = string.sub(KEYS[k], 7)
  return redis.call('HEXISTS', KEYS[k + 3], name) == 1
    or redis.call('HEXISTS', KEYS[k + 3], name .. ':fill') == 1
end

-- The member's place in group k's rankings: score_key/time_key its scores (score:,
-- time:), or nil to take it out.
local function group_rank(k, member, score_key, time_key)
  if not group_kept(k) then
    redis.call('UNLINK', KEYS[k + 1], KEYS[k + 2])
    return
  end
  local into = {{KEYS[k + 1], score_key}, {KEYS[k + 2], time_key}}
  for _, pair in ipairs(into) do
    local value = pair[2] and redis.call('ZSCORE', pair[2], member)
    if value then
      redis.call('ZADD', pair[1], value, member)
    else
      redis.call('ZREM', pair[1], member)
    end
  end
end

-- One bounded step (`count` members, SSCAN) of making a group's rankings kept: copies
-- each member's score: and time: scores; the first step drops a 60 s cache or a foreign
-- build, the last one marks the group kept (`name` -> when the fill began, so the first
-- vote sweep covers every vote since). Meanwhile the writes keep what is copied (the
-- group counts as kept for them), and SSCAN returns every member held throughout.
-- Returns true when the group is kept, and the members this step copied.
local function group_fill_step(group, skey, tkey, score, time, ranked, name, count, now)
  local state = redis.call('HGET', ranked, name .. ':fill')
  local cursor, began = '0', exact(now)
  if state then
    cursor, began = string.match(state, '^(%S+) (%S+)$')
  else
    redis.call('UNLINK', skey, tkey)
  end
  local scan = redis.call('SSCAN', group, cursor, 'COUNT', count)
  local members = scan[2]
  if #members > 0 then
    for _, pair in ipairs({{skey, score}, {tkey, time}}) do
      local values = redis.call('ZMSCORE', pair[2], unpack(members))
      local args = {}
      for i = 1, #members do
        if values[i] then args[#args + 1] = values[i]; args[#args + 1] = members[i] end
      end
      if #args > 0 then redis.call('ZADD', pair[1], unpack(args)) end
    end
  end
  if scan[1] == '0' then
    redis.call('HDEL', ranked, name .. ':fill')
    redis.call('HSET', ranked, name, began)
    return true, #members
  end
  redis.call('HSET', ranked, name .. ':fill', scan[1] .. ' ' .. began)
  return false, #members
end

-- A vote's new score in score: (`value`, what its ZINCRBY answered) carried into the kept rankings of the groups
-- the article's hash names (its `groups` field, kept by post, groups update and the group
-- purge), in the vote's own step: ZADD XX only moves a member already ranked, so a group
-- not kept (no key, or a member not copied yet by its fill) stays as it is, and a group
-- the book's code joined (not in the field) waits for the sweep (ranking_page.lua).
-- O(log n) a group; a ranking of the wrong type is skipped (the audit reports it).
local function group_scores(article, member, value)
  for name in string.gmatch(redis.call('HGET', article, 'groups') or '', '[^,]+') do
    if #name <= 64 and string.match(name, '^[a-z0-9%-]+$') then
      try('ZADD', 'score:' .. name, 'XX', value, member) -- keys.group_order(keys.SCORE, name)
    end
  end
end
