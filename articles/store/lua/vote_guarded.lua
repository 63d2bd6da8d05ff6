-- vote_guarded.lua: vote.lua (cast() above: its text as written, on the same KEYS and ARGV)
-- behind the checks of a vote by a kept credential, all in the vote's one round trip.
-- KEYS[1..e-1] vote.lua's  KEYS[e] credential_epoch:<user>
-- KEYS[e+1..] rate-limit counters: one request's windows (ratelimits.py)
-- ARGV[1..8] vote.lua's  ARGV[9] e
-- ARGV[10] refuse when the user's credential epoch is at or after this (a kept
--   credential's read time, less the clocks' slack); "": no check (the credential was
--   read from the database for this request)
-- ARGV[11..] each counter's limit, then its expiry (s)
-- Every counter is counted (INCR, EXPIRE) as ratelimits.check() counts a request, and a
-- window past its limit casts nothing. Then a credential revoked since it was read casts
-- nothing: the caller reads it again from the database.
-- Returns {S.OK, counts} (past a limit) | {S.RETRY, counts} (revoked)
--   | {S.OK, counts, vote.lua's reply}
local e = tonumber(ARGV[9])
local counts, over = {}, false
for i = e + 1, #KEYS do
  local limit = 11 + 2 * (i - e - 1)
  local count = redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[limit + 1])
  counts[#counts + 1] = count
  if count > tonumber(ARGV[limit]) then over = true end
end
if over then return {S.OK, counts} end
if ARGV[10] ~= '' then
  local epoch = tonumber(redis.call('GET', KEYS[e]) or '')
  if epoch and epoch >= tonumber(ARGV[10]) then return {S.RETRY, counts} end
end
return {S.OK, counts, cast()}
