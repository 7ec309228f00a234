import { defineScript, replies, type Script } from '#contract';
import type { StateClient } from '../state/connect.ts';

/**
 * The session scripts. Each runs atomically on the node of the project's slot: KEYS are always
 * meta, turns, index of one session (one hash tag). Every touch restarts the idle timer of both
 * keys and the session's score in the index.
 */

const TOUCH = `
local function touch(now, ttl, sid)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('ZADD', KEYS[3], now + ttl, sid)
  if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
end
`;

/** ARGV: now, ttlMs, sessionId, workflow. */
const CREATE = `${TOUCH}
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('DEL', KEYS[2])
-- Expired ids leave the project's index here too, not only when the gauge is scraped.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('HSET', KEYS[1], 'w', ARGV[4], 'c', ARGV[1], 's', '', 'v', 0, 'st', 0, 'f', 0)
touch(now, ttl, ARGV[3])
return 1
`;

/** ARGV: now, ttlMs, sessionId. Returns false, or {meta field/value list, turns}. */
const LOAD = `${TOUCH}
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
touch(tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}
`;

/** No ARGV, no touch. Returns false, or {meta field/value list, turns, PTTL of meta}. */
const PEEK = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1), redis.call('PTTL', KEYS[1])}
`;

/** ARGV: now, ttlMs, sessionId, turn JSON... Returns 0 when the session is gone (never resurrected half-empty). */
const APPEND = `${TOUCH}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], unpack(ARGV, 4))
touch(tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
return 1
`;

/**
 * ARGV: now, ttlMs, sessionId, expectedVersion, start, end, summary, summaryTokens (start/end 0-based,
 * end exclusive). Returns -1 gone, 0 stale (another fold won), else the new version. Turns appended
 * while the summary was being written sit after \`end\` and are kept.
 */
const FOLD = `${TOUCH}
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local v = tonumber(redis.call('HGET', KEYS[1], 'v'))
if v ~= tonumber(ARGV[4]) then return 0 end
local s, e = tonumber(ARGV[5]), tonumber(ARGV[6])
local all = redis.call('LRANGE', KEYS[2], 0, -1)
local keep = {}
for i = 1, s do keep[#keep + 1] = all[i] end
for i = e + 1, #all do keep[#keep + 1] = all[i] end
redis.call('DEL', KEYS[2])
for i = 1, #keep, 500 do
  redis.call('RPUSH', KEYS[2], unpack(keep, i, math.min(i + 499, #keep)))
end
redis.call('HSET', KEYS[1], 's', ARGV[7], 'v', v + 1, 'st', ARGV[8])
redis.call('HINCRBY', KEYS[1], 'f', e - s)
touch(tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
return v + 1
`;

/** Meta, turns and index keys of one session. */
type SessionKeys = [string, string, string];
type SessionScript<R> = (keys: SessionKeys, ...args: Array<string | number>) => Promise<R>;

export interface SessionScripts {
  create: SessionScript<number>;
  load: SessionScript<[string[], string[]] | null>;
  peek: SessionScript<[string[], string[], number] | null>;
  append: SessionScript<number>;
  fold: SessionScript<number>;
}

const strings = replies.strings;
/** LOAD's reply: nil, or {meta field/value list, turns}. */
const loaded = (r: unknown): [string[], string[]] | null | undefined => {
  if (r === null) return null;
  if (!Array.isArray(r) || r.length !== 2) return undefined;
  const [meta, turns] = [strings(r[0]), strings(r[1])];
  return meta && turns ? [meta, turns] : undefined;
};
/** PEEK's reply: nil, or {meta field/value list, turns, PTTL}. */
const peeked = (r: unknown): [string[], string[], number] | null | undefined => {
  if (r === null) return null;
  if (!Array.isArray(r) || r.length !== 3 || typeof r[2] !== 'number') return undefined;
  const [meta, turns] = [strings(r[0]), strings(r[1])];
  return meta && turns ? [meta, turns, r[2]] : undefined;
};

/** Registers the scripts on the shared client (defineScript: EVALSHA, and EVAL once after NOSCRIPT). */
export function defineSessionScripts(client: StateClient): SessionScripts {
  const bind =
    <R>(script: Script<R>): SessionScript<R> =>
    (keys, ...args) =>
      script(keys, args);
  return {
    create: bind(defineScript(client, 'switchyardSessionCreate', CREATE, replies.integer)),
    load: bind(defineScript(client, 'switchyardSessionLoad', LOAD, loaded)),
    peek: bind(defineScript(client, 'switchyardSessionPeek', PEEK, peeked)),
    append: bind(defineScript(client, 'switchyardSessionAppend', APPEND, replies.integer)),
    fold: bind(defineScript(client, 'switchyardSessionFold', FOLD, replies.integer)),
  };
}
