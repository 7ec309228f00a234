/**
 * The one Lua script of rate limits and spend caps: a pod's lease call (docs/api.md, "Spend caps and
 * rate limits"). Every key of one call carries the same project hash tag, so each call is one atomic
 * step on one Redis Cluster slot.
 *
 * A cap in the current period is three keys: `<spend key>` (string, micro-USD settled or expired:
 * what the operator reports as spent), `<spend key>:r` (hash: member → leased micro-USD, `c:<member>`
 * what that member has committed to requests in flight, `_sum` the total leased, `_h` the number of
 * members holding a lease, `_t` the highest threshold already announced, `x:<member>` what an
 * expired lease was counted as) and `<spend key>:d` (sorted set: member → deadline, ms). A member is
 * one gateway pod.
 *
 * A rate limit is one key: its GCRA theoretical arrival time (µs, Redis TIME). A lease takes units
 * from it ahead of time; units given back move it back.
 *
 * lease-grants.ts holds the same arithmetic in TypeScript (the embedded store runs it, and its unit
 * tests state the bounds): a change to one is a change to both.
 */
const SHARED = `
-- A lease past its deadline (its pod is gone) counts what it had committed to requests in flight
-- as spent (the safe side: money that may have been spent); the rest of it returns to the cap.
local function expire(k, r, d, now)
  local gone = redis.call('ZRANGEBYSCORE', d, '-inf', now)
  for _, m in ipairs(gone) do
    local amt = tonumber(redis.call('HGET', r, m) or '0')
    local counted = math.min(amt, tonumber(redis.call('HGET', r, 'c:' .. m) or '0'))
    redis.call('HDEL', r, m, 'c:' .. m)
    redis.call('HINCRBY', r, '_sum', -amt)
    redis.call('HINCRBY', r, '_h', -1)
    redis.call('HINCRBY', r, 'x:' .. m, counted)
    redis.call('INCRBY', k, counted)
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
 * One pod's lease call for one project: it reports and resizes its leases on some rate limits and
 * some caps, all in one atomic step.
 *
 * Rate op: first `give` units go back (negative: a debt, units used beyond what was leased), then,
 * when `need` > 0, at least `need` units are taken, or none (refused, with the delay until they would
 * pass); more, up to `want`, while a quarter of what is left allows.
 *
 * Cap op: `used` µUSD is what finished requests cost since the last call: it moves from the lease to
 * spent (what an expired lease already counted absorbs it first). `committed` is what the pod's
 * requests in flight hold now. Then the lease is resized: `want` -1 keeps it; otherwise it becomes
 * `committed` plus up to `want`, at most a 1/(2 × holders) share of the room left. `need` > 0 asks for
 * one request of `need` on top of `committed`: granted while spent and every lease (this one at its
 * commitment) stay below the limit, so a request near the cap may overshoot it by less than its own
 * `need`, and only one can. A lease at zero, with nothing committed, is removed.
 *
 * KEYS: one per rate op (its TAT), then three per cap op (spent, :r, :d).
 * ARGV: now ms, member, deadline ms, #rate ops, #cap ops,
 *   per rate op: emission interval µs, burst, give, want, need;
 *   per cap op: limit µUSD, TTL (s: the period's remaining time plus a day), used, committed, want, need.
 * Returns per rate op: granted, remaining, reset ms, retry ms; per cap op: held, spent, leased total,
 * refused (0/1); then crossings: cap index, level, spent, ...
 */
export const LEASE_LUA = `${SHARED}
local now, member, deadline = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local nr, nc = tonumber(ARGV[4]), tonumber(ARGV[5])
local a = 6
local out = {}
if nr > 0 then
  local t = redis.call('TIME')
  local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
  for i = 1, nr do
    local T, burst, give, want, need = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
    a = a + 5
    local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
    if tat < nowUs then tat = nowUs end
    tat = tat - give * T
    if tat < nowUs then tat = nowUs end
    local tolerance = T * burst
    local avail = math.floor((nowUs - tat + tolerance) / T)
    local granted, retry = 0, 0
    if need > 0 then
      if avail >= need then
        granted = math.min(avail, math.max(need, math.min(want, math.floor(avail / 4))))
      else
        retry = math.ceil((tat + need * T - tolerance - nowUs) / 1000)
      end
    end
    tat = tat + granted * T
    if tat <= nowUs then redis.call('DEL', KEYS[i])
    else redis.call('SET', KEYS[i], string.format('%.0f', tat), 'PX', math.max(1, math.ceil((tat - nowUs) / 1000))) end
    table.insert(out, granted)
    table.insert(out, math.max(0, avail - granted))
    table.insert(out, math.ceil((tat - nowUs) / 1000))
    table.insert(out, retry)
  end
end
local crossings = {}
for c = 0, nc - 1 do
  local k, r, d = KEYS[nr + c * 3 + 1], KEYS[nr + c * 3 + 2], KEYS[nr + c * 3 + 3]
  local limit, ttl, used, committed, want, need = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
  a = a + 6
  expire(k, r, d, now)
  local before = redis.call('HGET', r, member)
  local held = tonumber(before or '0')
  local spent = tonumber(redis.call('GET', k) or '0')
  if used > 0 then
    local prepaid = tonumber(redis.call('HGET', r, 'x:' .. member) or '0')
    local absorbed = math.min(used, prepaid)
    if absorbed > 0 then
      if absorbed == prepaid then redis.call('HDEL', r, 'x:' .. member)
      else redis.call('HINCRBY', r, 'x:' .. member, -absorbed) end
    end
    if used > absorbed then spent = redis.call('INCRBY', k, used - absorbed) end
    held = math.max(0, held - used)
  end
  crossed(r, spent, limit, crossings, c)
  local others = tonumber(redis.call('HGET', r, '_sum') or '0') - tonumber(before or '0')
  local holders = tonumber(redis.call('HGET', r, '_h') or '0')
  if not before then holders = holders + 1 end
  local free = limit - spent - others - committed
  local share = math.max(0, math.floor(free / (2 * holders)))
  local target, refused = math.max(held, committed), 0
  if need > 0 then
    if free > 0 then target = committed + math.max(need, math.min(want, share))
    else target, refused = committed, 1 end
  elseif want >= 0 then
    target = committed + math.min(want, share)
  end
  if target > 0 or committed > 0 then
    redis.call('HSET', r, member, target, 'c:' .. member, committed)
    redis.call('ZADD', d, deadline, member)
    if not before then redis.call('HINCRBY', r, '_h', 1) end
  elseif before then
    redis.call('HDEL', r, member, 'c:' .. member)
    redis.call('ZREM', d, member)
    redis.call('HINCRBY', r, '_h', -1)
  end
  local total = redis.call('HINCRBY', r, '_sum', target - tonumber(before or '0'))
  redis.call('EXPIRE', k, ttl) redis.call('EXPIRE', r, ttl) redis.call('EXPIRE', d, ttl)
  table.insert(out, target)
  table.insert(out, spent)
  table.insert(out, total)
  table.insert(out, refused)
end
for _, v in ipairs(crossings) do table.insert(out, v) end
return out
`;
