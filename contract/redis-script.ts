import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection.ts';

/** A Lua script's reply was not the shape the script returns (a script and its caller out of step). */
export class ScriptReplyError extends Error {
  readonly code = 'SCRIPT_REPLY';
  constructor(script: string, reply: unknown) {
    super(`script ${script} replied ${JSON.stringify(reply)?.slice(0, 200)}`);
    this.name = 'ScriptReplyError';
  }
}

/** A Lua script bound to a client: its keys and arguments in, its reply decoded out. */
export type Script<R> = (keys: readonly string[], args: readonly (string | number)[]) => Promise<R>;

/** Turns a raw reply into the script's result, or returns undefined when it is not that shape. */
export type ReplyDecoder<R> = (reply: unknown) => R | undefined;

const isNoScript = (err: unknown): boolean => err instanceof Error && err.message.startsWith('NOSCRIPT');

/**
 * Every Lua script of the project is defined through here: called with its keys (every key of one
 * call shares a hash tag, so it runs on one node of a cluster) and its arguments, its reply checked
 * by `decode` instead of cast.
 *
 * Calls go out as EVALSHA through `call`, so ioredis reads the first key where EVALSHA keeps it and
 * auto-pipelining on a cluster sends the call to that key's node (a script defined with a variable
 * key count would be routed by its leading count instead). A Redis that does not know the script
 * (a restart, a new node) answers NOSCRIPT once, and the call is sent again as EVAL, which loads it.
 */
export function defineScript<R>(
  client: RedisClient,
  name: string,
  lua: string,
  decode: ReplyDecoder<R>,
): Script<R> {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (keys, args) => {
    let reply: unknown;
    try {
      reply = await client.call('evalsha', sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      reply = await client.call('eval', lua, keys.length, ...keys, ...args);
    }
    const out = decode(reply);
    if (out === undefined) throw new ScriptReplyError(name, reply);
    return out;
  };
}

/** Decoders for the reply shapes the scripts use. */
export const replies = {
  integer: (r: unknown): number | undefined => (typeof r === 'number' ? r : undefined),
  integers: (r: unknown): number[] | undefined =>
    Array.isArray(r) && r.every((v) => typeof v === 'number') ? (r as number[]) : undefined,
  /** A string, or null for Redis nil (so the caller tells "absent" from a bad reply). */
  stringOrNil: (r: unknown): string | null | undefined =>
    r === null ? null : typeof r === 'string' ? r : undefined,
  /** `{integer, string}`: a flag and a value, as the state-transition scripts return. */
  flagged: (r: unknown): [number, string] | undefined =>
    Array.isArray(r) && r.length === 2 && typeof r[0] === 'number' && typeof r[1] === 'string'
      ? [r[0], r[1]]
      : undefined,
  strings: (r: unknown): string[] | undefined =>
    Array.isArray(r) && r.every((v) => typeof v === 'string') ? (r as string[]) : undefined,
};
