import { createHash, randomBytes } from 'node:crypto';
import { defineScript, replies, type Script } from '#contract';
import type { StateClient } from '../state/connect.ts';
import { ASYNC_KEYS } from './keys.ts';

/** Who a ws_token lets in: one channel of one project. */
export interface TokenGrant {
  projectId: string;
  channelId: string;
}

export type ClaimResult =
  | { ok: true; grant: TokenGrant }
  | { ok: false; reason: 'invalid_token' | 'token_already_used' };

/**
 * ws_tokens are single-use: a socket that connects with one holds it (`held`), a second socket
 * with the same token is refused, and once the result was delivered it is `spent`. A socket that
 * goes away before its result (a pod draining with 1012, a dropped network) gives the token back
 * (`release`), so the phoenix client's automatic reconnect, which resends the same token, works.
 */
export interface TokenStore {
  issue(grant: TokenGrant, ttlMs: number): Promise<string>;
  claim(token: string): Promise<ClaimResult>;
  release(token: string): Promise<void>;
  spend(token: string): Promise<void>;
}

export const newToken = (): string => `wst_${randomBytes(24).toString('base64url')}`;
const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');

interface Held {
  state: 'fresh' | 'held' | 'spent';
  grant: TokenGrant;
  expiresAt: number;
}

export class MemoryTokenStore implements TokenStore {
  readonly #items = new Map<string, Held>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  async issue(grant: TokenGrant, ttlMs: number): Promise<string> {
    const token = newToken();
    const now = this.#now();
    if (this.#items.size % 1024 === 0)
      for (const [k, v] of this.#items) if (v.expiresAt <= now) this.#items.delete(k);
    this.#items.set(hashOf(token), { state: 'fresh', grant, expiresAt: now + ttlMs });
    return token;
  }

  async claim(token: string): Promise<ClaimResult> {
    const it = this.#items.get(hashOf(token));
    if (!it || it.expiresAt <= this.#now()) return { ok: false, reason: 'invalid_token' };
    if (it.state !== 'fresh') return { ok: false, reason: 'token_already_used' };
    it.state = 'held';
    return { ok: true, grant: it.grant };
  }

  async release(token: string): Promise<void> {
    const it = this.#items.get(hashOf(token));
    if (it?.state === 'held') it.state = 'fresh';
  }

  async spend(token: string): Promise<void> {
    const it = this.#items.get(hashOf(token));
    if (it) it.state = 'spent';
  }
}

/** fresh → held, atomically; a missing key is an unknown or expired token. */
const CLAIM = `
local s = redis.call('HGET', KEYS[1], 'state')
if not s then return {0, 'invalid_token'} end
if s ~= 'fresh' then return {0, 'token_already_used'} end
redis.call('HSET', KEYS[1], 'state', 'held')
return {1, redis.call('HGET', KEYS[1], 'grant')}
`;
const RELEASE = `
if redis.call('HGET', KEYS[1], 'state') == 'held' then redis.call('HSET', KEYS[1], 'state', 'fresh') end
return 1
`;

/** Marks a token spent; HSET on an expired (missing) key would recreate it without a TTL. */
const SPEND =
  "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'state', 'spent') end return 1";

export class RedisTokenStore implements TokenStore {
  readonly #redis: StateClient;
  readonly #claim: Script<[number, string]>;
  readonly #release: Script<number>;
  readonly #spend: Script<number>;

  constructor(redis: StateClient) {
    this.#redis = redis;
    this.#claim = defineScript(redis, 'switchyardTokenClaim', CLAIM, replies.flagged);
    this.#release = defineScript(redis, 'switchyardTokenRelease', RELEASE, replies.integer);
    this.#spend = defineScript(redis, 'switchyardTokenSpend', SPEND, replies.integer);
  }

  async issue(grant: TokenGrant, ttlMs: number): Promise<string> {
    const token = newToken();
    const key = ASYNC_KEYS.token(hashOf(token));
    await this.#redis
      .multi()
      .hset(key, 'state', 'fresh', 'grant', JSON.stringify(grant))
      .pexpire(key, ttlMs)
      .exec();
    return token;
  }

  async claim(token: string): Promise<ClaimResult> {
    const [ok, v] = await this.#claim([ASYNC_KEYS.token(hashOf(token))], []);
    if (ok === 1) return { ok: true, grant: JSON.parse(v) as TokenGrant };
    return { ok: false, reason: v === 'token_already_used' ? 'token_already_used' : 'invalid_token' };
  }

  async release(token: string): Promise<void> {
    await this.#release([ASYNC_KEYS.token(hashOf(token))], []);
  }

  async spend(token: string): Promise<void> {
    await this.#spend([ASYNC_KEYS.token(hashOf(token))], []);
  }
}
