import { defineScript, type Script } from '#contract';
import type { StateClient } from '../connect.ts';
import { LOG_FIELD } from '../keys.ts';

/**
 * One project's writes of one flush window, one EVALSHA: append the log entries to the project's
 * capped stream and add the usage counters to each hour's hash, in one round trip and one atomic
 * step (a retry after a failed call never finds part of it applied). A part Redis refuses (a key of
 * the wrong type) is reported back instead of aborting the other part; a full Redis (OOM) before
 * anything was written fails the call, so the caller buffers and retries it rather than dropping it.
 *
 * Exactly once: each batch carries its writer's batch id, recorded in the writer's applied hash in
 * the same step as the writes. A batch sent again because its reply was lost (Redis restarted, the
 * connection cut) finds its id there and writes nothing. The writer acknowledges the ids whose
 * replies it saw with its next batch, so the hash holds only the few whose fate it does not know.
 *
 * KEYS[1] log stream, KEYS[2] the writer's applied hash, KEYS[3..] usage hashes (same hash tag, so
 * one slot on a cluster).
 * ARGV[1] log cap, ARGV[2] number of entries, ARGV[3] batch id, ARGV[4] applied-hash TTL seconds,
 * ARGV[5] number of acknowledged ids, the ids, the entries' JSON; then per usage hash: TTL seconds,
 * number of fields, field, increment, field, increment, ...
 * Returns {log error or '', usage error or '', 1 when the batch had been applied before else 0}.
 */
const WRITE_LUA = `
local logErr, usageErr, wrote = '', '', false
local function full(err) return not wrote and string.sub(err, 1, 3) == 'OOM' end
local acks = tonumber(ARGV[5])
if acks > 0 then redis.pcall('HDEL', KEYS[2], unpack(ARGV, 6, 5 + acks)) end
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1 then return {'', '', 1} end
local n = tonumber(ARGV[2])
local first = 6 + acks
for i = first, first + n - 1 do
  local r = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', '${LOG_FIELD}', ARGV[i])
  if type(r) == 'table' and r.err then
    if full(r.err) then return redis.error_reply(r.err) end
    logErr = r.err
    break
  end
  wrote = true
end
local a = first + n
for k = 3, #KEYS do
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
if wrote then
  redis.pcall('HSET', KEYS[2], ARGV[3], 1)
  redis.pcall('EXPIRE', KEYS[2], ARGV[4])
end
return {logErr, usageErr, 0}
`;

/** `{log error or '', usage error or '', applied before}`. */
export type WriteReply = [logErr: string, usageErr: string, duplicate: boolean];

const reply = (r: unknown): WriteReply | undefined =>
  Array.isArray(r) &&
  r.length === 3 &&
  typeof r[0] === 'string' &&
  typeof r[1] === 'string' &&
  (r[2] === 0 || r[2] === 1)
    ? [r[0], r[1], r[2] === 1]
    : undefined;

export function defineWrite(client: StateClient): Script<WriteReply> {
  return defineScript(client, 'switchyardStateWrite', WRITE_LUA, reply);
}
