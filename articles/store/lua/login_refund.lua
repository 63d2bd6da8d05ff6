-- login_refund.lua: give back an attempt whose password was right (login_attempt.lua
-- counted it first). A window already gone stays gone: no counter without an expiry.
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then
    redis.call('DECR', key)
  end
end
return 0
