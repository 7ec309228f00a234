/**
 * The two Lua scripts of admission and settle (docs/api.md, "Spend caps and rate limits"). Every key of one call
 * carries the same project hash tag, so each call is one atomic step on one Redis Cluster slot.
 *
 * A cap in the current period is three keys: `<spend key>` (string, micro-USD settled or expired:
 * what the operator reports as spent), `<spend key>:r` (hash: member → reserved micro-USD, `_sum`
 * the total reserved, `_t` the highest threshold already announced, `x:<member>` what an expired
 * reservation was counted as) and `<spend key>:d` (sorted set: member → deadline, ms).
 *
 * Shared pieces: `expire` moves reservations past their deadline into the spent counter (the safe
 * side: a killed pod's reservation is money that may have been spent); `crossed` reports the first
 * time a period's spend reaches 80, 90 or 100 % of the limit.
 */
const SHARED = `
local function expire(k, r, d, now)
  local gone = redis.call('ZRANGEBYSCORE', d, '-inf', now)
  for _, m in ipairs(gone) do
    local amt = tonumber(redis.call('HGET', r, m) or '0')
    redis.call('HDEL', r, m)
    redis.call('HINCRBY', r, '_sum', -amt)
    redis.call('HSET', r, 'x:' .. m, amt)
    redis.call('INCRBY', k, amt)
    redis.call('ZREM', d, m)
  end
end
local function crossed(r, spent, limit, out, idx)
  local level = 0
  if spent >= limit then level = 100 elseif spent * 10 >= limit * 9 then level = 90 elseif spent * 10 >= limit * 8 then level = 80 end
  if level == 0 then return end
  local was = tonumber(redis.call('HGET', r, '_t') or '0')
  if level > was then
    redis.call('HSET', r, '_t', level)
    -- A jump past several thresholds reports each of them.
    for _, l in ipairs({80, 90, 100}) do
      if l > was and l <= level then table.insert(out, idx) table.insert(out, l) table.insert(out, spent) end
    end
  end
end
`;

/**
 * Admission and reservation: GCRA rate limits (Redis TIME, so pods with skewed clocks agree), then
 * the caps. A rate refusal writes nothing; once the limits pass their units are taken, so a request
 * the caps then refuse still counts toward its rate limits (as a refused request does at OpenAI).
 *
 * KEYS: one per rate limit (its TAT), then three per cap (spent, :r, :d).
 * ARGV: now ms, member, amount µUSD, deadline ms, #rates, #caps,
 *   per rate: emission interval µs, burst, cost (units);
 *   per cap: limit µUSD, TTL (s: the period's remaining time plus a day, by the caller's clock).
 * Returns {0, per rate: remaining, reset ms; then crossings idx, level, spent ...}
 *      or {1, rate index, retry ms, per rate: remaining, reset ms}
 *      or {2, cap index, spent µUSD, reserved µUSD, crossings ...}.
 */
