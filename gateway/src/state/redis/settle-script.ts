import { defineScript, type Script } from '#contract';
import type { StateClient } from '../connect.ts';
import { LOG_FIELD } from '../keys.ts';

/**
 * One settlement, one EVALSHA: append the log entry to the project's capped stream and add the usage
 * counters to the hour's hash, in one round trip and one atomic step (a retry after a failed call
 * never finds half of it applied). A part Redis refuses (a key of the wrong type) is reported back
 * instead of aborting the other part; a full Redis (OOM) before anything was written fails the call,
 * so the caller buffers and retries it rather than dropping it.
 *
 * KEYS[1] log stream, KEYS[2] usage hash (same hash tag, so one slot on a cluster).
 * ARGV[1] log cap, '' for no log; ARGV[2] entry JSON; ARGV[3] usage TTL seconds, '' for no usage;
 * ARGV[4..] usage field, increment, field, increment, ...
 * Returns {log error or '', usage error or ''}.
 */
const SETTLE_LUA = `
local logErr, usageErr, wrote = '', '', false
local function full(err) return not wrote and string.sub(err, 1, 3) == 'OOM' end
if ARGV[1] ~= '' then
  local r = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', '${LOG_FIELD}', ARGV[2])
  if type(r) == 'table' and r.err then
    if full(r.err) then return redis.error_reply(r.err) end
    logErr = r.err
  else
    wrote = true
  end
end
if ARGV[3] ~= '' then
  for i = 4, #ARGV, 2 do
    local r = redis.pcall('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
    if type(r) == 'table' and r.err then
      if full(r.err) then return redis.error_reply(r.err) end
      usageErr = r.err
      break
    end
    wrote = true
  end
  if usageErr == '' then redis.call('EXPIRE', KEYS[2], ARGV[3]) end
end
return {logErr, usageErr}
`;

const COMMAND = 'switchyardSettle';

/** `{log error or '', usage error or ''}`. */
const errors = (r: unknown): [string, string] | undefined =>
  Array.isArray(r) && r.length === 2 && typeof r[0] === 'string' && typeof r[1] === 'string'
    ? [r[0], r[1]]
    : undefined;

/** Registers the script on the client (defineScript: EVALSHA, and EVAL once after NOSCRIPT). */
export function defineSettle(client: StateClient): Script<[string, string]> {
  return defineScript(client, COMMAND, SETTLE_LUA, errors);
}
