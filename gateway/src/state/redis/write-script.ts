import { defineScript, type Script } from '#contract';
import type { StateClient } from '../connect.ts';
import { LOG_FIELD } from '../keys.ts';

/**
 * One project's writes of one event-loop turn, one EVALSHA: append the log entries to the project's
 * capped stream and add the usage counters to each hour's hash, in one round trip and one atomic
 * step (a retry after a failed call never finds part of it applied). A part Redis refuses (a key of
 * the wrong type) is reported back instead of aborting the other part; a full Redis (OOM) before
 * anything was written fails the call, so the caller buffers and retries it rather than dropping it.
 *
 * KEYS[1] log stream, KEYS[2..] usage hashes (same hash tag, so one slot on a cluster).
 * ARGV[1] log cap, ARGV[2] number of entries, the entries' JSON; then per usage hash: TTL seconds,
 * number of fields, field, increment, field, increment, ...
 * Returns {log error or '', usage error or ''}.
 */
const WRITE_LUA = `
local logErr, usageErr, wrote = '', '', false
local function full(err) return not wrote and string.sub(err, 1, 3) == 'OOM' end
local n = tonumber(ARGV[2])
for i = 3, n + 2 do
  local r = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', '${LOG_FIELD}', ARGV[i])
  if type(r) == 'table' and r.err then
    if full(r.err) then return redis.error_reply(r.err) end
    logErr = r.err
    break
  end
  wrote = true
end
local a = n + 3
for k = 2, #KEYS do
  local ttl, fields = ARGV[a], tonumber(ARGV[a + 1])
  a = a + 2
  local failed = false
  for f = 1, fields do
    if not failed then
      local r = redis.pcall('HINCRBY', KEYS[k], ARGV[a], ARGV[a + 1])
      if type(r) == 'table' and r.err then
        if full(r.err) then return redis.error_reply(r.err) end
        usageErr, failed = r.err, true
      else
        wrote = true
      end
    end
    a = a + 2
  end
  if not failed then redis.call('EXPIRE', KEYS[k], ttl) end
end
return {logErr, usageErr}
`;

/** `{log error or '', usage error or ''}`. */
const errors = (r: unknown): [string, string] | undefined =>
  Array.isArray(r) && r.length === 2 && typeof r[0] === 'string' && typeof r[1] === 'string'
    ? [r[0], r[1]]
    : undefined;

export function defineWrite(client: StateClient): Script<[string, string]> {
  return defineScript(client, 'switchyardStateWrite', WRITE_LUA, errors);
}