export const RESERVE_LUA = `${SHARED}
local now, member, amount, deadline = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local nr, nc = tonumber(ARGV[5]), tonumber(ARGV[6])
local a = 7
local states, tats, newTat, refused, retry = {}, {}, {}, 0, 0
if nr > 0 then
  local t = redis.call('TIME')
  local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local Ts, tols = {}, {}
  for i = 1, nr do
    local T, burst, cost = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    a = a + 3
    local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
    if tat < nowUs then tat = nowUs end
    local tolerance = T * burst
    local nt = tat + T * cost
    local diff = nowUs - (nt - tolerance)
    Ts[i], tols[i], tats[i], newTat[i] = T, tolerance, tat, nt
    if diff < 0 and refused == 0 then refused = i retry = math.ceil(-diff / 1000) end
  end
  for i = 1, nr do
    if refused > 0 then
      -- Nothing is taken: what each limit has left now.
      table.insert(states, math.max(0, math.floor((tols[i] - (tats[i] - nowUs)) / Ts[i])))
      table.insert(states, math.ceil((tats[i] - nowUs) / 1000))
    else
      table.insert(states, math.max(0, math.floor((nowUs - (newTat[i] - tols[i])) / Ts[i])))
      table.insert(states, math.ceil((newTat[i] - nowUs) / 1000))
    end
  end
  if refused > 0 then
    local out = {1, refused, retry}
    for _, v in ipairs(states) do table.insert(out, v) end
    return out
  end
  for i = 1, nr do
    redis.call('SET', KEYS[i], string.format('%.0f', newTat[i]), 'PX', math.max(1, math.ceil((newTat[i] - nowUs) / 1000)))
  end
end
local crossings = {}
for c = 0, nc - 1 do
  local k, r, d = KEYS[nr + c * 3 + 1], KEYS[nr + c * 3 + 2], KEYS[nr + c * 3 + 3]
  expire(k, r, d, now)
  local limit = tonumber(ARGV[a + c * 2])
  local spent = tonumber(redis.call('GET', k) or '0')
  crossed(r, spent, limit, crossings, c)
  local reserved = tonumber(redis.call('HGET', r, '_sum') or '0')
  if spent + reserved >= limit then
    local out = {2, c, spent, reserved}
    for _, v in ipairs(crossings) do table.insert(out, v) end
    return out
  end
end
for c = 0, nc - 1 do
  local k, r, d = KEYS[nr + c * 3 + 1], KEYS[nr + c * 3 + 2], KEYS[nr + c * 3 + 3]
  local ttl = tonumber(ARGV[a + c * 2 + 1])
  redis.call('HINCRBY', r, member, amount)
  redis.call('HINCRBY', r, '_sum', amount)
  redis.call('ZADD', d, deadline, member)
  redis.call('EXPIRE', k, ttl) redis.call('EXPIRE', r, ttl) redis.call('EXPIRE', d, ttl)
end
local out = {0}
for _, v in ipairs(states) do table.insert(out, v) end
for _, v in ipairs(crossings) do table.insert(out, v) end
return out
`;

/**
 * Everything a finished request writes to its caps and limits, in one call: each cap's reservation
 * by `member` becomes its real cost, once (a second settle of the same member finds nothing and
 * changes nothing; a reservation that expired before its settle was counted at its reserved amount,
 * and the settle corrects that to the real cost); then each token limit's TAT moves by (actual -
 * estimate) emission intervals, never below now.
 *
 * KEYS: three per cap, then one TAT per correction.
 * ARGV: member, now ms, #caps, per cap: limit µUSD, TTL (s), actual µUSD; per correction: interval µs, delta units.
 * Returns the spent µUSD of each cap (-1 where nothing was settled), then crossings: idx, level, spent, ...
 */
export const SETTLE_LUA = `${SHARED}
local member, now, nc = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local crossings, out = {}, {}
for c = 0, nc - 1 do
  local k, r, d = KEYS[c * 3 + 1], KEYS[c * 3 + 2], KEYS[c * 3 + 3]
  local actual = tonumber(ARGV[6 + c * 3])
  local held = redis.call('HGET', r, member)
  local delta = nil
  if held then
    redis.call('HDEL', r, member)
    redis.call('HINCRBY', r, '_sum', -tonumber(held))
    redis.call('ZREM', d, member)
    delta = actual
  else
    local counted = redis.call('HGET', r, 'x:' .. member)
    if counted then
      redis.call('HDEL', r, 'x:' .. member)
      delta = actual - tonumber(counted)
    end
  end
  if delta then
    local spent = redis.call('INCRBY', k, delta)
    redis.call('EXPIRE', k, tonumber(ARGV[5 + c * 3]))
    crossed(r, spent, tonumber(ARGV[4 + c * 3]), crossings, c)
    table.insert(out, spent)
  else
    table.insert(out, -1)
  end
end
local a = 4 + nc * 3
if #KEYS > nc * 3 then
  local t = redis.call('TIME')
  local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
  for i = nc * 3 + 1, #KEYS do
    local tat = redis.call('GET', KEYS[i])
    if tat then
      local nt = tonumber(tat) + tonumber(ARGV[a]) * tonumber(ARGV[a + 1])
      if nt <= nowUs then redis.call('DEL', KEYS[i])
      else redis.call('SET', KEYS[i], string.format('%.0f', nt), 'PX', math.max(1, math.ceil((nt - nowUs) / 1000))) end
    end
    a = a + 2
  end
end
for _, v in ipairs(crossings) do table.insert(out, v) end
return out
`;
