-- login_attempt.lua: take one attempt from each failed-login window (ratelimits.py), or
-- none if any window is spent, so concurrent guesses cannot pass the limit between the
-- check and the count.
-- KEYS: the windows' counters. ARGV: limit, seconds to keep, for each key in turn.
-- Answers 0 when the attempt is taken, else the (1-based) index of the first spent window.
-- Writes nothing unless it counts: at maxmemory its first INCR fails, and so does the call.
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[2 * i - 1]) then
    return i
  end
end
for i, key in ipairs(KEYS) do
  redis.call('INCR', key)
  redis.call('EXPIRE', key, ARGV[2 * i])
end
return 0
