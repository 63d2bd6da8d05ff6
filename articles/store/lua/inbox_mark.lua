-- inbox_mark.lua: mark a user's replies read (or sent in a digest) up to a number: the
-- field only moves forward, and never past the newest reply given a number, so a reply
-- that arrives after the page was shown stays unread. Constant work.
-- KEYS[1] inbox:<pk>  KEYS[2] inbox_state:<pk>  KEYS[3] live: (a moved "read" appends
--   the user's `inbox` event with the unread count; a digest changes no count: none)
-- ARGV[1] "read" | "digest"  ARGV[2] up to this number ("" for every reply so far)
-- ARGV[3] the user's pk  ARGV[4] live events kept (ARTICLES_LIVE_EVENTS; 0 or absent: none)
-- Returns {S.OK, the field's value now, unread replies left} | {S.BAD_DATA, key, what}
local bad = bad_types(live_specs({KEYS[1], 'zset', KEYS[2], 'hash'}, KEYS[3], ARGV[4])) or bad_counts(KEYS[2], {'seq', ARGV[1]})
if bad then return bad end
local state = redis.call('HMGET', KEYS[2], 'seq', ARGV[1])
local seq, at = tonumber(state[1]) or 0, tonumber(state[2]) or 0
local upto = ARGV[2] == '' and seq or math.min(tonumber(ARGV[2]), seq)
local moved = upto > at
if moved then
  redis.call('HSET', KEYS[2], ARGV[1], upto)
  at = upto
end
local read = tonumber(redis.call('HGET', KEYS[2], 'read')) or 0
local unread = redis.call('ZCOUNT', KEYS[1], '(' .. read, '+inf')
if moved and ARGV[1] == 'read' then
  live_event(KEYS[3], ARGV[4], 'e', 'inbox', 'u', ARGV[3], 'n', unread)
end
return {S.OK, at, unread}
